"""README's "The cluster" shows what the commands print: its example outputs are produced
here by the same commands, on the fake GEX44 (one RTX 4000 SFF Ada) and the ConfigMap it
checks."""

from __future__ import annotations

from pathlib import Path

import fakemachine
import fakesys
import helpers
import pytest
import yaml

README = Path(__file__).resolve().parents[2] / "README.md"
CHECKED = ("version: v1\nsharing:\n  timeSlicing:\n    FailRequestsGreaterThanOne: true\n"
           "    resources:\n    - name: nvidia.com/gpu\n      replicas: 8\n")


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    return text[text.index("## The cluster\n"):text.index("## The library\n")]


def _shown(command: str) -> list[str]:
    """The ``# ...`` lines the README shows under the line that runs ``command``."""
    lines = _section().splitlines()
    i = next(n for n, line in enumerate(lines) if command in line)
    while lines[i].endswith("\\"):
        i += 1
    out = []
    for line in lines[i + 1:]:
        if not line.startswith("# "):
            break
        out.append(line[2:])
    return out


@pytest.fixture(scope="module")
def gex44(tmp_path_factory):
    return fakemachine.write_machine(tmp_path_factory.mktemp("readme") / "gex44", fakesys.gex44())


def test_the_patches_shown_are_printed(gex44):
    patch = helpers.run("labels", "--patch", "--node", "gex44-1", "--root", gex44)
    assert _shown('gpuclass labels --patch --node gex44-1') == [patch.stdout.strip()]
    host = helpers.run("labels", "--host-patch", "--host", "bm-gex44-1", "--root", gex44)
    assert _shown("kubectl patch hetznerbaremetalhost bm-gex44-1") == [host.stdout.strip()]
    nfd = helpers.run("labels", "--nfd", "--root", gex44).stdout.splitlines()
    assert _shown("gpuclass labels --nfd >")[-1] == nfd[-1] == "autopilot.syself.com/gpu=true"


def test_the_check_shown_is_printed():
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "nvidia-device-plugin-config", "namespace": "nvidia-device-plugin"},
          "data": {"default": CHECKED}}
    proc = helpers.run("labels", "--check", "-", stdin=yaml.safe_dump(cm))
    assert proc.returncode == 1
    assert _shown("| gpuclass labels --check -") == proc.stdout.splitlines()


def test_the_helm_values_name_the_default_key():
    from gpuclass.k8s.labels import DEFAULT_CONFIG_KEY, device_plugin_configmap

    values = yaml.safe_load(_section().split("```yaml\n")[1].split("```")[0])
    cm = device_plugin_configmap()
    assert values["config"] == {"name": cm["metadata"]["name"], "default": DEFAULT_CONFIG_KEY}
    assert DEFAULT_CONFIG_KEY in cm["data"]
    assert f"--set config.default={DEFAULT_CONFIG_KEY}" in _section()

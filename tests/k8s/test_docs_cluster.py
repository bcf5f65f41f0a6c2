"""The Kubernetes guide (docs/guides/kubernetes.md) shows what the commands print: its
example outputs are produced here by the same commands, on the shipped example machine
(examples/gpu-server: two RTX 6000 Ada) and the device plugin config it checks."""

from __future__ import annotations

from pathlib import Path

import helpers
import yaml

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "guides" / "kubernetes.md"
MACHINE = ROOT / "examples" / "gpu-server"


def _page() -> str:
    return PAGE.read_text(encoding="utf-8")


def _shown(command: str) -> list[str]:
    """The output the page shows under the ``$ ...`` line that runs ``command``."""
    lines = _page().splitlines()
    i = next(n for n, line in enumerate(lines) if line.startswith("$ ") and command in line)
    out = []
    for line in lines[i + 1:]:
        if line.startswith("```"):
            break
        out.append(line)
    return out


def test_the_patches_shown_are_printed():
    patch = helpers.run_in_process("labels", "--patch", "--node", "gex130-1", "--root", MACHINE)
    assert _shown("gpuclass labels --patch --node gex130-1") == [patch.stdout.strip()]
    host = helpers.run_in_process("labels", "--host-patch", "--host", "bm-gex130-1", "--root", MACHINE)
    assert _shown("gpuclass labels --host-patch --host bm-gex130-1") == [host.stdout.strip()]
    nfd = helpers.run_in_process("labels", "--nfd", "--root", MACHINE).stdout.splitlines()
    shown = _shown("gpuclass labels --nfd")
    assert shown[-1] == nfd[-1] == "autopilot.syself.com/gpu=true"
    for line, printed in zip(shown[:-1], nfd):
        assert printed.startswith(line.removesuffix("..."))


def test_the_check_shown_is_printed():
    cm = ROOT / "examples" / "device-plugin-config.yaml"
    proc = helpers.run_in_process("labels", "--check", cm)
    assert proc.returncode == 1
    shown = _shown("gpuclass labels --check examples/device-plugin-config.yaml")
    assert shown == [line.replace(str(cm), "examples/device-plugin-config.yaml")
                     for line in proc.stdout.splitlines()]


def test_the_helm_values_name_the_default_key():
    from gpuclass.k8s.labels import DEFAULT_CONFIG_KEY, device_plugin_configmap

    values = yaml.safe_load(_page().split("```yaml\n")[1].split("```")[0])
    cm = device_plugin_configmap()
    assert values["config"] == {"name": cm["metadata"]["name"], "default": DEFAULT_CONFIG_KEY}
    assert DEFAULT_CONFIG_KEY in cm["data"]
    assert f"--set config.default={DEFAULT_CONFIG_KEY}" in _page()

"""``check_device_plugin_config`` and ``gpuclass labels --check`` on the plugin's own config
files and ConfigMaps: every way the plugin's lenient reading hides a mistake is one finding.

The configs are written as the plugin's documentation writes them (``version: v1``,
``sharing.timeSlicing`` with ``resources`` of ``name`` and ``replicas``); the expectations
follow the plugin's reader (api/config/v1: encoding/json for the outer keys,
case-insensitive; its own exact-case lookups inside ``timeSlicing``).
"""

from __future__ import annotations

import json

import helpers
import pytest
import yaml

from gpuclass.errors import ManifestError
from gpuclass.k8s.labels import device_plugin_configmap
from gpuclass.k8s.plugin_config import check_device_plugin_config
from gpuclass.policy import Policy

GOOD = """\
version: v1
flags:
  migStrategy: none
sharing:
  timeSlicing:
    renameByDefault: false
    failRequestsGreaterThanOne: true
    resources:
    - name: nvidia.com/gpu
      replicas: 4
"""


def codes(config, **kw):
    return [(f.path, f.code) for f in check_device_plugin_config(config, **kw)]


def test_the_generated_configs_are_clean():
    assert codes(GOOD) == []
    assert codes(device_plugin_configmap()) == []
    policy = Policy.from_data({"cards": [
        {"id": "a", "name": "A", "family": "ada-lovelace", "kernel_module": "open", "slices": 8,
         "match": [{"vendor": "10de", "device": "27b0"}]},
        {"id": "b", "name": "B", "family": "ada-lovelace", "kernel_module": "open",
         "match": [{"vendor": "10de", "device": "26b1"}]}]})
    cm = device_plugin_configmap(policy)
    assert list(cm["data"]) == ["default", "replicas-8"]
    assert codes(cm, policy=policy) == []
    # ... and the same ConfigMap checked against the platform's policy: replicas-8 is fine
    # (no card of it selects the key), nothing else changes
    assert codes(cm) == []


@pytest.mark.parametrize("text, expected", [
    # a typo in the flag that turns the one-slice limit on: the plugin drops it
    (GOOD.replace("failRequestsGreaterThanOne", "failRequestGreaterThanOne"),
     [("sharing.timeSlicing.failRequestGreaterThanOne", "unknown-key")]),
    # matched by exact case inside timeSlicing
    (GOOD.replace("failRequestsGreaterThanOne", "FailRequestsGreaterThanOne"),
     [("sharing.timeSlicing.FailRequestsGreaterThanOne", "miscased-key")]),
    (GOOD.replace("replicas: 4", "Replicas: 4"),
     [("sharing.timeSlicing.resources[0].Replicas", "miscased-key")]),
    # a misspelled section: no time-slicing at all, said once
    (GOOD.replace("sharing:", "sharng:"), [("sharng", "unknown-key")]),
    # outer keys go through encoding/json, which ignores case: the plugin reads these
    (GOOD.replace("sharing:", "Sharing:").replace("timeSlicing:", "TimeSlicing:"), []),
    (GOOD.replace("    failRequestsGreaterThanOne: true\n", ""),
     [("sharing.timeSlicing.failRequestsGreaterThanOne", "fail-requests")]),
    (GOOD.replace("failRequestsGreaterThanOne: true", "failRequestsGreaterThanOne: false"),
     [("sharing.timeSlicing.failRequestsGreaterThanOne", "fail-requests")]),
    (GOOD.replace("failRequestsGreaterThanOne: true", 'failRequestsGreaterThanOne: "true"'),
     [("sharing.timeSlicing.failRequestsGreaterThanOne", "type")]),
    (GOOD.replace("version: v1", "version: v2"), [("version", "version")]),
    (GOOD.replace("replicas: 4", "replicas: 1"), [("sharing.timeSlicing.resources[0].replicas", "replicas")]),
    (GOOD.replace("replicas: 4", "replicas: 8"), [("sharing.timeSlicing.resources[0].replicas", "replicas")]),
    (GOOD.replace("renameByDefault: false", "renameByDefault: true"),
     [("sharing.timeSlicing.renameByDefault", "rename-by-default")]),
    # "gpu" is the plugin's short name of nvidia.com/gpu
    (GOOD.replace("name: nvidia.com/gpu", "name: gpu"), []),
    (GOOD.replace("name: nvidia.com/gpu", "name: nvidia.com/gpus"),
     [("sharing.timeSlicing.resources[0].name", "resource-name"),
      ("sharing.timeSlicing.resources", "resource-name")]),
    (GOOD.replace("      replicas: 4\n", "      replicas: 4\n      devices: [0]\n"),
     [("sharing.timeSlicing.resources[0].devices", "devices")]),
    (GOOD.replace("    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n", ""),
     [("sharing.timeSlicing.resources", "no-resources")]),
    ("version: v1\n", [("sharing", "no-time-slicing")]),
    (GOOD + "  mps:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n",
     [("sharing.mps", "mps")]),
    (GOOD.replace("migStrategy: none", "migStrategy: sometimes"), [("flags.migStrategy", "type")]),
])
def test_each_problem_is_one_finding(text, expected):
    assert codes(text) == expected


def test_the_policys_fail_flag_decides():
    lenient = Policy.loads('{"fail_requests_greater_than_one": false}', "json")
    assert codes(GOOD.replace("    failRequestsGreaterThanOne: true\n", ""), policy=lenient) == []
    assert codes(GOOD, policy=lenient) == [("sharing.timeSlicing.failRequestsGreaterThanOne",
                                            "fail-requests")]


def _cm(**data):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "nvidia-device-plugin-config", "namespace": "nvidia-device-plugin"},
            "data": data}


def test_a_configmap_of_several_configs_needs_its_default_key():
    several = _cm(**{"config.yaml": GOOD, "replicas-8": GOOD.replace("replicas: 4", "replicas: 8")})
    (finding,) = check_device_plugin_config(several)
    assert finding.code == "default-key" and "all fallbacks failed" in finding.message
    # the Helm chart's config.default names the key: fine
    assert codes(several, default_key="config.yaml") == []
    assert codes(several, default_key="default") == [("data", "default-key")]
    # one config: the "single" fallback takes it
    assert codes(_cm(**{"config.yaml": GOOD})) == []


def test_per_node_label_values_must_name_a_key():
    policy = Policy.from_data({"cards": [
        {"id": "a", "name": "A", "family": "ada-lovelace", "kernel_module": "open", "slices": 8,
         "match": [{"vendor": "10de", "device": "27b0"}]}]})
    (finding,) = check_device_plugin_config(_cm(default=GOOD), policy=policy)
    assert finding.code == "config-label" and "nvidia.com/device-plugin.config=replicas-8" in finding.message
    # a key is checked against the replicas of the nodes that select it
    assert codes(_cm(default=GOOD, **{"replicas-8": GOOD}), policy=policy) == [
        ("data[replicas-8].sharing.timeSlicing.resources[0].replicas", "replicas")]


def test_configmap_values_that_do_not_read_are_findings():
    assert codes(_cm(default="version: [v1\n")) == [("data[default]", "unreadable")]
    assert codes(_cm()) == [("data", "no-configs")]


def test_unreadable_input_is_a_manifest_error(tmp_path):
    with pytest.raises(ManifestError, match="malformed YAML"):
        check_device_plugin_config("version: [v1\n")
    with pytest.raises(ManifestError, match="expected one config or ConfigMap, found 2"):
        check_device_plugin_config(GOOD + "---\n" + GOOD)
    f = tmp_path / "config.yaml"
    f.write_text(GOOD.replace("sharing:", "sharng:"))
    assert codes(f) == [("sharng", "unknown-key")] == codes(str(f))


def test_the_check_command(tmp_path):
    f = tmp_path / "config.yaml"
    f.write_text(GOOD)
    assert helpers.run_in_process("labels", "--check", f).returncode == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text(GOOD.replace("failRequestsGreaterThanOne", "FailRequestsGreaterThanOne")
                   .replace("replicas: 4", "replicas: 8"))
    proc = helpers.run_in_process("labels", "--check", bad)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith(f"{bad}: sharing.timeSlicing.") for line in lines)
    doc = json.loads(helpers.run_in_process("labels", "--check", bad, "-o", "json").stdout)
    assert [f["code"] for f in doc["findings"]] == ["miscased-key", "replicas"] and not doc["ok"]
    # a ConfigMap from stdin, as kubectl prints it
    cm = yaml.safe_dump(_cm(**{"config.yaml": GOOD, "other": GOOD}))
    proc = helpers.run_in_process("labels", "--check", "-", stdin=cm)
    assert proc.returncode == 1 and "default-key" in proc.stdout
    assert helpers.run_in_process("labels", "--check", "-", "--default-key", "other", stdin=cm).returncode == 0
    missing = helpers.run_in_process("labels", "--check", tmp_path / "nope.yaml")
    assert missing.returncode == 3 and missing.stderr.startswith("gpuclass: error:")
    usage = helpers.run_in_process("labels", "--check", f, "--root", "/")
    assert usage.returncode == 2

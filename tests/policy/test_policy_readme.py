"""The policy file format the README documents: its example is a valid policy that does
what the text says."""

from __future__ import annotations

import re
from pathlib import Path

from gpuclass.k8s.labels import device_plugin_configmap
from gpuclass.policy import Policy

README = Path(__file__).resolve().parents[2] / "README.md"


def _example() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### The allowlist policy"):]
    return re.search(r"```yaml\n(.*?)```", section, re.S).group(1)


def test_the_readme_policy_example_validates_and_works():
    policy = Policy.loads(_example(), "yaml")
    assert policy.match(0x10DE, 0x1E30, 0x10DE, 0x12BA).card.id == "quadro-rtx-6000"
    denied = policy.match(0x10DE, 0x1E30, 0x10DE, 0x129E)
    assert denied.card is None and "another pool" in denied.rule.reason
    assert policy.match(0x10DE, 0x1E30) is None  # no device-wide rule: the subsystem decides
    # the card with its own slices gets a config of its own
    assert list(device_plugin_configmap(policy)["data"]) == ["default", "replicas-2"]


def test_the_readme_names_every_policy_field():
    section = README.read_text(encoding="utf-8").split("### The allowlist policy")[1]
    for field in Policy.model_fields:
        assert f"`{field}`" in section or f"`{field}[]`" in section, field

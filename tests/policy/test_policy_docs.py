"""The policy file format the docs document (docs/guides/policy.md): its example is a valid
policy that does what the text says, and examples/policy.yaml is that example."""

from __future__ import annotations

import re
from pathlib import Path

from gpuclass.k8s.labels import device_plugin_configmap
from gpuclass.policy import Policy

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "guides" / "policy.md"
EXAMPLE = ROOT / "examples" / "policy.yaml"


def _example() -> str:
    return re.search(r"```yaml\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S).group(1)


def test_the_documented_policy_example_validates_and_works():
    policy = Policy.loads(_example(), "yaml")
    assert policy.match(0x10DE, 0x1E30, 0x10DE, 0x12BA).card.id == "quadro-rtx-6000"
    denied = policy.match(0x10DE, 0x1E30, 0x10DE, 0x129E)
    assert denied.card is None and "another pool" in denied.rule.reason
    assert policy.match(0x10DE, 0x1E30) is None  # no device-wide rule: the subsystem decides
    # the card with its own slices gets a config of its own
    assert list(device_plugin_configmap(policy)["data"]) == ["default", "replicas-2"]


def test_the_shipped_example_policy_is_the_documented_one():
    text = EXAMPLE.read_text(encoding="utf-8")
    body = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#"))
    assert body == _example()
    assert Policy.load(EXAMPLE) == Policy.loads(_example(), "yaml")


def test_the_docs_name_every_policy_field():
    section = PAGE.read_text(encoding="utf-8")
    for field in Policy.model_fields:
        assert f"`{field}`" in section or f"`{field}[]`" in section, field

"""The device plugin's config follows the policy in use, and what the plugin would advertise
with it is what the controller expects.

``plugin_capacity`` reads a config the way NVIDIA/k8s-device-plugin does
(api/config/v1: ``version`` must be v1; timeSlicing needs ``resources``, each with a
``name`` and ``replicas`` >= 2, ``devices`` defaulting to all; ``renameByDefault`` renames
each resource to ``<name>.shared``) and returns what a node with ``cards`` GPUs advertises.
"""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from k8s_samples import model

from gpuclass.constants import DEVICE_PLUGIN_CONFIG_LABEL, GPU_LABEL
from gpuclass.errors import PolicyError
from gpuclass.k8s.labels import (DEFAULT_CONFIG_KEY, device_plugin_config, device_plugin_configmap,
                                 expected_resources, node_labels)
from gpuclass.k8s.pods import validate_pod
from gpuclass.policy import Policy
from gpuclass.provisioner import HardwareReport, plan


def plugin_capacity(text: str, cards: int) -> dict[str, str]:
    cfg = yaml.safe_load(text)
    assert cfg.get("version", "v1") == "v1", "unknown version"
    assert set(cfg) <= {"version", "flags", "resources", "sharing"}
    ts = cfg["sharing"]["timeSlicing"]
    assert set(ts) <= {"renameByDefault", "failRequestsGreaterThanOne", "resources"}
    assert ts["resources"], "no resources specified"
    out = {}
    for r in ts["resources"]:
        assert set(r) <= {"name", "rename", "devices", "replicas"}
        assert r["replicas"] >= 2, "number of replicas must be >= 2"
        assert r.get("devices", "all") == "all"
        name = r.get("rename") or (f"{r['name']}.shared" if ts.get("renameByDefault") else r["name"])
        out[name] = str(cards * r["replicas"])
    return out


def test_default_config_is_the_platforms():
    ts = device_plugin_config()["sharing"]["timeSlicing"]
    assert ts == {"renameByDefault": False, "failRequestsGreaterThanOne": True,
                  "resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}


def test_config_takes_replicas_and_fail_flag_from_the_policy():
    policy = Policy.loads('{"slices_per_card": 8, "fail_requests_greater_than_one": false}', "json")
    ts = device_plugin_config(policy)["sharing"]["timeSlicing"]
    assert ts["resources"] == [{"name": "nvidia.com/gpu", "replicas": 8}]
    assert ts["failRequestsGreaterThanOne"] is False
    cm = device_plugin_configmap(policy)
    assert yaml.safe_load(cm["data"][DEFAULT_CONFIG_KEY]) == device_plugin_config(policy)
    # and validate-pod follows the same flag: 2 slices in a container are allowed, with a warning
    pod = {"kind": "Pod", "spec": {"containers": [{"name": "a", "resources": {"limits": {
        "nvidia.com/gpu": 2}}}]}}
    assert not validate_pod(pod).valid
    v = validate_pod(pod, policy=policy)
    assert v.valid and any("failRequestsGreaterThanOne: false" in w for w in v.warnings)
    assert "up to 8 pods share the card's memory" in v.warnings[0]


def test_the_configmap_is_a_client_configmap():
    m = model(device_plugin_configmap(), "V1ConfigMap")
    assert m.metadata.name == "nvidia-device-plugin-config" and list(m.data) == [DEFAULT_CONFIG_KEY]


def _policy(slices_per_card, fail, per_card):
    cards = []
    for i, slices in enumerate(per_card):
        card = {"id": f"card-{i}", "name": f"Card {i}", "family": "ada-lovelace",
                "kernel_module": "open", "match": [{"vendor": "10de", "device": f"{0x2700 + i:04x}"}]}
        if slices is not None:
            card["slices"] = slices
        cards.append(card)
    return Policy.from_data({"slices_per_card": slices_per_card,
                             "fail_requests_greater_than_one": fail, "cards": cards})


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 16), st.booleans(),
       st.lists(st.one_of(st.none(), st.integers(2, 16)), min_size=1, max_size=4),
       st.integers(1, 4))
def test_configmap_and_expected_capacity_always_agree(slices_per_card, fail, per_card, count):
    policy = _policy(slices_per_card, fail, per_card)
    cm = device_plugin_configmap(policy)
    for card in policy.cards:
        report = HardwareReport.example(card.id, count, policy=policy)
        labels = node_labels(report)
        key = labels.get(DEVICE_PLUGIN_CONFIG_LABEL, DEFAULT_CONFIG_KEY)
        text = cm["data"][key]  # the config the node's label selects exists ...
        assert plugin_capacity(text, count) == expected_resources(report)["capacity"]  # ... and agrees
        assert yaml.safe_load(text)["sharing"]["timeSlicing"]["failRequestsGreaterThanOne"] is fail
        p = plan(report)
        assert p.ok and p.node_labels == labels and labels[GPU_LABEL] == "true"
        assert p.device_plugin.value["replicas"] * count == p.slices
        assert p.device_plugin.value["config"] == key
        assert p.device_plugin.value["fail_requests_greater_than_one"] is fail


def test_cards_of_different_slices_on_one_node_are_a_conflict():
    policy = _policy(4, True, [None, 8])
    p = plan(HardwareReport.example(["card-0", "card-1"], policy=policy))
    assert not p.ok and p.device_plugin.conflict and p.node_labels == {}
    assert "Card 0: 4, Card 1: 8" in p.device_plugin.reason


def test_a_policy_below_two_replicas_is_refused():
    with pytest.raises(PolicyError, match="slices_per_card"):
        Policy.loads('{"slices_per_card": 1}', "json")

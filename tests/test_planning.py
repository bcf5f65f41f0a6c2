"""The provisioner's rules on plain data (:mod:`gpuclass.planning`, what ``gpuclass plan`` and
``gpuclass labels`` print without pydantic) and the pydantic models of
:mod:`gpuclass.provisioner` give one answer: every report and plan the dicts make is its
model's JSON dump, keys and their order included; the Kubernetes helpers make the same
objects of a plain plan as of the models; on generated machines (broken devices, VFs,
companions, look-alikes, a policy with slices of its own), CPUs of each kind, with and
without names."""

from __future__ import annotations

import copy
import json
import os

import fakemachine
import fakesys
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuclass import planning
from gpuclass.k8s.labels import expected_resources, labels_patch, node_labels
from gpuclass.k8s.publish import host_labels_patch, nfd_feature_file, node_feature
from gpuclass.models import DeviceClassification, GpuCard, NearMiss, NodeGpuSummary
from gpuclass.policy import DEFAULT_POLICY, compile_policy
from gpuclass.provisioner import CpuReport, HardwareReport, InstallPlan, inspect, plan
from gpuclass.records import DEVICE_FIELDS

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POLICY = os.path.join(REPO, "examples", "policy.yaml")
CARDS = [c["id"] for c in compile_policy(None).cards]


def _text(value) -> str:
    """JSON text, keys in their order: equal texts are equal dicts with equal key order."""
    return json.dumps(value)


def _nodes(value):
    """Every dict and list inside ``value``, ``value`` included."""
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from _nodes(v)
    elif isinstance(value, list):
        yield value
        for v in value:
            yield from _nodes(v)


def _check(report_d: dict, report: HardwareReport) -> None:
    """``report_d`` is ``report``'s dump; its plan is the model's plan's dump; the helpers
    read the plain plan as they read the models."""
    assert _text(HardwareReport.model_validate(report_d).model_dump(mode="json")) == _text(report_d)
    assert _text(report.model_dump(mode="json")) == _text(report_d)
    nodes = list(_nodes(report_d))  # no dict or list met twice (YAML would alias it)
    assert len({id(n) for n in nodes}) == len(nodes)
    plan_d = planning.plan_data(report_d)
    planned = plan(report)
    assert _text(planned.model_dump(mode="json")) == _text(plan_d)
    assert _text(InstallPlan.model_validate(plan_d).model_dump(mode="json")) == _text(plan_d)
    for f in (node_labels, expected_resources, nfd_feature_file, lambda h: labels_patch(h, "n1"),
              lambda h: labels_patch(h, remove_stale=True), lambda h: node_feature(h, "n1"),
              lambda h: host_labels_patch(h, "bm-1"), lambda h: host_labels_patch(h, remove_stale=True)):
        assert f(plan_d) == f(planned) == f(report)
    assert planning.is_plan_data(plan_d) and not planning.is_plan_data(report_d)


def test_the_field_orders_are_the_models():
    assert planning.CPU_FIELDS == tuple(CpuReport.model_fields)
    assert planning.SUMMARY_FIELDS == tuple(NodeGpuSummary.model_fields)
    assert planning.NEAR_MISS_FIELDS == tuple(NearMiss.model_fields)
    fields = DeviceClassification.model_fields
    assert ("index", *DEVICE_FIELDS, *planning.DEVICE_VERDICT_FIELDS) == tuple(
        f.alias or name for name, f in fields.items())
    compiled = compile_policy(None)
    for i in range(len(compiled.cards)):
        assert tuple(compiled.card_data(i)) == tuple(GpuCard.model_fields)
        assert compiled.gpu_card(i).model_dump() == compiled.card_data(i)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(devices=fakemachine.generated_machines(), policy=st.sampled_from([None, POLICY]),
       names=st.booleans(), cpu=st.sampled_from([None, "intel", "amd", "vm", "nested"]),
       kvm=st.sampled_from([None, False]))
def test_generated_machines_plan_alike(tmp_path_factory, devices, policy, names, cpu, kvm):
    root = fakemachine.write_machine(tmp_path_factory.mktemp("machine"), devices, cpu=cpu, kvm=kvm)
    report_d = planning.inspect_data(root, policy=policy, names=names)
    report = inspect(root, policy=policy, names=names)
    _check(report_d, report)


@pytest.mark.parametrize("name", sorted(fakesys.SERVERS))
def test_the_suites_servers_plan_alike(tmp_path, name):
    root = fakemachine.write_machine(tmp_path, fakesys.SERVERS[name]())
    _check(planning.inspect_data(root), inspect(root))


@settings(max_examples=80, deadline=None)
@given(cards=st.lists(st.sampled_from(CARDS), max_size=3), count=st.integers(1, 3),
       cpu=st.sampled_from(["intel", "amd", "vm", "nested"]),
       slices=st.sampled_from([None, 2, 8]))
def test_example_reports_plan_alike(cards, count, cpu, slices):
    """Reports of every mix of the allowlist's cards (conflicts of kernel modules, and of
    slices where one card takes its own), through their JSON dump."""
    policy = None
    if slices is not None and cards:  # the first card drawn takes slices of its own
        policy = copy.deepcopy(DEFAULT_POLICY)
        policy["cards"][CARDS.index(cards[0])]["slices"] = slices
    report = HardwareReport.example(cards or None, count, cpu=cpu, policy=policy)
    _check(report.model_dump(mode="json"), report)


def test_a_report_without_cpu_facts_plans_without_the_secure_runtime(tmp_path):
    root = fakemachine.write_machine(tmp_path, fakesys.gex44(), cpu=None)
    report_d = planning.inspect_data(root)
    assert report_d["cpu"] is None and report_d["warnings"]
    p = planning.plan_data(report_d)
    assert p["secure_runtime"]["install"] is False and p["gpu_node"] is True
    _check(report_d, inspect(root))


def test_is_plan_data_wants_the_label_fields():
    p = planning.plan_data(HardwareReport.example("gtx-1080").model_dump(mode="json"))
    assert planning.is_plan_data(p)
    for broken in ({**p, "node_labels": None}, {**p, "conflicts": "x"}, {**p, "host_labels": {}},
                   {k: v for k, v in p.items() if k != "host_labels"}, [p], None):
        assert not planning.is_plan_data(broken)

"""One node decision, asked everywhere: a machine whose supported cards conflict gets no GPU
label from any command or function, and every command exits 1 for it.

The machines: a GTX 1080 Ti (Pascal: proprietary modules only) beside an RTX PRO 6000
Blackwell Server (open modules only), a kernel-module conflict; and two cards of a policy
that gives them different slices per card, a device plugin conflict.  The patch the
command prints is applied with ``kubectl patch --local`` to the node as kubectl shows it.
The commands run in this process (``helpers.run_in_process``).
"""

from __future__ import annotations

import json

import fakemachine
import helpers
import kube
import pytest
import yaml
from k8s_samples import GPU_NODE

from gpuclass.constants import DEVICE_PLUGIN_CONFIG_LABEL, GPU_LABEL
from gpuclass.k8s.labels import expected_resources, labels_patch, node_decision, node_labels
from gpuclass.policy import Policy
from gpuclass.policy.nodes import decide_node
from gpuclass.provisioner import HardwareReport, inspect, plan


@pytest.fixture(scope="module")
def conflict(tmp_path_factory):
    return fakemachine.write_machine(tmp_path_factory.mktemp("conflict"),
                                     fakemachine.pascal_and_blackwell())


def _slices_policy(tmp_path):
    cards = [{"id": f"card-{i}", "name": f"Card {i}", "family": "ada-lovelace",
              "kernel_module": "open", "slices": slices,
              "match": [{"vendor": "10de", "device": device}]}
             for i, (slices, device) in enumerate([(4, "27b0"), (8, "26b1")])]
    f = tmp_path / "policy.json"
    f.write_text(json.dumps({"cards": cards}))
    return f


def test_the_library_doors_agree_on_a_kernel_module_conflict(conflict):
    report = inspect(conflict)
    assert report.summary.supported_cards == 2
    assert report.summary.labels == {} and len(report.summary.conflicts) == 1
    assert "one machine loads only one flavour" in report.summary.conflicts[0]
    p = plan(report)
    decided = node_decision(report)
    assert not p.ok and p.conflicts == decided.conflicts == report.summary.conflicts
    assert node_labels(report) == node_labels(p) == node_labels(report.summary) == p.node_labels == {}
    assert labels_patch(report)["metadata"]["labels"] == {}
    assert labels_patch(report, remove_stale=True)["metadata"]["labels"] == {
        GPU_LABEL: None, DEVICE_PLUGIN_CONFIG_LABEL: None}
    assert expected_resources(report) == {"capacity": {}, "allocatable": {}}
    # the rollup's decision and the report's are one function's answer
    assert decide_node(report.cards, report.time_slicing.replicas) == decided


def test_a_slices_conflict_is_the_same_decision(tmp_path):
    policy = Policy.load(_slices_policy(tmp_path))
    report = HardwareReport.example(["card-0", "card-1"], policy=policy)
    assert report.summary.labels == {} and node_labels(report) == {}
    assert "different slices per card (Card 0: 4, Card 1: 8)" in report.summary.conflicts[0]
    assert plan(report).conflicts == report.summary.conflicts


def test_no_conflict_is_labelled_the_same_everywhere():
    report = HardwareReport.example(["gtx-1080", "rtx-4000-sff-ada"])  # one proprietary install
    assert report.summary.labels == node_labels(report) == plan(report).node_labels == {
        GPU_LABEL: "true"}


def _labels_line(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith("node label"))


def test_every_command_refuses_the_conflict_with_exit_1(conflict):
    scan = helpers.run_in_process("scan", "--root", conflict)
    assert scan.returncode == 1, scan.stderr
    assert _labels_line(scan.stdout) == ("node label: none until the conflict is resolved "
                                         "(see 'gpuclass plan')")
    assert GPU_LABEL not in scan.stdout
    for fmt in ("json", "yaml"):
        proc = helpers.run_in_process("scan", "--root", conflict, "-o", fmt)
        summary = (json.loads if fmt == "json" else yaml.safe_load)(proc.stdout)["summary"]
        assert proc.returncode == 1 and summary["labels"] == {} and len(summary["conflicts"]) == 1
    planned = helpers.run_in_process("plan", "--root", conflict, "-o", "json")
    assert planned.returncode == 1 and json.loads(planned.stdout)["plan"]["node_labels"] == {}
    assert json.loads(planned.stdout)["report"]["summary"]["labels"] == {}
    labels = helpers.run_in_process("labels", "--root", conflict, "-o", "json")
    assert labels.returncode == 1 and json.loads(labels.stdout)["node_labels"] == {}
    patch = helpers.run_in_process("labels", "--patch", "--node", "gex44-1", "--root", conflict)
    assert patch.returncode == 1 and "conflict" in patch.stderr
    assert json.loads(patch.stdout)["metadata"]["labels"] == {}


def test_the_conflict_patch_applied_by_kubectl_leaves_no_gpu_label(conflict):
    proc = helpers.run_in_process("labels", "--patch", "--remove-stale", "--node", "gex44-1", "--root", conflict)
    assert proc.returncode == 1
    node = kube.patch_local(GPU_NODE, proc.stdout.strip())  # the node was labelled before
    assert GPU_LABEL not in node["metadata"]["labels"]
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "gex44-1"
    quiet = helpers.run_in_process("labels", "--patch", "--node", "gex44-1", "--root", conflict)
    assert kube.patch_local(GPU_NODE, quiet.stdout.strip()) == kube.patch_local(GPU_NODE, "{}")


def test_a_slices_conflict_exits_1_from_every_command(tmp_path):
    policy = _slices_policy(tmp_path)
    report = tmp_path / "report.json"
    report.write_text(HardwareReport.example(["card-0", "card-1"], policy=Policy.load(policy))
                      .model_dump_json())
    for args in (["plan", "--report", report], ["labels", "--report", report],
                 ["labels", "--patch", "--report", report]):
        proc = helpers.run_in_process(*args)
        assert proc.returncode == 1, (args, proc.stderr)
        assert GPU_LABEL not in proc.stdout

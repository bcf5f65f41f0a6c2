"""examples/ is one consistent GPU server: the sysfs tree, its lspci dump, its node and the
pods agree with each other and with what the docs say of them (two RTX 6000 Ada, 8 slices)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import gpuclass

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _ids(table):
    return [tuple(int(x) for x in row) for row in zip(table.vendor, table.device, table.subvendor,
                                                        table.subdevice)]


def test_the_tree_and_its_lspci_dump_are_one_machine():
    tree = gpuclass.scan_sysfs(EXAMPLES / "gpu-server")
    dump = gpuclass.parse_lspci((EXAMPLES / "lspci-gpu-server.txt").read_text())
    assert len(tree) == len(dump) == 8
    assert _ids(tree) == _ids(dump)
    assert np.array_equal(tree.class_code, dump.class_code)
    assert np.array_equal(tree.revision, dump.revision)
    assert list(tree.addresses()) == list(dump.addresses())
    assert not tree.invalid_mask().any() and not dump.invalid_mask().any()
    for table in (tree, dump):
        node = gpuclass.classify_table(table).summary().node(0)
        assert node.cards == {"rtx-6000-ada": 2} and node.slices == 8


def test_the_node_and_pods_fit_the_machine():
    report = gpuclass.inspect(EXAMPLES / "gpu-server")
    assert gpuclass.node_labels(report) == {"autopilot.syself.com/gpu": "true"}
    diagnosis = gpuclass.diagnose(EXAMPLES / "node-gex130.yaml", report)
    assert diagnosis.expected == diagnosis.capacity == diagnosis.allocatable == 8
    assert [f.code for f in diagnosis.findings] == ["ok"]
    assert [v.valid for v in gpuclass.validate_pods(EXAMPLES / "pod-one-slice.yaml")] == [True]
    assert gpuclass.validate_pod(EXAMPLES / "pod-two-slices.yaml").valid is False
    codes = {d.node: [f.code for f in d.findings]
             for d in gpuclass.diagnose_nodes(EXAMPLES / "nodes.yaml")}
    assert codes == {"gex130-1": ["ok"], "gex130-2": ["device-plugin-unhealthy"],
                     "cpu-1": ["not-a-gpu-node"]}


def test_the_device_table_and_the_config_say_what_the_docs_say():
    reports = {r.server: r for r in gpuclass.audit_paths([EXAMPLES / "devices.csv"])}
    assert {s: r.slices for s, r in reports.items()} == {
        "gex44-01": 4, "gex130-01": 8, "gex131-01": 4, "turing-01": 0, "mixed-01": 8}
    assert any("cards conflict" in p for p in reports["mixed-01"].problems)
    findings = gpuclass.check_device_plugin_config(
        (EXAMPLES / "device-plugin-config.yaml").read_text())
    assert sorted(f.code for f in findings) == ["miscased-key", "replicas"]

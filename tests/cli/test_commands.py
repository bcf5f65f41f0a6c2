"""scan, plan, labels, validate-pod and diagnose as a user runs them: their answers through
``gpuclass.cli.main`` in this process (``helpers.run_in_process``); what needs a process of
its own (what a command imports, the core chosen at start) through the installed entry
point."""

from __future__ import annotations

import json
import subprocess
import sys

import fakemachine
import fakesys
import helpers
import pytest
import yaml


def run(*args, stdin=None):
    """The command's exit code and output: in process, with the core this process runs."""
    return helpers.run_in_process(*args, stdin=stdin)


@pytest.fixture(scope="module")
def machines(tmp_path_factory):
    base = tmp_path_factory.mktemp("machines")
    out = {}
    for name, devices, cpu in [("gex44", fakesys.gex44(), "intel"),
                               ("gex130", fakesys.gex130(), "amd"),
                               ("turing", fakesys.turing_box(), "vm"),
                               ("pascal_ada", fakemachine.pascal_and_ada(), "intel"),
                               ("conflict", fakemachine.pascal_and_blackwell(), "nested")]:
        out[name] = fakemachine.write_machine(base / name, devices, cpu=cpu)
    return out


def one_error_line(proc):
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("gpuclass: error: "), proc.stderr
    return lines[0]


# -- scan ---------------------------------------------------------------------------


def test_scan_shows_classification_and_totals(machines):
    proc = run("scan", "--root", machines["gex44"])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:11] == ["ADDRESS", "CLASS", "ID", "SUBSYSTEM", "REV", "DRIVER",
                                     "FLAGS", "STATUS", "CARD", "SLICES", "NAME"]
    gpu = next(line for line in lines if line.startswith("0000:01:00.0"))
    assert gpu.split()[7:10] == ["supported", "rtx-4000-sff-ada", "4"]
    audio = next(line for line in lines if line.startswith("0000:01:00.1"))
    assert audio.split()[7:10] == ["companion", "rtx-4000-sff-ada", "0"]
    assert "supported cards: 1 (rtx-4000-sff-ada x1)" in lines
    assert "slices: 4 nvidia.com/gpu (Capacity and Allocatable)" in lines
    assert "node label: autopilot.syself.com/gpu=true" in lines


def test_scan_json_names_the_unsupported_card(machines):
    proc = run("scan", "--root", machines["turing"], "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["summary"]["supported_cards"] == 0 and doc["summary"]["slices"] == 0
    assert doc["summary"]["labels"] == {} and doc["summary"]["unsupported_gpus"] == 1
    gpu = next(d for d in doc["devices"] if d["slot"] == "0000:65:00.0")
    assert gpu["status"] == "unsupported" and gpu["slices"] == 0
    assert gpu["near_miss"]["card"] == "rtx-6000-ada"
    table = run("scan", "--root", machines["turing"]).stdout
    assert "supported cards: 0: no GPU support, no node label, no slices" in table
    assert "unsupported GPU 0000:65:00.0 (10de:1e30)" in table


def test_scan_does_not_import_pydantic(machines):
    code = ("import sys; from gpuclass.cli import main; "
            f"rc = main(['scan', '--root', {str(machines['gex44'])!r}]); "
            "print([m for m in ('pydantic', 'yaml', 'gpuclass.models') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


# -- the same answers from the pure-Python core -----------------------------------------


@pytest.mark.parametrize("args", [
    ["scan", "--root", "{gex44}", "--format", "json"],
    ["scan", "--root", "{turing}"],
    ["plan", "--root", "{gex130}", "--format", "json"],
    ["plan", "--root", "{conflict}"],
    ["labels", "--root", "{gex44}", "--format", "json"],
])
def test_pure_python_core_gives_identical_output(machines, args):
    argv = [a.format(**machines) for a in args]
    # the core is chosen when a process starts: one process each
    compiled, pure = helpers.run(*argv, pure=False), helpers.run(*argv, pure=True)
    assert (compiled.returncode, compiled.stdout, compiled.stderr) == (
        pure.returncode, pure.stdout, pure.stderr)


# -- plan ---------------------------------------------------------------------------


def test_plan_table(machines):
    proc = run("plan", "--root", machines["gex44"])
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line.split()[1:3] for line in proc.stdout.splitlines()[1:6]}
    assert rows == {"nvidia-driver": ["yes", "open"], "kernel-module": ["yes", "open"],
                    "device-plugin": ["yes", "nvidia.com/gpu,"],
                    "secure-runtime": ["yes", "secure"], "host-labels": ["yes", "hardware=gpu"]}
    assert "node labels: autopilot.syself.com/gpu=true" in proc.stdout


def test_plan_json_roundtrips_through_report(machines, tmp_path):
    proc = run("plan", "--root", machines["turing"], "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["plan"]["gpu_node"] is False
    assert doc["plan"]["secure_runtime"]["install"] is False  # a plain VM
    saved = tmp_path / "report.json"
    saved.write_text(proc.stdout)
    again = run("plan", "--report", saved, "--format", "json")
    assert json.loads(again.stdout)["plan"] == doc["plan"]


def test_plan_conflict_exits_1(machines):
    proc = run("plan", "--root", machines["conflict"])
    assert proc.returncode == 1
    assert "CONFLICT" in proc.stdout and "conflict: kernel-module" in proc.stdout
    # each decision said once; no "none (no supported card)" next to supported cards
    assert "conflict: conflict:" not in proc.stdout
    assert "Blackwell needs the open kernel modules" in proc.stdout
    assert proc.stdout.count("Pascal the proprietary ones") == 1
    assert "no supported card" not in proc.stdout
    assert "node labels: none until the conflict is resolved (2 supported card(s) found)" in proc.stdout


def test_plan_bad_root_exits_3(tmp_path):
    assert "no such directory" in one_error_line(run("plan", "--root", tmp_path / "nope"))


def test_plan_bad_report_exits_3(tmp_path):
    bad = tmp_path / "r.json"
    bad.write_text("{\"root\": 1}")
    proc = run("plan", "--report", bad)
    assert proc.returncode == 3 and "not a hardware report" in one_error_line(proc)
    bad.write_text("{")
    proc = run("plan", "--report", bad)
    assert proc.returncode == 3 and "malformed JSON" in one_error_line(proc)


def test_root_and_report_are_exclusive(machines, tmp_path):
    assert run("plan", "--root", machines["gex44"], "--report", tmp_path / "r").returncode == 2


@pytest.mark.parametrize("name", ["gex44", "gex130", "turing", "pascal_ada", "conflict"])
def test_plan_and_labels_print_the_models_answers(machines, name):
    """``plan`` and ``labels`` decide on plain data (gpuclass.planning); what they print is
    what the pydantic models and the Kubernetes helpers of the library give, in every
    format and every labels mode, and YAML without anchors."""
    from gpuclass.k8s.labels import expected_resources, labels_patch
    from gpuclass.k8s.publish import POOL_LABEL_NOTE, host_labels_patch, nfd_feature_file, node_feature
    from gpuclass.provisioner import inspect, plan

    root = machines[name]
    report = inspect(root)
    planned = plan(report)
    rc = 1 if planned.conflicts else 0
    doc = {"report": report.model_dump(mode="json"), "plan": planned.model_dump(mode="json")}
    proc = run("plan", "--root", root, "-o", "json")
    assert proc.returncode == rc and proc.stdout == json.dumps(doc, indent=2) + "\n"
    yml = run("plan", "--root", root, "-o", "yaml").stdout
    assert "&id" not in yml and yaml.safe_load(yml) == doc
    labels = {"node_labels": planned.node_labels, "host_labels": planned.host_labels.labels,
              **expected_resources(report), "supported_cards": report.summary.supported_cards,
              "cards": report.summary.cards, "conflicts": planned.conflicts}
    assert json.loads(run("labels", "--root", root, "-o", "json").stdout) == labels
    objects = {("--patch", "--node", "w1"): labels_patch(planned, "w1"),
               ("--patch", "--remove-stale"): labels_patch(planned, remove_stale=True),
               ("--host-patch", "--host", "bm-1"): host_labels_patch(planned, "bm-1"),
               ("--host-patch", "--remove-stale"): host_labels_patch(planned, remove_stale=True),
               ("--node-feature", "--node", "w1", "-o", "json"): node_feature(planned, "w1")}
    for args, obj in objects.items():
        proc = run("labels", "--root", root, *args)
        assert proc.returncode == rc and json.loads(proc.stdout) == obj, args
    nf = run("labels", "--root", root, "--node-feature", "--node", "w1").stdout
    assert nf.startswith(f"# {POOL_LABEL_NOTE}\n") and yaml.safe_load(nf) == node_feature(planned, "w1")
    assert run("labels", "--root", root, "--nfd").stdout == nfd_feature_file(planned)


# -- labels -------------------------------------------------------------------------


def test_labels_table_and_json(machines):
    proc = run("labels", "--root", machines["gex130"])
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[:4] == [
        "node labels  autopilot.syself.com/gpu=true", "host labels  hardware=gpu",
        "capacity     nvidia.com/gpu: 4", "allocatable  nvidia.com/gpu: 4"]
    doc = json.loads(run("labels", "--root", machines["turing"], "--format", "json").stdout)
    assert doc["node_labels"] == {} and doc["host_labels"] == {} and doc["capacity"] == {}


def test_labels_patch(machines):
    proc = run("labels", "--root", machines["gex44"], "--patch", "--node", "w1")
    assert json.loads(proc.stdout) == {"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": "w1", "labels": {"autopilot.syself.com/gpu": "true",
                                 "nvidia.com/device-plugin.config": None}}}
    assert len(proc.stdout.splitlines()) == 1
    plain = json.loads(run("labels", "--root", machines["turing"], "--patch").stdout)
    assert plain["metadata"] == {"labels": {}}
    stale = json.loads(run("labels", "--root", machines["turing"], "--patch", "--remove-stale").stdout)
    assert stale["metadata"] == {"labels": {"autopilot.syself.com/gpu": None,
                                            "nvidia.com/device-plugin.config": None}}


def test_labels_configmap_yaml_and_json():
    cm = yaml.safe_load(run("labels", "--configmap", "--namespace", "gpu").stdout)
    assert cm["kind"] == "ConfigMap" and cm["metadata"]["namespace"] == "gpu"
    cfg = yaml.safe_load(cm["data"]["default"])
    assert cfg["sharing"]["timeSlicing"]["failRequestsGreaterThanOne"] is True
    assert json.loads(run("labels", "--configmap", "--format", "json").stdout) == {
        **cm, "metadata": {**cm["metadata"], "namespace": "kube-system"}}


# -- validate-pod -------------------------------------------------------------------


PODS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer}
spec:
  template:
    spec:
      containers:
      - name: train
        resources: {limits: {nvidia.com/gpu: 2}}
---
apiVersion: v1
kind: Service
metadata: {name: svc}
---
apiVersion: v1
kind: Pod
metadata: {name: ok}
spec:
  initContainers:
  - {name: init, resources: {limits: {nvidia.com/gpu: 1}}}
  containers:
  - {name: a, resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}}
"""


def test_validate_pod_exit_codes_and_messages(tmp_path):
    f = tmp_path / "pods.yaml"
    f.write_text(PODS)
    proc = run("validate-pod", f)
    assert proc.returncode == 1
    assert ('error: spec.template.spec.containers[0] (train): invalid allocation request for '
            '"nvidia.com/gpu": invalid request: maximum request size for shared resources is 1; '
            "found 2") in proc.stdout
    assert "Pod/ok" in proc.stdout and "skipped Service/svc" in proc.stdout
    doc = json.loads(run("validate-pod", f, "--format", "json").stdout)
    assert [o["valid"] for o in doc["objects"]] == [False, True]
    assert doc["skipped"][0]["kind"] == "Service"
    good = PODS.split("---\n")[2]
    proc = run("validate-pod", "-", stdin=good)
    assert proc.returncode == 0 and "valid, 1 nvidia.com/gpu" in proc.stdout
    assert "share the card's memory" in proc.stdout


def test_validate_pod_input_errors(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("kind: Pod\nspec: {containers: [}\n")
    proc = run("validate-pod", f)
    assert proc.returncode == 3 and "malformed YAML" in one_error_line(proc)
    f.write_text("kind: Service\n")
    assert run("validate-pod", f).returncode == 3
    proc = run("validate-pod", tmp_path / "missing.yaml")
    assert proc.returncode == 3 and "missing.yaml" in one_error_line(proc)
    assert run("validate-pod").returncode == 2


# -- diagnose -----------------------------------------------------------------------


def node_yaml(labeled=True, capacity=None, allocatable=None, name="worker-1", pool=None):
    status = {"capacity": {}, "allocatable": {}}
    if capacity is not None:
        status["capacity"]["nvidia.com/gpu"] = str(capacity)
    if allocatable is not None:
        status["allocatable"]["nvidia.com/gpu"] = str(allocatable)
    labels = {"autopilot.syself.com/gpu": "true"} if labeled else {}
    if labeled if pool is None else pool:
        labels["node-role.kubernetes.io/gpu"] = ""  # a GPU node of the GPU pool
    return yaml.safe_dump({"apiVersion": "v1", "kind": "Node",
                           "metadata": {"name": name, "labels": labels}, "status": status})


@pytest.mark.parametrize("node, machine, rc, codes", [
    (dict(capacity=4, allocatable=4), "gex44", 0, ["ok"]),
    (dict(capacity=4, allocatable=0), None, 1, ["device-plugin-unhealthy"]),
    (dict(), None, 1, ["device-plugin-missing"]),
    (dict(labeled=False), "turing", 0, ["not-a-gpu-node"]),
    (dict(labeled=False, capacity=1, allocatable=1), "turing", 1, ["no-supported-card"]),
    (dict(labeled=False), "gex44", 1, ["reprovision", "pool-label"]),
    (dict(capacity=1, allocatable=1), "gex44", 1, ["capacity-mismatch"]),
    (dict(capacity=4, allocatable=4, pool=False), "turing", 1, ["stale-label"]),
    (dict(capacity=4, allocatable=4), "gex44", 0, ["ok"]),
    (dict(capacity=8, allocatable=8), "conflict", 1, ["conflict", "pool-label"]),
])
def test_diagnose(machines, tmp_path, node, machine, rc, codes):
    f = tmp_path / "node.yaml"
    f.write_text(node_yaml(**node))
    extra = ["--root", machines[machine]] if machine else []
    proc = run("diagnose", f, *extra)
    assert proc.returncode == rc, proc.stderr
    assert all(f"[{code}]" in proc.stdout for code in codes)
    (doc,) = json.loads(run("diagnose", f, *extra, "--format", "json").stdout)
    assert [x["code"] for x in doc["findings"]] == codes and doc["ok"] is (rc == 0)


def test_diagnose_a_node_list_from_stdin(machines):
    nodes = [yaml.safe_load(node_yaml(capacity=4, allocatable=4, name="a")),
             yaml.safe_load(node_yaml(capacity=4, allocatable=0, name="b"))]
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": nodes})
    proc = run("diagnose", "-", stdin=text)
    assert proc.returncode == 1
    assert "node a:" in proc.stdout and "node b:" in proc.stdout
    # one machine's hardware cannot describe two nodes
    proc = run("diagnose", "-", "--root", machines["gex44"], stdin=text)
    assert proc.returncode == 2 and "2 nodes" in one_error_line(proc)


def test_diagnose_rejects_other_kinds(tmp_path):
    f = tmp_path / "pod.yaml"
    f.write_text("kind: Pod\nmetadata: {name: p}\n")
    proc = run("diagnose", f)
    assert proc.returncode == 3 and "expected a Node, got Pod" in one_error_line(proc)


# -- help ---------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["scan", "plan", "labels", "validate-pod", "diagnose"])
def test_help_has_examples_and_format(command):
    proc = run(command, "--help")
    assert proc.returncode == 0
    assert "examples:" in proc.stdout and "--format" in proc.stdout
    if command != "validate-pod":
        assert "--root" in proc.stdout


def test_top_level_help_lists_the_commands():
    out = run("--help").stdout
    for command in ("scan", "plan", "labels", "validate-pod", "diagnose"):
        assert command in out

"""The command line as kubectl users expect it: -o json|yaml|table (--format an alias),
--version, python -m gpuclass, options that do not apply refused, quick --help, and one
error for a missing PCI ID database.

What a command answers is asked of ``gpuclass.cli.main`` in this process
(``helpers.run_in_process``); the installed script, ``python -m gpuclass``, the core chosen
at start and what a command imports run in a process of their own."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import fakemachine
import fakesys
import helpers
import pytest
import yaml
from k8s_samples import CPU_NODE, GPU_NODE, POD

import gpuclass
from gpuclass.policy import Policy


def run(*args, **kw):
    """The command's exit code and output, in process (``env`` replaced for the call)."""
    return helpers.run_in_process(*args, **kw)


def one_error_line(proc, rc):
    assert proc.returncode == rc, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip() and not line.startswith(("usage", " "))]
    assert len(lines) == 1 and lines[0].startswith("gpuclass: error: "), proc.stderr
    return lines[0]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    base = tmp_path_factory.mktemp("habits")
    root = fakemachine.write_machine(base / "gex44", fakesys.gex44())
    nodes = base / "nodes.yaml"
    nodes.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [GPU_NODE, CPU_NODE]}))
    node = base / "node.yaml"
    node.write_text(yaml.safe_dump(GPU_NODE))
    pod = base / "pod.yaml"
    pod.write_text(yaml.safe_dump(POD))
    report = base / "report.json"
    report.write_text(run("plan", "--root", root, "-o", "json").stdout)
    policy = base / "policy.yaml"
    policy.write_text("slices_per_card: 8\nfail_requests_greater_than_one: false\n"
                      "cards:\n- id: rtx-4000-sff-ada\n  name: RTX 4000 SFF Ada Generation\n"
                      "  family: ada-lovelace\n  kernel_module: open\n"
                      "  match:\n  - {vendor: \"10de\", device: \"27b0\"}\n")
    return {"root": root, "nodes": nodes, "node": node, "pod": pod, "report": report,
            "policy": policy, "base": base}


COMMANDS = [
    ["scan", "--root", "{root}"],
    ["plan", "--root", "{root}"],
    ["plan", "--report", "{report}"],
    ["labels", "--root", "{root}"],
    ["labels", "--report", "{report}", "--patch", "--node", "w1"],
    ["labels", "--configmap", "--policy", "{policy}"],
    ["validate-pod", "{pod}"],
    ["diagnose", "{nodes}"],
    ["diagnose", "{node}", "--root", "{root}"],
    ["lookup", "10de:27b0", "10de:2bb5"],
    ["db", "info"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_yaml_wherever_json_and_format_is_an_alias(files, argv):
    argv = [a.format(**files) for a in argv]
    run(*argv)  # a first run may write the database cache, which db info shows
    as_json = run(*argv, "-o", "json")
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    as_yaml = run(*argv, "-o", "yaml")
    assert as_yaml.returncode == 0 and yaml.safe_load(as_yaml.stdout) == data
    for alias in ("--output", "--format"):
        assert json.loads(run(*argv, alias, "json").stdout) == data


def test_policy_show_prints_the_policy_as_yaml(files):
    proc = run("policy", "show")
    assert proc.returncode == 0
    assert Policy.loads(proc.stdout, "yaml") == Policy.default()
    assert json.loads(run("policy", "show", "-o", "json").stdout) == yaml.safe_load(proc.stdout)
    given = yaml.safe_load(run("policy", "show", files["policy"]).stdout)
    assert given["slices_per_card"] == 8 and given["cards"][0]["match"] == [{"vendor": "10de",
                                                                            "device": "27b0"}]
    bad = files["base"] / "bad.yaml"
    bad.write_text("slices_per_card: 1\n")
    assert "slices_per_card" in one_error_line(run("policy", "show", bad), 3)


def test_configmap_follows_the_given_policy(files):
    cm = yaml.safe_load(run("labels", "--configmap", "--policy", files["policy"]).stdout)
    ts = yaml.safe_load(cm["data"]["default"])["sharing"]["timeSlicing"]
    assert ts["resources"] == [{"name": "nvidia.com/gpu", "replicas": 8}]
    assert ts["failRequestsGreaterThanOne"] is False
    labels = json.loads(run("labels", "--root", files["root"], "--policy", files["policy"], "-o", "json").stdout)
    assert labels["capacity"] == {"nvidia.com/gpu": "8"}  # one card x the policy's 8 replicas


def test_version_names_the_core_in_use():
    from gpuclass import _native

    core = "compiled core" if _native.core.IS_COMPILED else f"pure-Python core: {_native.COMPILED_IMPORT_ERROR}"
    for cmd in ([helpers.EXE, "--version"], [sys.executable, "-m", "gpuclass", "--version"]):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0 and proc.stdout == f"gpuclass {gpuclass.__version__} ({core})\n"
    twin = helpers.run("--version", pure=True)
    assert twin.stdout == f"gpuclass {gpuclass.__version__} (pure-Python core: disabled by GPUCLASS_NO_EXTENSIONS)\n"


def test_python_m_gpuclass_is_the_command(files):
    proc = subprocess.run([sys.executable, "-m", "gpuclass", "lookup", "10de:27b0", "-o", "json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and json.loads(proc.stdout)[0]["device"] == "27b0"


@pytest.mark.parametrize("argv, fragment", [
    (["labels", "--root", "{root}", "--node", "w1"], "--node applies only with --patch"),
    (["labels", "--root", "{root}", "--remove-stale"], "--remove-stale applies only with --patch"),
    (["labels", "--root", "{root}", "--namespace", "gpu"], "--namespace applies only with --configmap"),
    (["labels", "--configmap", "--root", "{root}"], "--root does not apply with --configmap"),
    (["labels", "--configmap", "--report", "{report}"], "--report does not apply with --configmap"),
    (["labels", "--configmap", "--db", "x.ids"], "--db does not apply with --configmap"),
    (["labels", "--report", "{report}", "--policy", "{policy}"], "--policy does not apply with --report"),
    (["plan", "--report", "{report}", "--policy", "{policy}"], "--policy does not apply with --report"),
    (["plan", "--report", "{report}", "--no-names"], "--no-names does not apply with --report"),
    (["diagnose", "{node}", "--db", "x.ids"], "--db applies only with --root"),
    (["diagnose", "{node}", "--report", "{report}", "--db", "x.ids"], "--db applies only with --root"),
    (["db", "info", "--write", "x.gpcdb"], "unrecognized arguments: --write"),
    (["scan", "--db", "x.ids", "--no-names"], "not allowed with argument"),
    (["scan", "-o", "csv"], "invalid choice: 'csv'"),
])
def test_options_that_do_not_apply_are_usage_errors(files, argv, fragment):
    line = one_error_line(run(*[a.format(**files) for a in argv]), 2)
    assert fragment in line


@pytest.mark.parametrize("argv", [[], ["lookup"], ["db"], ["db", "info"], ["db", "compile"], ["scan"],
                                  ["plan"], ["labels"], ["validate-pod"], ["diagnose"], ["policy"],
                                  ["policy", "show"]])
def test_help_imports_neither_numpy_nor_pydantic(argv):
    code = ("import io, sys, contextlib\nfrom gpuclass.cli import main\nout = io.StringIO()\n"
            f"with contextlib.redirect_stdout(out):\n    rc = main({argv + ['--help']!r})\n"
            "print(rc, [m for m in ('numpy', 'pydantic', 'yaml') if m in sys.modules], "
            "out.getvalue().startswith('usage: gpuclass'))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.split("\n")[0] == "0 [] True", proc.stdout + proc.stderr


@pytest.mark.parametrize("argv", [["scan"], ["plan"], ["labels"], ["validate-pod"], ["diagnose"],
                                  ["lookup"], ["db", "info"], ["policy", "show"], ["audit"]])
def test_every_command_help_ends_with_its_exit_codes(argv):
    out = " ".join(run(*argv, "--help").stdout.split())
    assert "Exit codes: 0" in out and " 3 " in out.split("Exit codes:")[1]


def test_a_missing_or_broken_database_is_one_error_for_every_command(files, tmp_path):
    broken = tmp_path / "broken.ids"
    broken.write_text("10de  NVIDIA\n\t27b0\n")
    for db, expect in ((tmp_path / "missing.ids", "missing.ids: cannot read"),
                       (broken, "broken.ids:2: device name: missing")):
        env = dict(os.environ, GPUCLASS_PCI_IDS=str(db))
        argvs = [["scan", "--root", files["root"]], ["plan", "--root", files["root"]],
                 ["labels", "--root", files["root"]], ["diagnose", files["node"], "--root", files["root"]],
                 ["lookup", "10de:27b0"], ["db", "info"]]
        lines = {one_error_line(run(*argv, env=env), 3) for argv in argvs}
        assert len(lines) == 1 and expect in lines.pop()
        # asked to proceed without names, the machine's commands run
        for argv in argvs[:4]:
            proc = run(*argv, "--no-names", "-o", "json", env=env)
            assert proc.returncode == 0, proc.stderr
        scan = json.loads(run("scan", "--root", files["root"], "--no-names", "-o", "json", env=env).stdout)
        assert all(d["vendor_name"] is None for d in scan["devices"])


def test_a_scan_of_a_machine_with_only_supported_gpus_does_not_import_difflib(files):
    code = ("import sys, io, contextlib\nfrom gpuclass.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    main(['scan', '--root', {str(files['root'])!r}])\n"
            "print([m for m in ('difflib', 'pydantic', 'yaml') if m in sys.modules])\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stderr


def test_a_whole_cluster_through_stdin_reports_only_gpu_nodes():
    broken = json.loads(json.dumps(GPU_NODE))
    broken["metadata"]["name"] = "gex44-2"
    broken["status"]["allocatable"]["nvidia.com/gpu"] = "0"
    healthy = json.dumps({"apiVersion": "v1", "kind": "List", "items": [GPU_NODE, CPU_NODE]})
    proc = run("diagnose", "-", stdin=healthy)
    assert proc.returncode == 0, proc.stdout
    assert "info: [not-a-gpu-node]" in proc.stdout and "ok: [ok]" in proc.stdout
    node_list = json.dumps({"apiVersion": "v1", "kind": "NodeList",
                            "items": [{k: v for k, v in n.items() if k != "kind"}
                                      for n in (GPU_NODE, CPU_NODE, broken)]})
    proc = run("diagnose", "-", "-o", "json", stdin=node_list)
    assert proc.returncode == 1
    assert [(d["node"], d["ok"], d["gpu_node"]) for d in json.loads(proc.stdout)] == [
        ("gex44-1", True, True), ("cpu-1", True, False), ("gex44-2", False, True)]


def test_a_pod_list_through_stdin():
    pods = json.dumps({"apiVersion": "v1", "kind": "PodList",
                       "items": [{k: v for k, v in POD.items() if k != "kind"}]})
    doc = json.loads(run("validate-pod", "-", "-o", "json", stdin=pods).stdout)
    assert doc["valid"] and [o["kind"] for o in doc["objects"]] == ["Pod"]
    assert [c["path"] for c in doc["objects"][0]["containers"]][-1] == "spec.ephemeralContainers[0]"

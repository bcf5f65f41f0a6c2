"""``gpuclass scan`` without numpy (``gpuclass.machine``'s quick path: the devices as lists,
names from the mapped cache, the rules over lists) says what the DeviceTable path says:
records, verdicts, the node summary and the exit status, on every machine the suite
builds, on generated machines (broken devices, VFs, companions, unprogrammed
subsystems), under the default policy, one with subsystem and deny rules, and without
names; and a whole process of it imports neither numpy nor pydantic."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

import fakemachine
import fakesys
import helpers
import pytest
from helpers import outside_tree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuclass import machine
from gpuclass.cli import scan
from gpuclass.db import PciDatabase, locate

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
POLICY = os.path.join(REPO, "examples", "policy.yaml")
EXAMPLE = os.path.join(REPO, "examples", "gpu-server")


def _args(root, policy=None, no_names=False, fmt="json"):
    return argparse.Namespace(lspci=None, root=str(root), no_names=no_names, db=None, policy=policy,
                              format=fmt)


@pytest.fixture(autouse=True)
def _warm(monkeypatch):
    # the cache the quick path maps (every run after a machine's first), in this test's
    # cache directory (the process's default database may have been loaded from another)
    PciDatabase.load()


def _both(args, monkeypatch):
    """The quick answer (the table path refused while it runs) and the table path's."""
    table = machine._scan_table

    def refuse(*_args):
        raise AssertionError("the quick path fell back to the table path")

    monkeypatch.setattr(machine, "_scan_table", refuse)
    quick = scan.collect(args, quick=True)
    monkeypatch.setattr(machine, "_scan_table", table)
    return quick, scan.collect(args, quick=False)


def _machines():
    out = {name: build() for name, build in fakesys.SERVERS.items()}
    out["broken"] = fakesys.broken()
    out["empty"] = []
    for seed in range(3):
        out[f"generated-{seed}"] = fakesys.generated(40, seed)
    return out


MACHINES = _machines()


@pytest.mark.parametrize("policy", [None, POLICY])
@pytest.mark.parametrize("name", sorted(MACHINES))
def test_every_machine_reads_alike(tmp_path, monkeypatch, name, policy):
    fakesys.write_tree(tmp_path, MACHINES[name])
    quick, table = _both(_args(tmp_path, policy), monkeypatch)
    assert quick == table


@pytest.mark.parametrize("no_names", [False, True])
def test_the_example_server_and_no_names(monkeypatch, no_names):
    quick, table = _both(_args(EXAMPLE, no_names=no_names), monkeypatch)
    assert quick == table and quick[2]["supported_cards"] == 2
    assert all(r["vendor_name"] is None for r in quick[1]) == no_names


def test_this_machine_reads_alike(monkeypatch):
    if not os.path.isdir("/sys/bus/pci/devices"):
        pytest.skip("no /sys/bus/pci/devices here")
    quick, table = _both(_args("/"), monkeypatch)
    assert quick == table


def test_more_devices_than_the_quick_bound_take_the_table_path(tmp_path, monkeypatch):
    fakesys.write_tree(tmp_path, fakesys.generated(30, 7))
    monkeypatch.setattr(machine, "QUICK_DEVICES", 10)
    calls = []
    table = machine._scan_table
    monkeypatch.setattr(machine, "_scan_table", lambda *a: calls.append(1) or table(*a))
    got = scan.collect(_args(tmp_path))
    assert calls == [1] and got == scan.collect(_args(tmp_path), quick=False)


def test_without_a_cache_the_table_path_answers_and_writes_it(tmp_path, monkeypatch):
    from gpuclass.db import database

    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(tmp_path / "fresh-cache"))
    own = tmp_path / "own" / "pci.ids"  # not the bundled file: no shipped cache (tests/db/test_shipped.py)
    own.parent.mkdir()
    shutil.copyfile(locate.bundled_name(), own)
    monkeypatch.setenv("GPUCLASS_PCI_IDS", str(own))
    database._default.cache_clear()  # as in a new process: the database not loaded yet
    fakesys.write_tree(tmp_path / "root", fakesys.gex130())
    args = _args(tmp_path / "root")
    assert machine._mapped_names(None, True) is None  # no cache to map: the table path
    first = scan.collect(args)
    assert machine._mapped_names(None, True) is not None
    monkeypatch.setattr(machine, "_scan_table", lambda *a: pytest.fail("the table path again"))
    assert scan.collect(args) == first


# -- generated machines ------------------------------------------------------------

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(devices=fakemachine.generated_machines(), policy=st.sampled_from([None, POLICY]), no_names=st.booleans())
def test_generated_machines_read_alike(tmp_path_factory, monkeypatch, devices, policy, no_names):
    root = tmp_path_factory.mktemp("machine")
    fakesys.write_tree(root, devices)
    quick, table = _both(_args(root, policy, no_names), monkeypatch)
    assert quick == table


# -- the whole process ---------------------------------------------------------------

def _run_twice(tmp_path, args: list[str], heavy: tuple[str, ...]):
    """The command run twice in fresh processes sharing a new cache directory (the first
    builds the cache through the table path), each printing which of ``heavy`` it imported
    (not counting what the interpreter had loaded before it ran: an editable install's
    finder imports ``re``)."""
    env = {**os.environ, "GPUCLASS_CACHE_DIR": str(tmp_path / "cache")}
    code = ("import sys; before = set(sys.modules); from gpuclass.cli.main import main; "
            "rc = main(sys.argv[1:]); "
            f"print('heavy:', sorted(m for m in {heavy!r} if m in sys.modules and m not in before)); "
            "sys.exit(rc)")
    argv = [sys.executable, "-c", code, *args]
    return [subprocess.run(argv, env=env, capture_output=True, text=True, cwd=outside_tree()) for _ in range(2)]


@pytest.mark.parametrize("args, rc", [
    (["scan", "--root", EXAMPLE], 0),
    (["lookup", "10de:1e30:10de:12ba", "10de:27b0", "1234:5678", "-o", "json"], 1),  # 1234:5678 unknown
    (["plan", "--root", EXAMPLE, "-o", "json"], 0),
    (["plan", "--root", EXAMPLE], 0),
    (["labels", "--root", EXAMPLE], 0),
    (["labels", "--root", EXAMPLE, "--nfd"], 0),
    (["labels", "--root", EXAMPLE, "--patch", "--node", "n1"], 0),
    (["labels", "--root", EXAMPLE, "--host-patch", "-o", "yaml"], 0),
], ids=["scan", "lookup", "plan-json", "plan", "labels", "labels-nfd", "labels-patch", "labels-host-patch"])
def test_the_process_imports_no_numpy(tmp_path, args, rc):
    """``scan``, ``lookup``, ``plan`` and ``labels`` import neither numpy nor pydantic nor
    the compiled core once the cache is there (``plan`` and ``labels`` decide on plain data:
    :mod:`gpuclass.planning`), nor ``dataclasses`` (which imports ``inspect`` and ``ast``)
    nor ``typing`` (annotations are for type checkers), nor argparse (the command line is
    read by :mod:`gpuclass.cli.quickargs`); and where they print text, not JSON or YAML
    (whose modules need it), nor ``re`` and ``enum``."""
    heavy = ("numpy", "pydantic", "gpuclass._core", "gpuclass.models", "dataclasses", "typing", "argparse",
             "gettext", "locale")
    if not {"json", "yaml", "--patch"} & set(args):
        heavy += ("re", "enum")
    first, second = _run_twice(tmp_path, args, heavy)
    assert first.returncode == second.returncode == rc, second.stderr
    # The first run on a fresh machine maps the cache an installed wheel ships; a source
    # checkout has none, and its first run builds the user's cache through the table path.
    shipped = locate.shipped_cache(locate.bundled_name()) is not None
    assert first.stdout.rstrip().endswith("heavy: []") == shipped
    assert second.stdout.rstrip().endswith("heavy: []")
    assert first.stdout.split("heavy:")[0] == second.stdout.split("heavy:")[0]
    if args[0] == "lookup":
        assert '"sdevice_name": "Quadro RTX 6000"' in second.stdout


def _imported(argv: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess, set[str]]:
    """A process and the modules it imported (``PYTHONPROFILEIMPORTTIME``'s report)."""
    proc = subprocess.run(argv, env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, capture_output=True, text=True,
                          cwd=outside_tree())
    names = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    return proc, names


def test_the_installed_command_imports_no_re(tmp_path):
    """The command as installed (``bin/gpuclass``: an entry point's launcher would import
    ``re``) runs ``scan`` without importing ``re``, ``enum``, argparse or numpy beyond what
    the interpreter's own start imports (an editable install's finder imports ``re``)."""
    env = {**os.environ, "GPUCLASS_CACHE_DIR": str(tmp_path / "cache")}
    _, start = _imported([sys.executable, "-c", "pass"], env)
    argv = [*helpers.COMMAND, "scan", "--root", EXAMPLE]
    first, _ = _imported(argv, env)  # writes the cache
    second, names = _imported(argv, env)
    assert first.returncode == second.returncode == 0, second.stderr[-2000:]
    assert first.stdout == second.stdout and "supported cards: 2" in second.stdout
    assert "gpuclass.cli.main" in names  # the report is the command's
    assert not {"re", "enum", "argparse", "gettext", "numpy", "pydantic"} & (names - start)


@pytest.mark.parametrize("name", ["gex44", "gex130", "sriov", "broken", "turing", "empty"])
def test_the_provisioners_report_reads_alike(tmp_path, monkeypatch, name):
    """``inspect`` (what ``plan`` and ``labels`` read) gives the same report on either path."""
    from gpuclass.provisioner import inspect

    fakemachine.write_machine(tmp_path, MACHINES[name])
    quick = inspect(tmp_path)
    monkeypatch.setattr(machine, "QUICK_DEVICES", -1)  # every scan through the DeviceTable
    table = inspect(tmp_path)
    assert quick == table and quick.model_dump() == table.model_dump()

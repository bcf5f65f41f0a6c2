"""Whole-process time of the command line: what a provisioner pays once per boot.

Groups (each run in the same session, compared by median):

- ``cli import``: ``python -c "import gpuclass"`` vs ``python -c "import numpy"``;
  goal: the import costs at most 1.3x numpy's (``goal`` on the numpy baseline is
  the speed-up gpuclass must reach, 1/1.3).
- ``cli scan``: ``gpuclass scan`` of a GEX44-like root (classification included)
  vs ``lspci -nnmm`` of the same tree and ``python -c "import numpy"``;
  reported, no goal.
- ``cli start: scan``, ``cli start: plan``, ``cli start: labels``, ``cli start: lookup``:
  the command a user types on this machine (``gpuclass scan``, ``gpuclass plan``,
  ``gpuclass labels``, ``gpuclass lookup 10de:27b0``) vs ``lspci -nn -O hwdb.disable=1``
  of this machine and ``python -c pass`` (the interpreter's own start, the floor); goal
  for ``scan``: within 3x ``lspci -nn``
  (issue 30; ``goal`` on the lspci baseline is 1/3), ``plan``, ``labels`` and ``lookup``
  reported.
- ``cli start: plan, fresh machine``: ``gpuclass plan`` with an empty cache directory each
  round, as in a rescue system at every boot (an installed wheel maps the compiled
  database it ships), against the same baselines; reported.

Run: ``python -m pytest benchmarks/bench_cli.py --benchmark-only``
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

import fakemachine
import fakesys
import helpers
import pytest
import recorded

IMPORT_GOAL = 1 / 1.3


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    return env


@pytest.fixture(scope="module")
def rounds(quick) -> int:
    return 5 if quick else 20


@pytest.fixture(scope="module")
def gex44_root(tmp_path_factory):
    return fakemachine.write_machine(tmp_path_factory.mktemp("gex44"), fakesys.gex44())


def _time(benchmark, cmd, rounds):
    env = _env()

    def once():
        return subprocess.run(cmd, capture_output=True, text=True, env=env, check=True, cwd=helpers.outside_tree()).stdout

    return benchmark.pedantic(once, rounds=rounds, iterations=1, warmup_rounds=1)


@pytest.mark.benchmark(group="cli import")
def test_import_gpuclass(benchmark, rounds):
    benchmark.extra_info["role"] = "gpuclass"
    _time(benchmark, [sys.executable, "-c", "import gpuclass"], rounds)


@pytest.mark.benchmark(group="cli import")
def test_import_numpy(benchmark, rounds):
    benchmark.extra_info.update(role="baseline", goal=IMPORT_GOAL)
    _time(benchmark, [sys.executable, "-c", "import numpy"], rounds)


@pytest.mark.benchmark(group="cli scan")
def test_gpuclass_scan(benchmark, rounds, gex44_root):
    benchmark.extra_info["role"] = "gpuclass"
    out = _time(benchmark, [*helpers.COMMAND, "scan", "--root", gex44_root], rounds)
    assert "supported cards: 1 (rtx-4000-sff-ada x1)" in out


@pytest.mark.benchmark(group="cli scan")
def test_lspci_nnmm(benchmark, rounds, gex44_root):
    lspci = shutil.which("lspci")
    if lspci is None:  # a failure where GPUCLASS_REQUIRE_PCIUTILS=1 (CI)
        recorded.missing("lspci", "apt-get install pciutils")
    benchmark.extra_info["role"] = "baseline"
    cmd = [lspci, "-nnmm", "-D", "-A", "linux-sysfs", "-O", f"sysfs.path={gex44_root}/sys/bus/pci",
           *recorded.LSPCI_NO_HWDB]
    out = _time(benchmark, cmd, rounds)
    assert "[27b0]" in out


@pytest.mark.benchmark(group="cli scan")
def test_import_numpy_for_scan(benchmark, rounds):
    benchmark.extra_info["role"] = "baseline"
    _time(benchmark, [sys.executable, "-c", "import numpy"], rounds)


_START_COMMANDS = {"scan": ("scan",), "plan": ("plan",), "labels": ("labels",),
                   "lookup": ("lookup", "10de:27b0"),
                   # a rescue system at every boot: no cache of its own (an installed wheel
                   # ships the bundled database compiled: gpuclass.db.locate.shipped_cache)
                   "plan, fresh machine": ("plan",)}
START_GOAL = 1 / 3  # gpuclass scan within 3x lspci -nn (issue 30)


def _this_machine() -> None:
    if not os.path.isdir("/sys/bus/pci/devices"):
        pytest.skip("no /sys/bus/pci/devices here: nothing to scan")


@pytest.mark.parametrize("command", sorted(_START_COMMANDS))
def test_gpuclass_command_start(benchmark, rounds, command, tmp_path, record_interleaved):
    """The whole process of a command as typed on this machine (exit 1, a flagged device
    or a conflict, is an answer too).  Before each round, untimed by pytest-benchmark, the
    baselines run once and are timed here: ``extra_info["interleaved"]`` holds the medians
    of rounds taken in turn (on a busy machine, separate tests can fall in quiet and busy
    minutes alike; the interleaved ratio is the one to read)."""
    _this_machine()
    benchmark.group = f"cli start: {command}"
    benchmark.extra_info["role"] = "gpuclass"
    env, cmd = _env(), [*helpers.COMMAND, *_START_COMMANDS[command]]
    cwd = helpers.outside_tree()
    fresh = str(tmp_path)
    baselines = {"python -c pass": [sys.executable, "-c", "pass"]}
    lspci = shutil.which("lspci")
    if lspci is not None:
        baselines["lspci -nn"] = [lspci, "-nn", *recorded.LSPCI_NO_HWDB]
    times: dict[str, list[float]] = {name: [] for name in (*baselines, "gpuclass")}

    def baselines_once():
        for name, argv in baselines.items():
            t = time.perf_counter()
            subprocess.run(argv, capture_output=True, env=env, cwd=cwd, check=True)
            times[name].append(time.perf_counter() - t)

    def once():
        run_env = env
        if command.endswith("fresh machine"):
            run_env = {**env, "GPUCLASS_CACHE_DIR": tempfile.mkdtemp(dir=fresh)}
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=run_env, cwd=cwd)
        times["gpuclass"].append(time.perf_counter() - t)
        assert proc.returncode in (0, 1), proc.stderr
        return proc.stdout

    out = benchmark.pedantic(once, setup=baselines_once, rounds=rounds, iterations=1, warmup_rounds=1)
    assert out.strip()
    record_interleaved(benchmark, times, {"lspci -nn": START_GOAL} if command == "scan" else {})


@pytest.mark.parametrize("command", sorted(_START_COMMANDS))
def test_lspci_nn_start(benchmark, rounds, command):
    _this_machine()
    lspci = shutil.which("lspci")
    if lspci is None:  # a failure where GPUCLASS_REQUIRE_PCIUTILS=1 (CI)
        recorded.missing("lspci", "apt-get install pciutils")
    benchmark.group = f"cli start: {command}"
    benchmark.extra_info["role"] = "baseline"
    if command == "scan":
        benchmark.extra_info["goal"] = START_GOAL
    out = _time(benchmark, [lspci, "-nn", *recorded.LSPCI_NO_HWDB], rounds)
    assert out.strip()


@pytest.mark.parametrize("command", sorted(_START_COMMANDS))
def test_python_start(benchmark, rounds, command):
    """The interpreter starting and stopping: what no Python command can go under."""
    benchmark.group = f"cli start: {command}"
    benchmark.extra_info["role"] = "baseline"
    _time(benchmark, [sys.executable, "-c", "pass"], rounds)

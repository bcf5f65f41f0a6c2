"""Whole-process time of the command line: what a provisioner pays once per boot.

Groups (each run in the same session, compared by median):

- ``cli import``: ``python -c "import gpuclass"`` vs ``python -c "import numpy"``;
  goal: the import costs at most 1.3x numpy's (``goal`` on the numpy baseline is
  the speed-up gpuclass must reach, 1/1.3).
- ``cli scan``: ``gpuclass scan`` of a GEX44-like root (classification included)
  vs ``lspci -nnmm`` of the same tree and ``python -c "import numpy"``;
  reported, no goal.

Run: ``python -m pytest benchmarks/bench_cli.py --benchmark-only``
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

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

"""Whole-process start of gpuclass commands against ``lspci -nn`` and Python's own start,
rounds interleaved (every command once per round, in turn), medians of wall and CPU time.

CPU time (user + sys of the child, from ``os.wait4``) is the figure to read on a shared
machine: other tenants' load stretches wall time far more than it changes what a process
itself runs.  ``--tree NAME=PATH`` (repeatable) runs each command with ``PYTHONPATH=PATH``
(a checkout per version, built and with bytecode compiled: ``python -m compileall``), so
two versions compare in the same rounds.

Run: ``python benchmarks/scripts/interleaved_start.py --rounds 21 --tree after=.``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS = {"scan": ["scan"], "plan": ["plan"], "labels": ["labels"], "lookup": ["lookup", "10de:27b0"]}


def _runs(trees: dict[str, str]) -> dict[str, tuple[dict[str, str], list[str]]]:
    runs: dict[str, tuple[dict[str, str], list[str]]] = {}
    lspci = shutil.which("lspci")
    if lspci:
        runs["lspci -nn"] = ({}, [lspci, "-nn", "-O", "hwdb.disable=1"])
    runs["python -c pass"] = ({}, [sys.executable, "-c", "pass"])
    runs["import numpy"] = ({}, [sys.executable, "-c", "import numpy"])
    runs["import numpy (1 BLAS thread)"] = ({"OPENBLAS_NUM_THREADS": "1"}, [sys.executable, "-c", "import numpy"])
    for name, argv in COMMANDS.items():
        for tree, path in trees.items():
            extra = {"PYTHONPATH": os.path.abspath(path)} if path else {}  # "": the installed one
            runs[f"{name} [{tree}]"] = (extra, [sys.executable, "-m", "gpuclass", *argv])
    return runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--tree", action="append", default=[], metavar="NAME=PATH")
    args = ap.parse_args()
    trees = dict(t.split("=", 1) for t in args.tree) or {"installed": ""}
    runs = _runs(trees)
    drop = ("OPENBLAS_NUM_THREADS", "PYDANTIC_DISABLE_PLUGINS", "PYTHONPROFILEIMPORTTIME", "PYTHONPATH")
    env0 = {k: v for k, v in os.environ.items() if k not in drop}
    cwd = tempfile.mkdtemp(prefix="gpuclass-outside-")  # not a checkout: nothing imported from cwd
    wall: dict[str, list[float]] = {k: [] for k in runs}
    cpu: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(args.rounds):
        for name, (extra, argv) in runs.items():
            env = dict(env0, **extra)
            t = time.perf_counter()
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
            _, status, usage = os.wait4(proc.pid, 0)
            wall[name].append(time.perf_counter() - t)
            cpu[name].append(usage.ru_utime + usage.ru_stime)
            proc.returncode = os.waitstatus_to_exitcode(status)
    ms = lambda v: 1000 * v  # noqa: E731
    print(f"{'':32s} {'wall median':>12s} {'min':>8s} {'cpu median':>11s} {'min':>8s}  (ms, {args.rounds} rounds)")
    for name in runs:
        print(f"{name:32s} {ms(statistics.median(wall[name])):12.1f} {ms(min(wall[name])):8.1f} "
              f"{ms(statistics.median(cpu[name])):11.1f} {ms(min(cpu[name])):8.1f}")


if __name__ == "__main__":
    main()

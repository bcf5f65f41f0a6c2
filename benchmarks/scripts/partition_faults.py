"""``gpuclass.dask.partition_audit`` in a fresh process, with and without the malloc setting
distributed's nanny gives a worker (``MALLOC_TRIM_THRESHOLD_=65536``, which fixes glibc's
mmap threshold at 128 KiB: every larger block is new pages, each call): the median time of
a call and its page faults (``ru_minflt``), after two calls to warm up.

The partition is ``bench_dask.device_frame(rows)``.  Run, in the test environment (the
``test`` extra has pandas and Dask), from a checkout or with ``--tree PATH`` (a built
checkout, on ``PYTHONPATH``): ``python benchmarks/scripts/partition_faults.py --rows 1000000``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

_CHILD = """import os, resource, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from bench_dask import device_frame
from gpuclass.dask import partition_audit
from gpuclass.policy import compile_policy
part, compiled, calls = device_frame(int(sys.argv[2])), compile_policy(), int(sys.argv[3])
for _ in range(2):
    partition_audit(part, compiled)
times = []
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(calls):
    start = time.perf_counter()
    partition_audit(part, compiled)
    times.append(time.perf_counter() - start)
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
print(f"{1000 * statistics.median(times):.1f} {faults // calls}")
"""

SETTINGS = {"as on a Dask worker (MALLOC_TRIM_THRESHOLD_=65536)": "65536", "glibc's defaults": None}


def measure(rows: int, calls: int, tree: str | None, trim: str | None) -> tuple[float, int]:
    """One process's median milliseconds a call and page faults a call."""
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_TRIM_THRESHOLD_"}
    env["OPENBLAS_NUM_THREADS"] = "1"
    if trim is not None:
        env["MALLOC_TRIM_THRESHOLD_"] = trim
    if tree is not None:
        env["PYTHONPATH"] = str(Path(tree).resolve())
    # run away from a checkout: ``-c`` puts the working directory first on sys.path
    out = subprocess.run([sys.executable, "-c", _CHILD, str(HERE.parent), str(rows), str(calls)],
                         env=env, capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
    ms, faults = out.stdout.split()
    return float(ms), int(faults)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--tree", default=None, metavar="PATH")
    args = ap.parse_args()
    print(f"partition_audit of {args.rows} rows, {args.calls} calls (medians)")
    for name, trim in SETTINGS.items():
        ms, faults = measure(args.rows, args.calls, args.tree, trim)
        print(f"{name}: {ms:.1f} ms, {faults} page faults a call")


if __name__ == "__main__":
    main()

"""Whole-process Parquet to Parquet audits, gpuclass against DuckDB's and polars' scripts
(``duckdb_devices.py``, ``polars_devices.py`` beside this file), rounds interleaved (every
command once per round, in turn), medians of wall time, CPU time and peak RSS (from
``os.wait4``).

The input is ``bench_engines``'s table: ``device_rows(rows, seed=13)`` written with
``pq.write_table``'s defaults, made once per size in ``--data`` (kept between runs).
``--tree NAME=PATH`` (repeatable) adds gpuclass run from a checkout with
``PYTHONPATH=PATH`` (built, bytecode compiled: ``python -m compileall``), so that two
versions compare in the same rounds; without it, the installed ``gpuclass`` runs.

Run, in the test environment (the ``test`` extra has DuckDB and polars):
``python benchmarks/scripts/interleaved_audit.py --rows 100000 --rounds 15 --tree after=.``
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
from pathlib import Path

HERE = Path(__file__).resolve().parent


_MAKE = """import sys
sys.path.insert(0, sys.argv[1])
import pyarrow.parquet as pq
from bench_audit import arrow_table, device_rows
pq.write_table(arrow_table(device_rows(int(sys.argv[2]), seed=13)), sys.argv[3])
"""


def table_file(rows: int, data: Path) -> Path:
    """The table of ``rows``, written by a child process: a child forked from a process that
    loaded pyarrow would count that image in its peak RSS."""
    path = data / f"devices-{rows}.parquet"
    if not path.exists():
        data.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-c", _MAKE, str(HERE.parent), str(rows), str(path)], check=True)
    return path


def commands(src: Path, out: Path, trees: dict[str, str]) -> dict[str, tuple[list[str], dict[str, str]]]:
    env = dict(os.environ)
    runs: dict[str, tuple[list[str], dict[str, str]]] = {}
    if trees:
        for name, path in trees.items():
            tree = str(Path(path).resolve())
            runs[f"gpuclass {name}"] = ([sys.executable, os.path.join(tree, "bin", "gpuclass"), "audit", str(src),
                                         "-o", str(out / f"{name}.parquet")], {**env, "PYTHONPATH": tree})
    else:
        runs["gpuclass"] = ([shutil.which("gpuclass") or "gpuclass", "audit", str(src), "-o",
                             str(out / "gpuclass.parquet")], env)
    for who in ("duckdb", "polars"):
        runs[who] = ([sys.executable, str(HERE / f"{who}_devices.py"), str(src), str(out / f"{who}.parquet")], env)
    return runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "gpuclass-bench-data")
    ap.add_argument("--tree", action="append", default=[], metavar="NAME=PATH")
    args = ap.parse_args()
    trees = dict(t.split("=", 1) for t in args.tree)
    src = table_file(args.rows, args.data)
    with tempfile.TemporaryDirectory() as tmp:
        runs = commands(src, Path(tmp), trees)
        got: dict[str, list[tuple[float, float, float]]] = {k: [] for k in runs}
        for _ in range(args.rounds):
            for name, (argv, env) in runs.items():
                t = time.perf_counter()
                proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                _, status, usage = os.wait4(proc.pid, 0)
                wall = time.perf_counter() - t
                if os.waitstatus_to_exitcode(status) not in (0, 1):
                    raise SystemExit(f"{name}: exit {os.waitstatus_to_exitcode(status)}")
                got[name].append((wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024))
    med = {k: [statistics.median(x[i] for x in v) for i in range(3)] for k, v in got.items()}
    print(f"{args.rows} rows, {args.rounds} rounds interleaved (medians)")
    for name, (wall, cpu, rss) in med.items():
        print(f"{name:22s} wall {wall * 1000:7.1f} ms  cpu {cpu * 1000:7.1f} ms  peak {rss:6.1f} MiB")
    for name in med:
        if name.startswith("gpuclass"):
            print(f"{name}: {med['duckdb'][0] / med[name][0]:.2f}x DuckDB, {med['polars'][0] / med[name][0]:.2f}x polars")


if __name__ == "__main__":
    main()

"""Whole processes, as a user runs them: ``gpuclass audit`` against the script a user writes instead.

Each group starts a fresh Python process per round for gpuclass and for its baseline (the
scripts in ``benchmarks/scripts/``), on the same input, and records each process's peak
resident memory (``extra_info["peak_rss_mib"]``, from ``wait4`` in a small launcher, in
one more run after the timed ones).

- ``whole parquet 5M``: a 5M-row Parquet device table (1M servers, a third with GPUs) to a
  Parquet file of one row per server: ``gpuclass audit devices.parquet -o servers.parquet``
  against ``scripts/pyarrow_devices.py`` (read with dictionary IDs, ``is_in`` and comparisons
  once per distinct ID, ``group_by``, write; the same servers and slices; goal 1.5x, and
  gpuclass under 1 GiB).  500k rows with ``GPUCLASS_BENCH_QUICK=1``.
- ``whole feed 3k`` and ``whole feed 200k``: an auction feed of 3,000 (and 200,000) servers
  (the sample feed's server models, their memory and disk lines varied: most descriptions
  differ, their lines repeat, as in a live auction) to CSV: ``gpuclass audit feed.json -o out.csv`` (the matcher cache warm) against
  ``scripts/regex_listings.py`` (``json.load``, one compiled regex; goals 1.5x and 3x, and
  at 200k at most a quarter of the script's memory).  20,000 for the large feed with
  ``GPUCLASS_BENCH_QUICK=1``.

Run: ``python -m pytest benchmarks/bench_whole.py``.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import helpers
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("ahocorasick")

HERE = Path(__file__).parent
ROOT = HERE.parent
SCRIPTS = HERE / "scripts"


# Processes start outside the source tree, through the installed command, as a user's would.
NEUTRAL = helpers.outside_tree()


def _run(argv: list[str], env: dict) -> None:
    """One process to the end (exit 0, or 1 for flagged rows)."""
    proc = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=NEUTRAL)
    assert proc.returncode in (0, 1), f"{argv}: exit {proc.returncode}: {proc.stderr[-2000:]!r}"


# Linux counts the pre-exec image into a child's peak RSS: a process forked from this one
# (holding the benchmarks' inputs) would report this process's size.  A small launcher
# starts the command instead and reports the command's own peak from wait4.
_LAUNCHER = """
import os, subprocess, sys
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(proc.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


def _peak_rss_mib(argv: list[str], env: dict) -> float:
    out = subprocess.run([sys.executable, "-c", _LAUNCHER, *argv], env=env, cwd=NEUTRAL,
                         capture_output=True, text=True, check=True)
    code, kib = out.stdout.split()
    assert int(code) in (0, 1), f"{argv}: exit {code}: {out.stderr[-2000:]}"
    return int(kib) / 1024


def _time(benchmark, argv: list[str], env: dict, role: str, goal: float | None = None,
          rounds: int = 3) -> None:
    """The process timed over ``rounds``, then run once more for its peak resident memory
    (``extra_info["peak_rss_mib"]``)."""
    benchmark.extra_info["role"] = role
    if goal is not None:
        benchmark.extra_info["goal"] = goal
    benchmark.pedantic(_run, args=(argv, env), rounds=rounds, iterations=1, warmup_rounds=1)
    benchmark.extra_info["peak_rss_mib"] = _peak_rss_mib(argv, env)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """A private cache (the matcher's and the database's) warmed by the first round; the
    processes run the same core as this one."""
    import gpuclass._native as native

    env = {**os.environ, "GPUCLASS_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))}
    there = subprocess.run([sys.executable, "-c", "import gpuclass._native as n; print(n.core.IS_COMPILED)"],
                           env=env, cwd=NEUTRAL, capture_output=True, text=True, check=True).stdout.strip()
    assert there == str(native.core.IS_COMPILED)
    return env


# -- Parquet device tables ---------------------------------------------------------------

@pytest.fixture(scope="module")
def devices_parquet(tmp_path_factory, quick):
    sys.path.insert(0, str(HERE))
    from bench_dask import device_frame

    n = 500_000 if quick else 5_000_000
    path = tmp_path_factory.mktemp("parquet") / "devices.parquet"
    pq.write_table(pa.Table.from_pandas(device_frame(n, seed=11), preserve_index=False), path)
    return path


@pytest.mark.benchmark(group="whole parquet 5M")
def test_whole_parquet_gpuclass(benchmark, devices_parquet, env, tmp_path):
    out = tmp_path / "servers.parquet"
    _time(benchmark, [*helpers.COMMAND, "audit", str(devices_parquet), "-o", str(out)],
          env, "gpuclass")
    t = pq.read_table(out)
    assert int(pc_sum(t["rows"])) == pq.ParquetFile(devices_parquet).metadata.num_rows
    assert benchmark.extra_info["peak_rss_mib"] < 1024


@pytest.mark.benchmark(group="whole parquet 5M")
def test_whole_parquet_pyarrow_baseline(benchmark, devices_parquet, env, tmp_path):
    out = tmp_path / "servers.parquet"
    _time(benchmark, [sys.executable, str(SCRIPTS / "pyarrow_devices.py"), str(devices_parquet), str(out)],
          env, "baseline", goal=1.5)
    # the same answer as gpuclass's: servers, and slices in all
    theirs, ours = pq.read_table(out), _gpuclass_parquet(devices_parquet, env, tmp_path)
    assert theirs.num_rows == ours.num_rows
    assert pc_sum(theirs["slices"]) == pc_sum(ours["slices"]) > 0


def _gpuclass_parquet(devices, env, tmp_path):
    out = tmp_path / "gpuclass-servers.parquet"
    _run([*helpers.COMMAND, "audit", str(devices), "-o", str(out)], env)
    return pq.read_table(out)


def pc_sum(column):
    import pyarrow.compute as pc

    return pc.sum(column).as_py()


# -- auction feeds -------------------------------------------------------------------------

_PARTS = (("ram", ("RAM", "DDR")), ("disk", ("SSD", "HDD", "NVMe")), ("nic", ("NIC",)))


def _part(line: str) -> str | None:
    """What a description line lists (a GPU or CPU line: None, kept as the record has it)."""
    if "GPU" in line or "RTX" in line or "GTX" in line or "Nvidia" in line or "NVIDIA" in line:
        return None
    return next((part for part, words in _PARTS if any(w in line for w in words)), None)


def write_feed(path: Path, n: int, seed: int = 3) -> Path:
    """``n`` servers, each with its own id, made from the sample feed's records as an auction
    lists them: the same server models again and again, but their memory and disks vary
    (each such line drawn from the sample's lines of its kind, disk counts 1, 2 or 4), so
    that most records' descriptions differ while their lines repeat."""
    data = json.loads((ROOT / "examples" / "auction-sample_EUR.json").read_text(encoding="utf-8"))
    records = data["server"] if isinstance(data, dict) else data
    pools: dict[str, list[str]] = {}
    for rec in records:
        for line in rec.get("description") or []:
            part = _part(line)
            if part is not None:
                pools.setdefault(part, []).append(line.split("x ", 1)[-1] if part == "disk" else line)
    pools = {k: sorted(set(v)) for k, v in pools.items()}
    rng = random.Random(seed)
    servers = []
    for i in range(n):
        rec = dict(rng.choice(records))
        desc = []
        for line in rec.get("description") or []:
            part = _part(line)
            if part == "disk":
                line = f"{rng.choice((1, 2, 4))}x {rng.choice(pools['disk'])}"
            elif part is not None:
                line = rng.choice(pools[part])
            desc.append(line)
        rec["description"] = desc
        rec["id"] = 2_000_000 + i
        servers.append(rec)
    path.write_text(json.dumps({"server": servers}), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def feed_3k(tmp_path_factory):
    return write_feed(tmp_path_factory.mktemp("feed") / "live_data_sb_EUR.json", 3_000)


@pytest.fixture(scope="module")
def feed_200k(tmp_path_factory, quick):
    return write_feed(tmp_path_factory.mktemp("feed") / "live_data_sb_EUR.json", 20_000 if quick else 200_000)


def _feed_gpuclass(benchmark, feed, env, tmp_path, rounds):
    out = tmp_path / "out.csv"
    _time(benchmark, [*helpers.COMMAND, "audit", str(feed), "-o", str(out)], env, "gpuclass",
          rounds=rounds)
    assert out.read_text().count("\n") == len(json.loads(feed.read_text())["server"]) + 1


@pytest.mark.benchmark(group="whole feed 3k")
def test_whole_feed_3k_gpuclass(benchmark, feed_3k, env, tmp_path):
    _feed_gpuclass(benchmark, feed_3k, env, tmp_path, rounds=7)


@pytest.mark.benchmark(group="whole feed 3k")
def test_whole_feed_3k_regex_baseline(benchmark, feed_3k, env, tmp_path):
    _time(benchmark, [sys.executable, str(SCRIPTS / "regex_listings.py"), str(feed_3k), str(tmp_path / "o.csv")],
          env, "baseline", goal=1.5, rounds=7)


@pytest.mark.benchmark(group="whole feed 200k")
def test_whole_feed_200k_gpuclass(benchmark, feed_200k, env, tmp_path):
    _feed_gpuclass(benchmark, feed_200k, env, tmp_path, rounds=2)


@pytest.mark.benchmark(group="whole feed 200k")
def test_whole_feed_200k_regex_baseline(benchmark, feed_200k, env, tmp_path):
    _time(benchmark, [sys.executable, str(SCRIPTS / "regex_listings.py"), str(feed_200k),
                      str(tmp_path / "o.csv")], env, "baseline", goal=3.0, rounds=2)

"""gpuclass against DuckDB and polars, written as their users write them, and the copy floor.

Every group computes the same per-server answer under the default policy: for each server,
``gpu_capable``, ``supported_cards``, ``slices`` (4 per supported card), ``unsupported_gpus``
(NVIDIA GPU functions of no allowlisted card), one ``cards.<card id>`` count per allowlisted
card, and ``rows``.  These are the columns of ``audit_table().table`` / ``gpuclass audit -o
x.parquet`` that the DuckDB query and the polars plan compute too (gpuclass's ``row``,
``invalid_rows``, ``problems`` and ``conflicts`` have no counterpart there).  Before any
timing, each group's fixture runs all three once on the benchmark's data and asserts the
same answer on those columns, server by server.  The DuckDB query and the polars plan are
``scripts/duckdb_devices.py`` and ``scripts/polars_devices.py``; both engines run on all
cores, as they do by default.

The data is ``bench_audit.device_rows`` (1M hex rows, ~208,000 servers, a GPU and its audio
on three servers in ten, traps included), and for "10x" ten copies of it, each with its own
server names (10M rows, ~2.08M servers).  ``GPUCLASS_BENCH_QUICK=1``: 100k and 1M.

Groups (rounds of gpuclass and both engines are also taken in turn, before each of
gpuclass's rounds, and their medians printed as "interleaved": on a busy machine those are
the ratios to read):

- ``engines parquet 1M`` / ``engines parquet 10M``: the whole process, Parquet to Parquet:
  ``gpuclass audit devices.parquet -o servers.parquet`` against ``python duckdb_devices.py``
  (``COPY (SELECT ... GROUP BY server) TO``) and ``python polars_devices.py``
  (``scan_parquet(...).group_by(...).agg(...).sink_parquet``), each a fresh process; each
  records its peak resident memory (``extra_info["peak_rss_mib"]``, from ``wait4``: the
  median of three more runs after the timed ones).  Goals: 1.2x DuckDB, 1.5x polars (and no more memory than
  DuckDB: printed, not asserted).
- ``engines table 1M`` / ``engines table 10M``: in process, ``gpuclass.audit_table(table)``
  on a pyarrow table of hex text against DuckDB's query over the same table (a replacement
  scan, the result fetched as an Arrow table) and polars' plan on ``pl.from_arrow(table)``,
  collected (the conversion is part of what a polars user given the table pays).  Goal:
  1.5x polars.  The copy floor is a baseline too: ``np.copyto`` of the Arrow buffers of the
  four columns the default policy reads (server, vendor, device, class: offsets and bytes)
  into memory allocated once before timing; a ratio under 1 says how far from it gpuclass
  is (no goal).

- ``engines csv 1M`` / ``engines csv 10M``: the same whole processes from a CSV copy of
  the table (every cell quoted): ``gpuclass audit devices.csv -o servers.parquet`` against
  DuckDB's query over ``read_csv(..., all_varchar = true)`` and polars' plan over
  ``scan_csv(..., infer_schema=False)`` (the IDs are hex text: type detection would read
  a class such as ``0300`` as a number).  Recorded, no goal.

- ``parquet writer 1M`` / ``parquet writer 10M``: the Parquet sink's writer
  (``gpuclass.audit.sinks.parquet_file``, over the core's page encodings) against pyarrow's
  ``ParquetWriter`` given the same choices (dictionaries where values repeat, the row
  numbers delta-encoded, statistics for ``row`` and ``server`` only: what gpuclass asked
  of pyarrow before), each writing the typed chunks a streamed audit of that size gives
  (``AuditRun.chunks(settled=True)``), in process; both files read back equal.

Run: ``python -m pytest benchmarks/bench_engines.py`` (``GPUCLASS_BENCH_QUICK=1``: under a minute).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import helpers
import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pc = pytest.importorskip("pyarrow.compute")
duckdb = pytest.importorskip("duckdb")
pl = pytest.importorskip("polars")

HERE = Path(__file__).parent
SCRIPTS = HERE / "scripts"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(SCRIPTS))

import duckdb_devices  # noqa: E402
import polars_devices  # noqa: E402
from bench_audit import arrow_table, device_rows  # noqa: E402

from gpuclass.audit import audit_table  # noqa: E402

CARDS = list(duckdb_devices.ALLOWED)
SHARED = ("gpu_capable", "supported_cards", "slices", "unsupported_gpus",
          *(f"cards.{c}" for c in CARDS), "rows")
GOALS = {"duckdb": 1.2, "polars": 1.5}   # Parquet to Parquet, whole process
TABLE_GOALS = {"polars": 1.5}            # audit_table in process
NEUTRAL = helpers.outside_tree()


def per_server(table) -> dict:
    """``{server: (shared columns...)}``, whatever the row order and integer widths."""
    if isinstance(table, pl.DataFrame):
        table = table.to_arrow()
    cols = [table[c].to_pylist() for c in SHARED]
    return {s: tuple(int(col[i]) for col in cols) for i, s in enumerate(table["server"].to_pylist())}


def assert_same(ours, theirs, who: str) -> None:
    a, b = per_server(ours), per_server(theirs)
    assert len(a) == len(b), f"{who}: {len(b)} servers, gpuclass {len(a)}"
    diff = [s for s in a if a[s] != b.get(s)]
    assert not diff, (f"{who} differs from gpuclass on {len(diff)} servers, "
                      f"e.g. {diff[0]}: {a[diff[0]]} vs {b.get(diff[0])}")
    assert sum(v[1] for v in a.values()) > 0  # the data does hold supported cards


# -- the data ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tables(quick):
    """``{"1M": table, "10M": table}``: the base table and ten renamed copies of it."""
    small = arrow_table(device_rows(100_000 if quick else 1_000_000, seed=13))
    copies = [small.set_column(0, "server", pc.binary_join_element_wise(f"c{i}-", small["server"], ""))
              for i in range(10)]
    return {"1M": small, "10M": pa.concat_tables(copies).combine_chunks()}


def _files(tables, d, suffix, write):
    """``{size: path}``: each table written by ``write(table, path)`` to ``devices-SIZE.SUFFIX``."""
    out = {size: d / f"devices-{size}.{suffix}" for size in tables}
    for size, t in tables.items():
        write(t, out[size])
    return out


@pytest.fixture(scope="module")
def parquet_files(tables, tmp_path_factory):
    return _files(tables, tmp_path_factory.mktemp("engines"), "parquet", pq.write_table)


# -- in process ----------------------------------------------------------------------------

_CON = duckdb.connect()


def duckdb_table(table):
    """DuckDB's query over the pyarrow table (a replacement scan of the local name), to Arrow."""
    con = _CON
    con.register("devices", table)
    try:
        rel = con.sql(duckdb_devices.query("devices"))
        # to_arrow_table: DuckDB 1.5 and later (fetch_arrow_table warns there)
        return (getattr(rel, "to_arrow_table", None) or rel.fetch_arrow_table)()
    finally:
        con.unregister("devices")


def polars_table(table):
    return polars_devices.plan(pl.from_arrow(table).lazy()).collect()


def gpuclass_table(table):
    return audit_table(table).table


def copy_floor(table):
    """The buffers the default policy's audit must read, and memory for them allocated once;
    the returned function copies the one into the other."""
    src = []
    for name in ("server", "vendor", "device", "class"):
        for chunk in table[name].chunks:
            src += [np.frombuffer(b, np.uint8) for b in chunk.buffers() if b is not None]
    dst = [np.empty_like(s) for s in src]
    for s, d in zip(src, dst):  # touch the pages once
        np.copyto(d, s)

    def copy():
        for s, d in zip(src, dst):
            np.copyto(d, s)
    copy.nbytes = sum(s.nbytes for s in src)
    return copy


IN_PROCESS = {"duckdb": duckdb_table, "polars": polars_table}


@pytest.fixture(scope="module")
def checked_tables(tables):
    """The tables, once every engine has given gpuclass's answer on each."""
    for size, t in tables.items():
        ours = gpuclass_table(t)
        for who, fn in IN_PROCESS.items():
            assert_same(ours, fn(t), f"{who} on {size}")
    return tables


def _table_rounds(size, quick):
    return (5, 3) if size == "1M" else (3, 2) if not quick else (5, 3)


@pytest.mark.parametrize("size", ["1M", "10M"])
def test_engines_table_gpuclass(benchmark, checked_tables, size, quick, record_interleaved):
    """``audit_table``; before each round the baselines run once, timed here (interleaved)."""
    t = checked_tables[size]
    benchmark.group = f"engines table {size}"
    benchmark.extra_info["role"] = "gpuclass"
    times = {name: [] for name in ("gpuclass", *IN_PROCESS)}

    def others():
        for name, fn in IN_PROCESS.items():
            s = time.perf_counter()
            fn(t)
            times[name].append(time.perf_counter() - s)

    def once():
        s = time.perf_counter()
        out = gpuclass_table(t)
        times["gpuclass"].append(time.perf_counter() - s)
        return out

    rounds, _ = _table_rounds(size, quick)
    benchmark.pedantic(once, setup=others, rounds=rounds, iterations=1, warmup_rounds=1)
    benchmark.extra_info["rows_per_s"] = t.num_rows / benchmark.stats.stats.median
    record_interleaved(benchmark, times, TABLE_GOALS)


@pytest.mark.parametrize("engine", sorted(IN_PROCESS))
@pytest.mark.parametrize("size", ["1M", "10M"])
def test_engines_table_baseline(benchmark, checked_tables, size, engine, quick):
    t = checked_tables[size]
    benchmark.group = f"engines table {size}"
    benchmark.extra_info["role"] = "baseline"
    if engine in TABLE_GOALS:
        benchmark.extra_info["goal"] = TABLE_GOALS[engine]
    _, rounds = _table_rounds(size, quick)
    benchmark.pedantic(IN_PROCESS[engine], args=(t,), rounds=rounds, iterations=1, warmup_rounds=1)


@pytest.mark.parametrize("size", ["1M", "10M"])
def test_engines_table_copy_floor(benchmark, tables, size):
    """The floor: the bytes of the four columns copied into memory allocated before timing."""
    copy = copy_floor(tables[size])
    benchmark.group = f"engines table {size}"
    benchmark.extra_info.update(role="baseline", bytes=copy.nbytes)
    benchmark.pedantic(copy, rounds=7, iterations=1, warmup_rounds=1)


# -- whole processes, Parquet to Parquet ----------------------------------------------------

# As in bench_whole: a child forked from this process would count this process's image in
# its peak RSS, so a small launcher starts the command and reports its own peak (wait4).
_LAUNCHER = """
import os, subprocess, sys
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(proc.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """A private cache; the processes run the same core as this one."""
    import gpuclass._native as native

    env = {**os.environ, "GPUCLASS_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))}
    there = subprocess.run([sys.executable, "-c",
                            "import gpuclass._native as n; print(n.core.IS_COMPILED)"],
                           env=env, cwd=NEUTRAL, capture_output=True, text=True, check=True).stdout.strip()
    assert there == str(native.core.IS_COMPILED)
    return env


def _argv(who: str, src: Path, out: Path) -> list[str]:
    if who == "gpuclass":
        return [*helpers.COMMAND, "audit", str(src), "-o", str(out)]
    return [sys.executable, str(SCRIPTS / f"{who}_devices.py"), str(src), str(out)]


def _run(argv, env) -> None:
    proc = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=NEUTRAL)
    assert proc.returncode in (0, 1), f"{argv}: exit {proc.returncode}: {proc.stderr[-2000:]!r}"


# Runs whose peak resident memory is measured, the median kept: one run's peak moved by
# up to 15 MiB from one CI run to the next (DuckDB's at 1M rows: 113.5 to 130.4 MiB)
PEAK_RUNS = 3


def _peak_rss_mib(argv, env) -> float:
    peaks = []
    for _ in range(PEAK_RUNS):
        out = subprocess.run([sys.executable, "-c", _LAUNCHER, *argv], env=env, cwd=NEUTRAL,
                             capture_output=True, text=True, check=True)
        code, kib = out.stdout.split()
        assert int(code) in (0, 1), f"{argv}: exit {code}: {out.stderr[-2000:]}"
        peaks.append(int(kib) / 1024)
    return statistics.median(peaks)


WHOLE = ("gpuclass", "duckdb", "polars")


@pytest.fixture(scope="module")
def csv_files(tables, tmp_path_factory):
    """The same tables as CSV, every cell quoted (as pyarrow's and many exports write it)."""
    import pyarrow.csv as pcsv

    return _files(tables, tmp_path_factory.mktemp("engines-csv"), "csv", pcsv.write_csv)


@pytest.fixture(scope="module")
def checked_inputs(parquet_files, csv_files, env, tmp_path_factory):
    """``{(format, size): path}``, once each process has written gpuclass's answer for each."""
    d = tmp_path_factory.mktemp("answers")
    inputs = {("parquet", size): src for size, src in parquet_files.items()}
    inputs.update({("csv", size): src for size, src in csv_files.items()})
    for (fmt, size), src in inputs.items():
        outs = {}
        for who in WHOLE:
            outs[who] = d / f"{who}-{fmt}-{size}.parquet"
            _run(_argv(who, src, outs[who]), env)
        ours = pq.read_table(outs["gpuclass"])
        for who in WHOLE[1:]:
            assert_same(ours, pq.read_table(outs[who]), f"{who} on {size}.{fmt}")
    return inputs


def _whole_rounds(size, quick):
    # quick sizes (100k and 1M rows) take 11 interleaved rounds: the median of 5 moved by
    # 5-8% from one CI run to the next on the same code (BENCHMARKS.md, session 48)
    return 11 if quick else 5 if size == "1M" else 3


FORMAT_GOALS = {"parquet": GOALS, "csv": {}}  # CSV: recorded


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("size", ["1M", "10M"])
def test_engines_whole_gpuclass(benchmark, checked_inputs, env, tmp_path, size, fmt, quick,
                                record_interleaved):
    """``gpuclass audit``; before each round DuckDB's and polars' processes run once, timed
    here (interleaved)."""
    src = checked_inputs[fmt, size]
    benchmark.group = f"engines {fmt} {size}"
    benchmark.extra_info["role"] = "gpuclass"
    times = {who: [] for who in WHOLE}

    def timed(who):
        argv = _argv(who, src, tmp_path / f"{who}.parquet")
        s = time.perf_counter()
        _run(argv, env)
        times[who].append(time.perf_counter() - s)

    benchmark.pedantic(timed, args=("gpuclass",), setup=lambda: [timed(w) for w in WHOLE[1:]] and None,
                       rounds=_whole_rounds(size, quick), iterations=1, warmup_rounds=1)
    record_interleaved(benchmark, times, FORMAT_GOALS[fmt])
    benchmark.extra_info["peak_rss_mib"] = _peak_rss_mib(_argv("gpuclass", src, tmp_path / "g.parquet"), env)


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("size", ["1M", "10M"])
def test_engines_whole_baseline(benchmark, checked_inputs, env, tmp_path, size, fmt, engine, quick):
    src = checked_inputs[fmt, size]
    benchmark.group = f"engines {fmt} {size}"
    benchmark.extra_info["role"] = "baseline"
    goal = FORMAT_GOALS[fmt].get(engine)
    if goal is not None:
        benchmark.extra_info["goal"] = goal
    argv = _argv(engine, src, tmp_path / "out.parquet")
    benchmark.pedantic(_run, args=(argv, env), rounds=max(2, _whole_rounds(size, quick) - 2),
                       iterations=1, warmup_rounds=1)
    benchmark.extra_info["peak_rss_mib"] = _peak_rss_mib(argv, env)


# -- the Parquet writer ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def typed_chunks(parquet_files):
    """Each size's audit as the Parquet sink gets it: the typed chunks of a streamed run."""
    from gpuclass.audit import audit_paths

    out = {}
    for size, src in parquet_files.items():
        run = audit_paths([src])
        chunks = list(run.chunks(settled=True))
        out[size] = [c.typed(c.compiled.card_ids) for c in chunks]
    return out


def _write_parquet(who, chunks, path):
    from gpuclass.audit.sinks.parquet import parquet_writer

    schema = chunks[0].schema
    if who == "gpuclass":
        writer = parquet_writer(path, schema)
    else:  # pyarrow's writer, given the choices gpuclass made for it before it had its own
        writer = pq.ParquetWriter(path, schema, use_dictionary=[n for n in schema.names if n not in ("row", "server")],
                                  column_encoding={"row": "DELTA_BINARY_PACKED"}, write_statistics=["row", "server"])
    for t in chunks:
        writer.write_table(t, row_group_size=1 << 20)
    writer.close()


@pytest.mark.parametrize("who", ["gpuclass", "pyarrow"])
@pytest.mark.parametrize("size", ["1M", "10M"])
def test_parquet_writer(benchmark, typed_chunks, tmp_path, size, who):
    chunks = typed_chunks[size]
    benchmark.group = f"parquet writer {size}"
    benchmark.extra_info["role"] = "gpuclass" if who == "gpuclass" else "baseline"
    path = tmp_path / f"{who}.parquet"
    benchmark.pedantic(_write_parquet, args=(who, chunks, path), rounds=5, iterations=1, warmup_rounds=1)
    other = tmp_path / "other.parquet"
    _write_parquet("pyarrow" if who == "gpuclass" else "gpuclass", chunks, other)
    assert pq.read_table(path).equals(pq.read_table(other))

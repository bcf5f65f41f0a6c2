"""Streaming device-table audits: any batching gives the row-by-row answers, in bounded memory."""

from __future__ import annotations

import random

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from gpuclass.audit import audit_device_rows  # noqa: E402
from gpuclass.audit.columnar import audit_table  # noqa: E402
from gpuclass.audit.stream import audit_parquet, iter_audit, result_schema, write_parquet  # noqa: E402
from gpuclass.errors import InputError, SourceError  # noqa: E402
from gpuclass.policy import compile_policy  # noqa: E402

FIELDS = ("server", "vendor", "device", "subvendor", "subdevice", "class")
CELLS = ["10de", "27b0", "22bc", "1b80", "1b06", "8086", "0300", "030000", "0403", "0302", "",
         None, " 10DE ", "0x2bb5", "zz", "1e30", "2bb1", "26b1", "0c0330"]


def _table(rows):
    return pa.table({f: pa.array([r[i] for r in rows], pa.string()) for i, f in enumerate(FIELDS)})


def _answers(reports):
    return [(r.row, r.server, r.supported_cards, r.slices, r.unsupported_gpus, sorted(r.unsupported),
             r.rows, sorted((c["card"], c["count"]) for c in r.cards), r.problems, r.gpu_capable,
             r.reason) for r in reports]


def _rows(rng, servers, repeats=True):
    """Rows grouped by server, then (with ``repeats``) some servers coming back later and
    rows without a server."""
    order = [s for s in servers for _ in range(rng.randint(1, 6))]
    if repeats:
        for _ in range(rng.randint(0, 4)):
            order.insert(rng.randrange(len(order) + 1), rng.choice(servers + [None]))
    return [(s, *(rng.choice(CELLS) for _ in range(5))) for s in order]


@pytest.mark.parametrize("seed", range(30))
def test_any_batching_gives_the_row_path_answers(seed, core):
    rng = random.Random(seed)
    servers = [f"s{k:03d}" for k in range(rng.randint(1, 40))]
    if rng.random() < 0.5:
        rng.shuffle(servers)  # keys out of order: repeats are told by a set
    rows = _rows(rng, servers)
    want = _answers(audit_device_rows(rows))
    table = _table(rows)
    batch = rng.choice([1, 2, 3, 7, 64, 10_000])
    chunk = rng.choice([1, 2, 5, 17, 1 << 20])
    got = [r for t in iter_audit(table.to_batches(max_chunksize=batch), chunk_rows=chunk, kernel=core)
           for r in t]
    assert _answers(got) == want


def test_a_server_split_across_row_groups_is_one_row(tmp_path):
    rows = [("a", "10de", "27b0", "", "", "0300")] * 5 + [("b", "10de", "2bb5", "", "", "0302")] * 3
    path = tmp_path / "devices.parquet"
    pq.write_table(_table(rows), path, row_group_size=2)
    assert pq.ParquetFile(path).num_row_groups == 4
    out = tmp_path / "servers.parquet"
    assert write_parquet(audit_parquet(path, chunk_rows=1), out) == 2
    got = pq.read_table(out)
    assert got.column("server").to_pylist() == ["a", "b"]
    assert got.column("supported_cards").to_pylist() == [5, 3]
    assert got.column("rows").to_pylist() == [5, 3]
    assert got.column("first_row").to_pylist() == [0, 5]
    assert got.schema == result_schema(compile_policy())


def test_parquet_out_equals_the_in_memory_table(tmp_path):
    rng = random.Random(7)
    rows = _rows(rng, [f"srv-{k:04d}" for k in range(300)], repeats=False)
    path = tmp_path / "devices.parquet"
    pq.write_table(_table(rows), path, row_group_size=97)
    out = tmp_path / "servers.parquet"
    write_parquet(audit_parquet(path, chunk_rows=100), out)
    assert pq.read_table(out).equals(audit_table(_table(rows)).table.cast(result_schema(compile_policy())))


def test_text_id_columns_are_read_as_dictionaries(tmp_path):
    """A Parquet table's text ID columns come as dictionaries (each row group's few IDs
    read and parsed once), its server names and integer IDs as they are."""
    from gpuclass.audit.tables import parquet_batches

    rows = _rows(random.Random(5), [f"srv-{k:03d}" for k in range(200)], repeats=False)
    t = _table(rows)
    t = t.set_column(t.schema.get_field_index("class"), "class",
                     pa.array([0x030000 if i % 3 else None for i in range(len(rows))], pa.int64()))
    path = tmp_path / "devices.parquet"
    pq.write_table(t, path, row_group_size=64)
    batches = list(parquet_batches(path, None))
    types = {f.name: f.type for f in batches[0].schema}
    assert types["server"] == pa.string() and types["class"] == pa.int64()
    assert all(pa.types.is_dictionary(types[f]) for f in ("vendor", "device", "subvendor", "subdevice"))
    got = audit_table(pa.Table.from_batches(batches)).table
    assert got.equals(audit_table(t).table)


def _encodings(path, column):
    md = pq.ParquetFile(path).metadata
    names = md.schema.to_arrow_schema().names
    return {e for g in range(md.num_row_groups) for e in md.row_group(g).column(names.index(column)).encodings}


def test_written_columns_are_dictionary_encoded_where_values_repeat(tmp_path):
    """A server's own name and row number are written plain (a dictionary of them would be
    as long as the column); counts and texts, whose values repeat, as a dictionary."""
    rows = _rows(random.Random(3), [f"srv-{k:04d}" for k in range(2000)], repeats=False)
    path = tmp_path / "devices.parquet"
    pq.write_table(_table(rows), path)
    out = tmp_path / "servers.parquet"
    write_parquet(audit_parquet(path), out)
    for column in ("server", "first_row"):
        assert not any("DICTIONARY" in e for e in _encodings(out, column)), column
    for column in ("slices", "rtx-6000-ada", "problems"):
        assert any("DICTIONARY" in e for e in _encodings(out, column)), column
    assert pq.read_table(out).equals(audit_table(_table(rows)).table.cast(result_schema(compile_policy())))


def test_servers_coming_back_are_flagged_not_merged():
    rows = [("a", "10de", "27b0", "", "", "0300"), ("b", "10de", "27b0", "", "", "0300"),
            ("a", "10de", "2bb5", "", "", "0302"), ("a", "10de", "2bb5", "", "", "0302")]
    reports = [r for t in iter_audit(_table(rows).to_batches(max_chunksize=1), chunk_rows=1) for r in t]
    assert [(r.server, r.supported_cards) for r in reports] == [("a", 1), ("b", 1), ("a", 2)]
    assert reports[2].problems == ["rows of server 'a' are not next to each other: "
                                   "this report covers rows 3-4 only"]
    assert reports[0].problems == reports[1].problems == []


def test_keys_in_order_then_out_of_order():
    """The first key out of order still finds every key written before it."""
    first = [(f"k{i:02d}", "10de", "27b0", "", "", "0300") for i in range(10)]
    later = [("k03", "10de", "27b0", "", "", "0300"), ("k99", "10de", "27b0", "", "", "0300"),
             ("k07", "10de", "27b0", "", "", "0300")]
    reports = [r for t in iter_audit(_table(first + later).to_batches(max_chunksize=4), chunk_rows=4)
               for r in t]
    flagged = [r.server for r in reports if r.problems]
    assert flagged == ["k03", "k07"]
    assert _answers(reports) == _answers(audit_device_rows(first + later))


def test_results_come_before_the_input_ends():
    """Bounded memory: a chunk's servers are written before later batches are read."""
    read = []

    def batches():
        for i in range(50):
            read.append(i)
            yield _table([(f"s{i:02d}", "10de", "27b0", "", "", "0300")] * 10).to_batches()[0]

    stream = iter_audit(batches(), chunk_rows=30)
    first = next(stream)
    assert len(read) <= 4 and first.table.num_rows >= 2
    assert sum(t.table.num_rows for t in stream) + first.table.num_rows == 50


def test_integer_id_columns_stream_too(core):
    rows = [("a", 0x10de, 0x27b0, None, None, 0x030000), ("a", 0x10de, 0x22bc, None, None, 0x040300),
            ("b", 0x10de, 0x1e30, None, None, 0x030000)]
    table = pa.table({f: pa.array([r[i] for r in rows], pa.string() if i == 0 else pa.int64())
                      for i, f in enumerate(FIELDS)})
    got = [r for t in iter_audit(table.to_batches(max_chunksize=1), chunk_rows=1, kernel=core) for r in t]
    assert [(r.server, r.slices, r.unsupported_gpus) for r in got] == [("a", 4, 0), ("b", 0, 1)]


def test_empty_and_unreadable_inputs(tmp_path):
    empty = tmp_path / "empty.parquet"
    pq.write_table(_table([]), empty)
    out = tmp_path / "out.parquet"
    assert write_parquet(audit_parquet(empty), out) == 0
    assert pq.read_table(out).schema == result_schema(compile_policy())
    assert list(iter_audit([])) == []
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(SourceError, match="bad.parquet.*not a Parquet file"):
        audit_parquet(bad)
    lacking = tmp_path / "lacking.parquet"
    pq.write_table(pa.table({"server": ["a"], "vendor": ["10de"]}), lacking)
    with pytest.raises(InputError, match="lacks columns"):
        audit_parquet(lacking)


class _Colliding:
    """A kernel whose key hashes all collide: repeats must still be told exactly."""

    def __init__(self, core):
        self.core = core

    def __getattr__(self, name):
        return getattr(self.core, name)

    def key_hashes(self, column, seed):
        import numpy as np
        return np.full(column.n, 42, dtype=np.uint64)


@pytest.mark.parametrize("seed", range(8))
def test_repeats_are_exact_when_every_hash_collides(seed, core):
    rng = random.Random(seed)
    servers = [f"h{k}" for k in range(25)]
    rng.shuffle(servers)
    rows = _rows(rng, servers)
    want = _answers(audit_device_rows(rows))
    got = [r for t in iter_audit(_table(rows).to_batches(max_chunksize=3), chunk_rows=rng.choice([1, 4, 50]),
                                 kernel=_Colliding(core)) for r in t]
    assert _answers(got) == want


@pytest.mark.parametrize("seed", range(10))
def test_parquet_rows_from_columns_equal_rows_from_reports(seed):
    """The two ways `--format parquet` makes its rows agree: chunks a column at a time, and
    reports one by one (listings)."""
    from gpuclass.audit.stream import output_table, reports_table

    rng = random.Random(seed)
    rows = _rows(rng, [f"s{k}" for k in range(rng.randint(1, 30))])
    result = audit_table(_table(rows))
    assert output_table(result).equals(reports_table(list(result), result.compiled))


def test_blank_server_names_are_no_names(core):
    """Empty or whitespace-only server cells (ASCII or Unicode spaces) name no server, as in the
    row path: each such row is a report of its own, flagged."""
    blanks = ["", " ", "\t", "\u00a0", "\u2003 ", "\u3000", "\x1c"]
    rows = [(b, "10de", "27b0", "", "", "0300") for b in blanks] + [("a", "10de", "27b0", "", "", "0300"),
                                                                    ("\u200b", "10de", "27b0", "", "", "0300")]
    want = _answers(audit_device_rows(rows))
    got = [r for t in iter_audit(_table(rows).to_batches(), kernel=core) for r in t]
    assert _answers(got) == want
    assert [r.server for r in got] == [None] * len(blanks) + ["a", "\u200b"]  # U+200B is no space


def test_damaged_text_in_a_row_group_is_a_source_error(tmp_path):
    """Bytes that are not UTF-8 in a string column: the file is named, no traceback."""
    good = _table([("a", "10de", "27b0", "", "", "0300")])
    path = tmp_path / "d.parquet"
    t = pa.table({c: (pa.array([b"\xff\xfe"], pa.binary()).cast(pa.string(), safe=False) if c == "server"
                      else good.column(c)) for c in good.column_names})
    pq.write_table(t, path)
    with pytest.raises(SourceError, match="d.parquet"):
        list(audit_parquet(path))

"""The device engine: any batching gives one answer, a server's rows are merged wherever they
lie (and the runs held merged as they pile up), Parquet in and out."""

from __future__ import annotations

import random

import numpy as np

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from gpuclass.audit import audit_paths, audit_table, write_reports  # noqa: E402
from gpuclass.audit.engine import devices as engine_module  # noqa: E402
from gpuclass.audit.engine.devices import DeviceEngine  # noqa: E402
from gpuclass.audit.ingest.columns import field_names  # noqa: E402
from gpuclass.audit.results.columns import typed_schema  # noqa: E402
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


def _fed(rows, batch, core=None):
    engine = DeviceEngine(compile_policy(), core)
    table = _table(rows)
    fields = field_names(table.column_names, None)
    for b in table.to_batches(max_chunksize=batch):
        engine.add(b, fields)
    return engine


@pytest.mark.parametrize("seed", range(30))
def test_any_batching_and_any_merging_give_one_answer(seed, core, monkeypatch):
    rng = random.Random(seed)
    servers = [f"s{k:03d}" for k in range(rng.randint(1, 40))]
    if rng.random() < 0.5:
        rng.shuffle(servers)
    rows = _rows(rng, servers)
    want = _answers(audit_table(_table(rows), kernel=core))
    monkeypatch.setattr(engine_module, "_COMPACT_AT", rng.choice([1, 3, 1 << 20]))
    engine = _fed(rows, rng.choice([1, 2, 3, 7, 64, 10_000]), core)
    assert _answers(engine.result("table")) == want


@pytest.mark.parametrize("seed", range(20))
def test_batches_audited_on_a_worker_thread_give_the_answers_of_one_at_a_time(seed, monkeypatch):
    """add_all (every other batch on a worker thread) holds the runs in the batches' order:
    the same answers, and the same progress, as add() one batch at a time."""
    rng = random.Random(seed)
    servers = [f"s{k:03d}" for k in range(rng.randint(1, 60))]
    if rng.random() < 0.5:
        rng.shuffle(servers)
    rows = _rows(rng, servers, repeats=rng.random() < 0.7)
    monkeypatch.setattr(engine_module, "_COMPACT_AT", rng.choice([1, 3, 1 << 20]))
    size = rng.choice([1, 2, 3, 7, 64])
    want = _answers(_fed(rows, size).result("table"))
    table = _table(rows)
    fields = field_names(table.column_names, None)
    batches = table.to_batches(max_chunksize=size)
    empty = pa.RecordBatch.from_pylist([], schema=table.schema)
    batches.insert(rng.randrange(len(batches) + 1), empty)  # an empty batch counts, as in add()
    monkeypatch.setattr(engine_module, "_second_core", lambda kernel: True)
    engine, seen = DeviceEngine(compile_policy()), []
    engine.add_all(((b, fields, None) for b in batches), seen.append)
    assert _answers(engine.result("table")) == want
    assert seen == [b.num_rows for b in batches]


@pytest.mark.parametrize("seed", range(20))
def test_sorted_servers_split_by_batch_ends_go_on_without_hashing(seed, core):
    """Sorted input cut anywhere (a row group's end splitting a server, even a batch of one
    server's rows only): each batch's first run goes on with the last one held, nothing is
    hashed, and the answers are those of batches cut where the server changes."""
    rng = random.Random(seed)
    servers = sorted(f"s{k:03d}" for k in rng.sample(range(1000), rng.randint(1, 30)))
    rows = _rows(rng, servers, repeats=False)
    want = _answers(audit_table(_table(rows), kernel=core))
    engine = _fed(rows, rng.choice([1, 2, 3, 5, 16]), core)
    assert engine._ordered and not engine._hashed
    assert engine.held == len(servers)
    assert _answers(engine.result("table")) == want


def test_one_batch_starts_no_thread(monkeypatch):
    """A table of one batch (and empty ones) is audited on the calling thread: no worker."""
    import concurrent.futures

    def no_pool(*args, **kwargs):
        raise AssertionError("a worker thread for one batch")
    monkeypatch.setattr(engine_module, "_second_core", lambda kernel: True)
    monkeypatch.setattr(concurrent.futures, "ThreadPoolExecutor", no_pool)
    table = _table([(f"s{k}", "10de", "27b0", "", "", "0300") for k in range(5)])
    fields = field_names(table.column_names, None)
    empty = pa.RecordBatch.from_pylist([], schema=table.schema)
    engine = DeviceEngine(compile_policy())
    engine.add_all([(empty, fields, None), (table.to_batches()[0], fields, None), (empty, fields, None)])
    assert len(engine.result("t")) == 5


def test_add_all_raises_the_first_error_in_batch_order(monkeypatch):
    """An error in a batch, or in making the batches, comes out as add() one batch at a time
    raises it: the first in the batches' order."""
    monkeypatch.setattr(engine_module, "_second_core", lambda kernel: True)
    table = _table([(f"s{k}", "10de", "27b0", "", "", "0300") for k in range(8)])
    fields = field_names(table.column_names, None)
    batches = table.to_batches(max_chunksize=2)
    bad = table.slice(0, 3).to_batches()[0]  # the one batch of 3 rows: its audit fails
    audit = engine_module.audit_batches

    def audit_or_fail(items, *args, **kw):
        if items[0][0].num_rows in (1, 3):
            raise InputError(f"the batch of {items[0][0].num_rows} rows fails")
        return audit(items, *args, **kw)
    monkeypatch.setattr(engine_module, "audit_batches", audit_or_fail)

    def failing(at_item):
        yield batches[0]
        yield bad
        yield batches[1]
        if at_item:
            raise OSError("the reader failed")
        yield batches[2]

    with pytest.raises(InputError) as one:
        engine = DeviceEngine(compile_policy())
        for b in [batches[0], bad, batches[1]]:
            engine.add(b, fields)
    for at_item in (False, True):
        with pytest.raises(type(one.value)) as got:
            DeviceEngine(compile_policy()).add_all((b, fields, None) for b in failing(at_item))
        assert str(got.value) == str(one.value)
    # the first failing batch on the worker thread, the second here: the first's error
    one_row = table.slice(0, 1).to_batches()[0]
    for order in ([one_row, bad], [bad, one_row], [batches[0], one_row, bad], [batches[0], bad, one_row]):
        first = next(b.num_rows for b in order if b.num_rows in (1, 3))
        with pytest.raises(InputError, match=f"the batch of {first} rows"):
            DeviceEngine(compile_policy()).add_all((b, fields, None) for b in order)
    with pytest.raises(OSError, match="the reader failed"):
        def gen():
            yield from batches[:3]
            raise OSError("the reader failed")
        DeviceEngine(compile_policy()).add_all((b, fields, None) for b in gen())


def test_the_runs_held_stay_about_the_servers_seen(monkeypatch):
    """Rows of a few servers in no order: what the engine holds is merged to one run per
    server whenever the runs pile up, never one per row."""
    monkeypatch.setattr(engine_module, "_COMPACT_AT", 16)
    rng = random.Random(4)
    rows = [(f"s{rng.randrange(5)}", "10de", "27b0", "", "", "0300") for _ in range(2000)]
    engine = DeviceEngine(compile_policy())
    table = _table(rows)
    fields = field_names(table.column_names, None)
    most = 0
    for b in table.to_batches(max_chunksize=8):
        engine.add(b, fields)
        most = max(most, engine.held)
    assert most <= 2 * 16 + 8
    result = engine.result("t")
    assert sorted(result.table["server"].to_pylist()) == [f"s{k}" for k in range(5)]
    assert sum(result.table["supported_cards"].to_pylist()) == 2000


class _OneHash:
    """A core whose key hashes all collide: the engine must still tell servers apart."""

    def __init__(self, kernel):
        self._kernel = kernel

    def __getattr__(self, name):
        return getattr(self._kernel, name)

    def key_hashes(self, column, seed):
        return np.zeros(len(self._kernel.key_hashes(column, seed)), dtype=np.uint64)


@pytest.mark.parametrize("seed", range(8))
def test_colliding_key_hashes_give_the_same_answer(seed, core, monkeypatch):
    """Equal hashes are not proof of equal keys: with every hash the same, the engine
    compares the keys and gives the answer of distinct hashes."""
    rng = random.Random(100 + seed)
    servers = [f"s{k:03d}" for k in range(rng.randint(2, 30))]
    rows = _rows(rng, servers)
    want = _answers(audit_table(_table(rows), kernel=core))
    monkeypatch.setattr(engine_module, "_COMPACT_AT", rng.choice([1, 5, 1 << 20]))
    engine = _fed(rows, rng.choice([1, 3, 64]), _OneHash(core))
    assert _answers(engine.result("table")) == want


def test_servers_coming_back_are_merged():
    rows = [("a", "10de", "27b0", "", "", "0300"), ("b", "10de", "27b0", "", "", "0300"),
            ("a", "10de", "2bb5", "", "", "0302"), ("a", "zz", "2bb5", "", "", "0302")]
    reports = list(_fed(rows, 1).result("t"))
    assert [(r.server, r.supported_cards, r.rows, r.row) for r in reports] == [("a", 2, 3, 1), ("b", 1, 1, 2)]
    assert reports[0].problems == ["row 4: vendor 'zz' is not a hex ID"]


def test_a_server_split_across_row_groups_is_one_row(tmp_path):
    rows = [("a", "10de", "27b0", "", "", "0300")] * 5 + [("b", "10de", "2bb5", "", "", "0302")] * 3
    path = tmp_path / "devices.parquet"
    pq.write_table(_table(rows), path, row_group_size=2)
    assert pq.ParquetFile(path).num_row_groups == 4
    out = tmp_path / "servers.parquet"
    summary = write_reports(audit_paths([path]), "parquet", out)
    assert summary.servers == 2
    got = pq.read_table(out)
    assert got.column("server").to_pylist() == ["a", "b"]
    assert got.column("supported_cards").to_pylist() == [5, 3]
    assert got.column("rows").to_pylist() == [5, 3] and got.column("row").to_pylist() == [1, 6]
    assert got.schema == typed_schema(compile_policy().card_ids)


def test_parquet_out_equals_the_in_memory_table(tmp_path):
    rng = random.Random(7)
    rows = _rows(rng, [f"srv-{k:04d}" for k in range(300)])
    path = tmp_path / "devices.parquet"
    pq.write_table(_table(rows), path, row_group_size=97)
    out = tmp_path / "servers.parquet"
    write_reports(audit_paths([path]), "parquet", out)
    want = audit_table(_table(rows), source=str(path)).typed()
    assert pq.read_table(out).equals(want)


def test_text_id_columns_are_read_as_dictionaries(tmp_path):
    """A Parquet table's text ID columns come as dictionaries (each row group's few IDs
    read and parsed once), its server names and integer IDs as they are."""
    from gpuclass.audit.ingest.parquet import parquet_batches

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
    """A server's own name and row number are written without a dictionary (one would be
    as long as the column): the names with their lengths delta-packed, the rising row
    numbers delta-packed; counts, whose values repeat, and a text that is one value
    throughout (the source) as a dictionary; other texts (mostly empty problems) with
    their lengths delta-packed, a few bits an empty one."""
    rows = _rows(random.Random(3), [f"srv-{k:04d}" for k in range(2000)], repeats=False)
    path = tmp_path / "devices.parquet"
    pq.write_table(_table(rows), path)
    out = tmp_path / "servers.parquet"
    write_reports(audit_paths([path]), "parquet", out)
    for column in ("server", "row"):
        assert not any("DICTIONARY" in e for e in _encodings(out, column)), column
    assert "DELTA_LENGTH_BYTE_ARRAY" in _encodings(out, "server")
    assert "DELTA_BINARY_PACKED" in _encodings(out, "row")
    for column in ("slices", "cards.rtx-6000-ada", "source"):
        assert any("DICTIONARY" in e for e in _encodings(out, column)), column
    assert "DELTA_LENGTH_BYTE_ARRAY" in _encodings(out, "problems")


def test_integer_id_columns(core):
    rows = [("a", 0x10de, 0x27b0, None, None, 0x030000), ("a", 0x10de, 0x22bc, None, None, 0x040300),
            ("b", 0x10de, 0x1e30, None, None, 0x0300)]
    table = pa.table({f: pa.array([r[i] for r in rows], pa.string() if i == 0 else pa.int64())
                      for i, f in enumerate(FIELDS)})
    got = list(audit_table(table, kernel=core))
    assert [(r.server, r.slices, r.unsupported_gpus) for r in got] == [("a", 4, 0), ("b", 0, 1)]


def test_empty_and_unreadable_inputs(tmp_path):
    empty = tmp_path / "empty.parquet"
    pq.write_table(_table([]), empty)
    out = tmp_path / "out.parquet"
    assert write_reports(audit_paths([empty]), "parquet", out).servers == 0
    assert pq.read_table(out).schema == typed_schema(compile_policy().card_ids)
    assert len(DeviceEngine(compile_policy()).result("t")) == 0
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(SourceError, match="bad.parquet.*not a Parquet file"):
        list(audit_paths([bad]))
    lacking = tmp_path / "lacking.parquet"
    pq.write_table(pa.table({"server": ["a"], "vendor": ["10de"]}), lacking)
    with pytest.raises(InputError, match="lacks columns"):
        list(audit_paths([lacking]))


def test_blank_server_names_are_no_names(core):
    """Empty or whitespace-only server cells (ASCII or Unicode spaces) name no server: each
    such row is a report of its own, flagged."""
    blanks = ["", " ", "\t", "\u00a0", "\u2003 ", "\u3000", "\x1c"]
    rows = [(b, "10de", "27b0", "", "", "0300") for b in blanks] + [("a", "10de", "27b0", "", "", "0300"),
                                                                    ("\u200b", "10de", "27b0", "", "", "0300")]
    got = list(audit_table(_table(rows), kernel=core))
    assert [r.server for r in got] == [None] * len(blanks) + ["a", "\u200b"]  # U+200B is no space
    assert all(r.problems == ["row has no server name"] for r in got[:len(blanks)])


def test_damaged_text_in_a_row_group_is_a_source_error(tmp_path):
    """Bytes that are not UTF-8 in a string column: the file is named, no traceback."""
    good = _table([("a", "10de", "27b0", "", "", "0300")])
    path = tmp_path / "d.parquet"
    t = pa.table({c: (pa.array([b"\xff\xfe"], pa.binary()).cast(pa.string(), safe=False) if c == "server"
                      else good.column(c)) for c in good.column_names})
    pq.write_table(t, path)
    with pytest.raises(SourceError, match="d.parquet"):
        list(audit_paths([path]))

"""Servers given out as they settle: a sorted device table's (Parquet or CSV) Parquet output
written while the table is still read (DeviceEngine.settled, AuditRun.chunks(settled=True), the Parquet sink's
writer thread) is the output of the one-chunk audit, byte for byte in its values, whatever
the order of the rows, the batch size, the row groups and the output (a path or a file);
a table whose keys stop rising after servers were given out is written again from its
start, and its totals counted once."""

from __future__ import annotations

import csv
import io
import random

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from hypothesis import given, settings, strategies as st  # noqa: E402

from gpuclass.audit import audit_paths, audit_table, write_reports  # noqa: E402
from gpuclass.audit.engine import Unsettled  # noqa: E402
from gpuclass.audit.engine.devices import DeviceEngine  # noqa: E402
from gpuclass.audit.ingest import columns as columns_module, parquet as parquet_module  # noqa: E402
from gpuclass.audit.ingest.columns import field_names  # noqa: E402
from gpuclass.audit.results.reports import AuditSummary  # noqa: E402
from gpuclass.audit.sinks import chunks_of, parquet as sink_module  # noqa: E402
from gpuclass.policy import compile_policy  # noqa: E402

FIELDS = ("server", "vendor", "device", "subvendor", "subdevice", "class")
CELLS = ["10de", "27b0", "22bc", "1b80", "2bb5", "8086", "0300", "030000", "0403", "0302", "",
         None, "zz", "1e30", "26b1", "0c0330", "10DE"]
GPU = [("10de", "27b0", "", "", "0300"), ("10de", "2bb5", "10de", "204e", "0302"),
       ("10de", "1e30", "", "", "0300"), ("10de", "22bc", "", "", "0403"), ("8086", "1533", "", "", "0200"),
       ("10de", "zz", "", "", "0300"), ("10de", "26b1", "", "", "0300")]


def _table(rows):
    return pa.table({f: pa.array([r[i] for r in rows], pa.string()) for i, f in enumerate(FIELDS)})


def _rows(rng, n_servers, order):
    """Rows of ``n_servers`` servers: ``sorted`` (each server's rows together, names
    rising), ``breaks`` (sorted, then a server met before comes back near the end),
    ``nameless`` (sorted, with rows naming no server among them) or ``shuffled``."""
    names = [f"srv-{k:05d}" for k in range(n_servers)]
    rows = [(s, *rng.choice(GPU)) if rng.random() < 0.6 else (s, *(rng.choice(CELLS) for _ in range(5)))
            for s in names for _ in range(rng.randint(1, 5))]
    if order == "breaks" and rows:
        at = rng.randrange(max(1, len(rows) * 3 // 4), len(rows) + 1)
        rows.insert(at, (rows[rng.randrange(len(rows) // 2 + 1)][0], *rng.choice(GPU)))
    elif order == "nameless":
        for _ in range(rng.randint(1, 3)):
            rows.insert(rng.randrange(len(rows) + 1), (rng.choice([None, "", "  "]), *rng.choice(GPU)))
    elif order == "shuffled":
        rng.shuffle(rows)
    return rows


def _one_chunk(path, out):
    """The reference: the run's chunks as they come without asking for settled servers
    (one chunk per table), written by the same sink."""
    run = audit_paths([path])
    summary = AuditSummary()
    sink_module.write_parquet(chunks_of(run), out, tuple(run.compiled.card_ids), summary)
    return summary


def _written(tmp_path, rows, row_group, batch, monkeypatch, out_kind="path", fmt="parquet"):
    monkeypatch.setattr(parquet_module, "_BATCH_ROWS", batch)
    monkeypatch.setattr(columns_module, "BATCH_ROWS", batch)
    path = tmp_path / f"devices.{fmt}"
    if fmt == "parquet":
        pq.write_table(_table(rows), path, row_group_size=row_group)
    else:  # a missing cell is an empty one
        with open(path, "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows([FIELDS, *rows])
    ref = tmp_path / "one-chunk.parquet"
    want_summary = _one_chunk(path, ref)
    if out_kind == "path":
        out = tmp_path / "settled.parquet"
        summary = write_reports(audit_paths([path]), "parquet", out)
        got = pq.read_table(out)
    else:
        buf = io.BytesIO()
        summary = write_reports(audit_paths([path]), "parquet", buf)
        got = pq.read_table(io.BytesIO(buf.getvalue()))
    return got, pq.read_table(ref), summary, want_summary


def _count_chunks(monkeypatch):
    """The number of chunks each write of the Parquet sink is given, in order."""
    seen = []
    real = sink_module._write

    def chunks_counted(chunks, *args):
        chunks = list(chunks)
        seen.append(len(chunks))
        return real(iter(chunks), *args)
    monkeypatch.setattr(sink_module, "_write", chunks_counted)
    return seen


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("order", ["sorted", "breaks", "nameless", "shuffled"])
@pytest.mark.parametrize("seed", range(6))
def test_settled_output_is_the_one_chunk_output(tmp_path, monkeypatch, order, seed, fmt):
    rng = random.Random(seed)
    rows = _rows(rng, rng.randint(1, 300), order)
    got, want, summary, want_summary = _written(tmp_path, rows, rng.choice([1, 7, 64, 1000]),
                                                rng.choice([1, 5, 33, 1 << 18]), monkeypatch,
                                                rng.choice(["path", "file"]), fmt)
    assert got.equals(want)
    assert vars(summary) == vars(want_summary)  # totals counted once, restarted or not


@pytest.mark.parametrize("seed", range(6))
def test_chunks_of_their_own_row_group_are_written_with_int32_counts_to_the_same_bytes(tmp_path, monkeypatch,
                                                                                       seed):
    """A chunk written as a row group of its own goes to the writer as
    AuditTable.narrow_typed gives it (its counts int32, not widened): the file is, byte
    for byte, the one written from AuditTable.typed."""
    from gpuclass.audit.results.table import AuditTable

    rng = random.Random(seed)
    rows = _rows(rng, rng.randint(20, 300), rng.choice(["sorted", "nameless", "shuffled"]))
    path = tmp_path / "devices.parquet"
    pq.write_table(_table(rows), path, row_group_size=rng.choice([7, 64, 1000]))
    monkeypatch.setattr(parquet_module, "_BATCH_ROWS", rng.choice([5, 33, 1 << 18]))
    monkeypatch.setattr(sink_module, "_OWN_GROUP", rng.choice([1, 4]))
    narrow = AuditTable.narrow_typed
    calls = []

    def spied(self, card_ids=None):
        table = narrow(self, card_ids)
        calls.append(table.schema.field("slices").type)
        return table
    monkeypatch.setattr(AuditTable, "narrow_typed", spied)
    write_reports(audit_paths([path]), "parquet", tmp_path / "narrow.parquet")
    assert calls and set(calls) == {pa.int32()}
    monkeypatch.setattr(AuditTable, "narrow_typed", AuditTable.typed)
    write_reports(audit_paths([path]), "parquet", tmp_path / "typed.parquet")
    assert (tmp_path / "narrow.parquet").read_bytes() == (tmp_path / "typed.parquet").read_bytes()


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_settled_tables_then_the_result_are_the_result_alone(data):
    """DeviceEngine: the tables settled() gives out, then result(), hold the rows of
    result() alone, in its order; once it gave servers out, keys that no longer rise raise
    Unsettled (and never before: nothing was given out that could be taken back)."""
    rng = random.Random(data.draw(st.integers(0, 2 ** 32 - 1)))
    rows = _rows(rng, data.draw(st.integers(0, 60)), data.draw(st.sampled_from(["sorted", "breaks", "shuffled"])))
    table = _table(rows)
    fields = field_names(table.column_names, None)
    batch = data.draw(st.integers(1, 40))
    alone = DeviceEngine(compile_policy())
    for b in table.to_batches(max_chunksize=batch):
        alone.add(b, fields)
    want = alone.result("t").table
    engine = DeviceEngine(compile_policy())
    parts = []
    try:
        for b in table.to_batches(max_chunksize=batch):
            engine.add(b, fields)
            done = engine.settled("t")
            if done is not None:
                parts.append(done.table)
    except Unsettled:
        assert parts  # only ever after something was given out
        keys = [k for k in table.column("server").to_pylist()]
        assert any(a is None or b is None or b <= a for a, b in zip(keys, keys[1:]))
        return
    parts.append(engine.result("t").table)
    got = pa.concat_tables(parts)
    assert got.equals(want)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_sorted_table_is_written_in_several_chunks_as_it_settles(tmp_path, monkeypatch, fmt):
    """A sorted table read in batches reaches the sink a batch's servers at a time, where
    the one-chunk reference is one chunk."""
    rows = _rows(random.Random(1), 400, "sorted")
    seen = _count_chunks(monkeypatch)
    got, want, _, _ = _written(tmp_path, rows, 100, 100, monkeypatch, fmt=fmt)
    assert got.equals(want)
    assert seen[0] == 1 and seen[1] > 3  # the reference, then the settled run


@pytest.mark.parametrize("out_kind", ["path", "file"])
def test_a_server_coming_back_after_its_row_was_written_restarts_the_output(tmp_path, monkeypatch, out_kind):
    """The first server comes back in the last row: everything before was given out and
    written; the output (a path, or a file written through) is written again from its
    start, each server once."""
    rows = [(f"s{k:03d}", "10de", "27b0", "", "", "0300") for k in range(50)] + [("s000", "10de", "2bb5", "", "", "0302")]
    calls = []
    real = sink_module._write

    def counting(*args, **kw):
        calls.append(1)
        return real(*args, **kw)
    monkeypatch.setattr(sink_module, "_write", counting)
    got, want, summary, _ = _written(tmp_path, rows, 10, 10, monkeypatch, out_kind)
    assert len(calls) == 2 + 1  # the settled attempt, its rewrite, and the reference
    assert got.equals(want)
    assert got.column("server").to_pylist()[0] == "s000" and got.column("supported_cards").to_pylist()[0] == 2
    assert summary.servers == 50 and summary.supported_cards == 51


def test_standard_input_and_unseekable_outputs_are_never_settled(tmp_path, monkeypatch):
    """Where the run cannot be read again (standard input) or the output cannot be written
    again (a pipe), the table comes as one chunk: nothing is given out that could need
    taking back."""
    monkeypatch.setattr(parquet_module, "_BATCH_ROWS", 10)
    rows = [(f"s{k:03d}", "10de", "27b0", "", "", "0300") for k in range(50)] + [("s000", "zz", "2bb5", "", "", "0302")]
    path = tmp_path / "devices.parquet"
    pq.write_table(_table(rows), path, row_group_size=10)

    class Pipe(io.BytesIO):
        def seekable(self):
            return False

        def seek(self, *a):
            raise io.UnsupportedOperation("seek")

    seen = _count_chunks(monkeypatch)
    out = Pipe()
    write_reports(audit_paths([path]), "parquet", out)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes())))
    buf = io.BytesIO()
    write_reports(audit_paths(["-"]), "parquet", buf)
    assert seen == [1, 1]
    want = audit_table(_table(rows)).table
    got = pq.read_table(io.BytesIO(buf.getvalue()))
    assert got.column("server").to_pylist() == want.column("server").to_pylist()
    assert got.column("problems").to_pylist()[0] == want.column("problems").to_pylist()[0]


def test_an_error_on_the_writer_thread_is_raised_and_leaves_no_thread(tmp_path, monkeypatch):
    import threading

    monkeypatch.setattr(parquet_module, "_BATCH_ROWS", 10)
    monkeypatch.setattr(sink_module, "_OWN_GROUP", 1)  # every chunk its own write
    rows = [(f"s{k:03d}", "10de", "27b0", "", "", "0300") for k in range(100)]
    path = tmp_path / "devices.parquet"
    pq.write_table(_table(rows), path, row_group_size=10)
    real = sink_module.parquet_writer

    class Failing:
        def __init__(self, w):
            self.w, self.n = w, 0

        def write_table(self, table, **kw):
            self.n += 1
            if self.n == 2:
                raise OSError("disk full")
            self.w.write_table(table, **kw)

        def close(self):
            self.w.close()
    monkeypatch.setattr(sink_module, "parquet_writer", lambda out, schema: Failing(real(out, schema)))
    with pytest.raises(OSError, match="disk full"):
        write_reports(audit_paths([path]), "parquet", tmp_path / "out.parquet")
    assert not [t for t in threading.enumerate() if t.name.startswith("gpuclass-parquet")]


def test_a_damaged_row_group_after_servers_were_written_leaves_no_output(tmp_path, monkeypatch):
    """Text that is not UTF-8 in the last row group of a sorted table: the servers before
    it were written already; the SourceError names the file and the output path is gone
    (no half-written file passes for the audit)."""
    from gpuclass.errors import SourceError

    monkeypatch.setattr(parquet_module, "_BATCH_ROWS", 10)
    monkeypatch.setattr(sink_module, "_OWN_GROUP", 1)
    good = [(f"s{k:03d}", "10de", "27b0", "", "", "0300") for k in range(40)]
    t = _table(good + [("zz", "10de", "27b0", "", "", "0300")])
    bad = pa.array([r[0] for r in good] + [None], pa.string()).to_pylist()
    server = pa.array([b.encode() if b else b"\xff\xfe" for b in bad], pa.binary()).cast(pa.string(), safe=False)
    t = t.set_column(0, "server", server)
    path = tmp_path / "d.parquet"
    pq.write_table(t, path, row_group_size=10)
    out = tmp_path / "servers.parquet"
    written = []
    real = sink_module._write

    def spying(chunks, *args):
        def seen():
            for c in chunks:
                written.append(len(c))
                yield c
        return real(seen(), *args)
    monkeypatch.setattr(sink_module, "_write", spying)
    with pytest.raises(SourceError, match="d.parquet"):
        write_reports(audit_paths([path]), "parquet", out)
    assert sum(written) >= 30  # servers were given out (and written) before the damage
    assert not out.exists()


def test_a_restart_rewrites_a_file_from_where_the_output_began(tmp_path, monkeypatch):
    """A file object that held bytes before the audit: the rewrite starts where the output
    began, the bytes before it kept."""
    monkeypatch.setattr(parquet_module, "_BATCH_ROWS", 10)
    rows = [(f"s{k:03d}", "10de", "27b0", "", "", "0300") for k in range(50)] + [("s000", "zz", "2bb5", "", "", "0302")]
    path = tmp_path / "devices.parquet"
    pq.write_table(_table(rows), path, row_group_size=10)
    buf = io.BytesIO()
    buf.write(b"HEAD")
    summary = write_reports(audit_paths([path]), "parquet", buf)
    data = buf.getvalue()
    assert data[:4] == b"HEAD" and data[4:8] == b"PAR1"
    got = pq.read_table(io.BytesIO(data[4:]))
    assert got.num_rows == summary.servers == 50
    assert got.column("problems").to_pylist()[0] == "row 51: vendor 'zz' is not a hex ID"


def test_a_table_smaller_than_six_of_the_largest_batches_is_read_in_sixths(tmp_path, monkeypatch):
    """A table of a few batches' rows is cut into sixths at least (no fewer rows each than
    the floor), so the reader, one batch ahead, never holds it all; one of many is read in
    the largest batches."""
    monkeypatch.setattr(parquet_module, "_BATCH_ROWS", 256)
    monkeypatch.setattr(parquet_module, "_MIN_BATCH_ROWS", 16)
    for n, each in [(1000, 167), (1200, 200), (5000, 256), (60, 16)]:
        path = tmp_path / f"t{n}.parquet"
        pq.write_table(_table(_rows(random.Random(n), n, "sorted")[:n]), path)
        sizes = [b.num_rows for b in parquet_module.parquet_batches(path, None)]
        assert sum(sizes) == n and set(sizes[:-1]) == {each} and sizes[-1] <= each
        assert len(sizes) >= min(6, -(-n // 16))


def test_the_tables_given_out_name_each_unsupported_model_once(tmp_path, monkeypatch):
    """The tables a sorted device table is given out in, batch by batch, share the names
    of its unsupported GPUs: each model is looked up in the database once for the run, and
    each table's ``unsupported`` texts are those of the table of the whole input."""
    import gpuclass.pcinames as names

    calls = []
    real = names.unsupported_label

    def counted(db, vendor, device, name=None):
        calls.append((vendor, device))
        return real(db, vendor, device, name)
    monkeypatch.setattr(names, "unsupported_label", counted)
    rows = [(f"s{k:03d}", "10de", dev, None, None, "030000") for k in range(40) for dev in ("1e30", "2184")]
    engine = DeviceEngine(compile_policy())
    fields = field_names(list(FIELDS), None)
    got = []
    for lo in range(0, len(rows), 16):
        engine.add(_table(rows[lo:lo + 16]).to_batches()[0], fields)
        done = engine.settled("t")
        if done is not None:
            got += done.typed().column("unsupported").to_pylist()
    got += engine.result("t").typed().column("unsupported").to_pylist()
    assert len(got) == 40 and sorted(set(calls)) == [(0x10DE, 0x1E30), (0x10DE, 0x2184)]
    assert len(calls) == 2
    assert got == audit_table(_table(rows)).typed().column("unsupported").to_pylist()


def test_a_csv_tables_batches_of_servers_are_written_as_they_settle(tmp_path):
    """With the defaults: a sorted CSV device table of eight rows a server settles about
    8Ki servers in each 64Ki-row batch, and each batch's servers are a row group of their
    own, written as they come, not held (typed, with widened counts) until 64Ki of them
    have come; the file holds the one-chunk audit's values."""
    per, batch = 8, columns_module.BATCH_ROWS
    n_servers = 3 * batch // per + 100
    path = tmp_path / "devices.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(FIELDS)
        for k in range(n_servers):
            for j in range(per):
                w.writerow((f"srv-{k:06d}", *GPU[(k + j) % len(GPU)]))
    out = tmp_path / "servers.parquet"
    write_reports(audit_paths([path]), "parquet", out)
    meta = pq.ParquetFile(out).metadata
    groups = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
    assert sum(groups) == n_servers
    assert len(groups) >= 3 and all(g >= sink_module._OWN_GROUP - 1 for g in groups[:-1])
    ref = tmp_path / "one-chunk.parquet"
    _one_chunk(path, ref)
    assert pq.ParquetFile(ref).metadata.num_row_groups == 1
    assert pq.read_table(out).equals(pq.read_table(ref))


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_batch_is_let_go_once_audited(tmp_path, monkeypatch, fmt):
    """When a batch's settled servers go out, neither that batch nor any before it is
    held any more (the reader's next batches are all the run holds of the table): a
    batch's columns are most of what a streamed audit holds."""
    import weakref

    from gpuclass.audit import run as run_module

    monkeypatch.setattr(parquet_module, "_BATCH_ROWS", 64)
    monkeypatch.setattr(parquet_module, "_MIN_BATCH_ROWS", 64)
    monkeypatch.setattr(columns_module, "BATCH_ROWS", 64)
    rows = [(f"s{k:04d}", *GPU[k % len(GPU)]) for k in range(200) for _ in range(3)]
    path = tmp_path / f"devices.{fmt}"
    if fmt == "parquet":
        pq.write_table(_table(rows), path, row_group_size=128)
    else:
        with open(path, "w", newline="") as fh:
            csv.writer(fh).writerows([FIELDS, *rows])
    refs = []
    real = run_module.prefetch

    def watched(items, *args, **kwargs):
        def each():
            for item in items:
                refs.append(weakref.ref(item[0] if isinstance(item, tuple) else item))
                yield item
                item = None
        return real(each(), *args, **kwargs)
    monkeypatch.setattr(run_module, "prefetch", watched)
    run = audit_paths([path])
    given, batches = 0, -(-len(rows) // 64)
    for k, chunk in enumerate(run.chunks(settled=True)):  # a chunk a batch, then the last server
        given += len(chunk)
        assert len(refs) >= min(k + 1, batches) and all(r() is None for r in refs[:k + 1]), \
            (k, [r() is None for r in refs])
    assert given == 200 and k == len(refs) == batches

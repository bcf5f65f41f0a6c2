"""Device tables of any size audited in bounded memory: record batches in, per-server tables out.

:func:`iter_audit` reads record batches (a Parquet file's row groups, an Arrow stream,
any iterable of pyarrow ``RecordBatch``), audits about ``chunk_rows`` rows at a time with
the native kernels and yields an :class:`~gpuclass.audit.columnar.AuditTable` per chunk
for the servers whose rows are complete.  The last server of a chunk is held back until
its rows end, so a server split across row groups or batches is still one row.  A server
whose rows come back later, not next to its earlier ones, gets a report of its own for
those rows, flagged with the rows it covers (as the row-by-row device audit does); a
stream cannot revise a row it has already written.  What stays in memory is the chunk
being audited and the server keys seen so far (compact Arrow arrays while the keys come
in order, a set once they do not).

:func:`audit_parquet` streams a Parquet file and :func:`write_parquet` writes the
per-server rows as they come.

>>> import pyarrow as pa
>>> batches = [pa.record_batch({"server": ["a", "a"], "vendor": ["10de", "10de"],
...                             "device": ["27b0", "27b0"], "class": ["0300", "0300"]}),
...            pa.record_batch({"server": ["a", "b"], "vendor": ["10de", "8086"],
...                             "device": ["27b0", "1572"], "class": ["0300", "0200"]})]
>>> [(r.server, r.slices, r.rows) for t in iter_audit(batches, chunk_rows=2) for r in t]
[('a', 12, 3), ('b', 0, 1)]
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .._native import core, key_column
from ..policy import compile_policy
from .columnar import AuditTable, Runs, audit_batches, build_result, field_columns, result_columns

__all__ = ["iter_audit", "prefetch", "audit_parquet", "write_parquet", "parquet_writer", "result_schema",
           "output_schema", "output_table", "reports_table", "PARQUET_COLUMNS", "CHUNK_ROWS"]

CHUNK_ROWS = 1 << 20    # rows audited at a time: large enough that per-chunk work is noise


def prefetch(items: Iterable[Any], depth: int = 2) -> Iterator[Any]:
    """``items`` produced by a background thread, up to ``depth`` ahead: reading (pyarrow
    decodes without the GIL) goes on while the kernels work on what came before.  An
    error in the producer is raised where the consumer reaches it; a consumer that stops
    early stops the producer."""
    import queue
    import threading

    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        q.put((item, None), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put((done, None))
        except BaseException as exc:  # handed to the consumer
            q.put((done, exc))

    worker = threading.Thread(target=produce, name="gpuclass-prefetch", daemon=True)
    worker.start()
    try:
        while True:
            item, exc = q.get()
            if item is done:
                if exc is not None:
                    raise exc
                return
            yield item
    finally:
        stop.set()
        while worker.is_alive():  # let a blocked producer see the stop
            try:
                q.get_nowait()
            except queue.Empty:
                worker.join(0.05)


def _adjacent(runs: Runs) -> tuple[np.ndarray, np.ndarray]:
    """Groups of adjacent runs with one server key (a run without a key stands alone)."""
    import pyarrow.compute as pc

    n = len(runs.first)
    new = np.ones(n, dtype=bool)
    if n > 1:
        same = pc.fill_null(pc.equal(runs.keys.slice(1), runs.keys.slice(0, n - 1)), False)
        new[1:] = ~same.to_numpy(zero_copy_only=False)
    return np.cumsum(new) - 1, np.flatnonzero(new)


def _take(runs: Runs, lo: int, hi: int) -> Runs:
    """Runs ``lo:hi``, renumbered from 0."""
    u_lo, u_hi = np.searchsorted(runs.unsupported_run, [lo, hi])
    return Runs(runs.keys.slice(lo, hi - lo), runs.first[lo:hi], runs.rows[lo:hi],
                runs.totals[lo:hi], runs.counts[lo:hi],
                [(r - lo, row, t) for r, row, t in runs.problems if lo <= r < hi],
                runs.unsupported_run[u_lo:u_hi] - lo, runs.unsupported_ids[u_lo:u_hi])


def _join(a: Runs, b: Runs) -> Runs:
    import pyarrow as pa

    n = len(a.first)
    keys = pa.concat_arrays([a.keys, b.keys.cast(a.keys.type)]) if len(a.keys) else b.keys
    return Runs(keys, np.concatenate([a.first, b.first]), np.concatenate([a.rows, b.rows]),
                np.concatenate([a.totals, b.totals]), np.concatenate([a.counts, b.counts]),
                a.problems + [(r + n, row, t) for r, row, t in b.problems],
                np.concatenate([a.unsupported_run, b.unsupported_run + n]),
                np.concatenate([a.unsupported_ids, b.unsupported_ids]))


class _Seen:
    """The server keys written so far, to tell a server whose rows come back later.

    While keys arrive in strictly increasing order no key can repeat: they are kept as the
    Arrow arrays they came in, nothing more.  From the first key out of order on, keys are
    also hashed by the core (seeded per stream) into its ``KeySet``; a hash seen before is
    confirmed by comparing the keys themselves, so the answer is exact.
    """

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.seed = int.from_bytes(os.urandom(8), "little")
        self.chunks: list[Any] = []     # the keys, in order of writing
        self.starts = [0]               # the position of each chunk's first key
        self.last: Any = None           # the last key while keys come in order
        self.set: Any = None            # the core's KeySet, once keys come out of order
        self.more: dict[int, list[int]] = {}  # hash: positions of further keys that have it

    def _key(self, pos: int) -> Any:
        c = bisect.bisect_right(self.starts, pos) - 1
        return self.chunks[c][pos - self.starts[c]].as_py()

    def _add(self, keys: Any, base: int) -> list[int]:
        """Add ``keys`` (at positions ``base``...); the indices of keys seen before."""
        h = self.kernel.key_hashes(key_column(keys, "server"), self.seed)
        found, prior = self.set.add(h, base)
        out = []
        for i, p in zip(found.tolist(), prior.tolist()):
            key, hv = keys[i].as_py(), int(h[i])
            if self._key(p) == key or any(self._key(q) == key for q in self.more.get(hv, ())):
                out.append(i)
            else:  # another key with the same hash
                self.more.setdefault(hv, []).append(base + i)
        return out

    def repeats(self, keys: Any) -> list[int]:
        """Positions in ``keys`` (non-null server keys in output order) of keys seen before."""
        import pyarrow.compute as pc

        n = len(keys)
        if n == 0:
            return []
        base = self.starts[-1]
        self.chunks.append(keys)
        self.starts.append(base + n)
        if self.set is None:
            ordered = n < 2 or pc.all(pc.greater(keys.slice(1), keys.slice(0, n - 1))).as_py()
            if ordered and (self.last is None or keys[0].as_py() > self.last):
                self.last = keys[n - 1].as_py()
                return []
            self.set = self.kernel.KeySet()
            for chunk, start in zip(self.chunks[:-1], self.starts):  # distinct: they came in order
                self._add(chunk, start)
        return self._add(keys, base)


def _notes(runs: Runs, first_run: np.ndarray, seen: _Seen) -> dict[int, str]:
    """The problem of each group whose server was written before (not next to these rows)."""
    import pyarrow as pa

    heads = runs.keys.take(pa.array(first_run))
    named = np.flatnonzero(~np.asarray(heads.is_null(), dtype=bool)) if heads.null_count \
        else np.arange(len(first_run))
    keys = heads.take(pa.array(named)) if heads.null_count else heads
    notes = {}
    ends = np.append(first_run[1:], len(runs.first))
    for i in seen.repeats(keys):
        g = int(named[i])
        lo, hi = int(first_run[g]), int(ends[g]) - 1
        a, b = int(runs.first[lo]) + 1, int(runs.first[hi] + runs.rows[hi])
        notes[g] = (f"rows of server {str(heads[g].as_py())!r} are not next to each other: "
                    f"this report covers rows {a}-{b} only")
    return notes


def iter_audit(batches: Iterable[Any], *, policy: Any = None, server_column: str | None = None,
               source: str = "table", db: Any = None, kernel: Any = None,
               chunk_rows: int = CHUNK_ROWS) -> Iterator[AuditTable]:
    """Audit a stream of pyarrow record batches; yield an :class:`AuditTable` per chunk of
    about ``chunk_rows`` rows, one row per server whose rows are complete (see the module
    docstring).  Row numbers (``first_row``, problems) count from the stream's start."""
    compiled = compile_policy(policy)
    kernel = core if kernel is None else kernel
    fields = None
    pending: Runs | None = None
    seen = _Seen(kernel)
    buf: list[Any] = []
    held = base = 0

    def chunk(final: bool) -> Iterator[AuditTable]:
        nonlocal pending, base, held
        runs = audit_batches(buf, fields, compiled, first_row=base, kernel=kernel)
        base += held
        buf.clear()
        held = 0
        if pending is not None:
            runs = _join(pending, runs)
        group, first_run = _adjacent(runs)
        cut = len(runs.first) if final or not len(first_run) else int(first_run[-1])
        pending = None if cut == len(runs.first) else _take(runs, cut, len(runs.first))
        if cut == 0:
            return
        if cut < len(runs.first):
            runs = _take(runs, 0, cut)
            group, first_run = group[:cut], first_run[:-1]
        yield build_result(runs, compiled, source, db, kernel, grouping=(group, first_run),
                           notes=_notes(runs, first_run, seen))

    for batch in batches:
        if fields is None:
            fields = field_columns(batch.schema, server_column)
        if batch.num_rows:
            buf.append(batch)
            held += batch.num_rows
        if held >= chunk_rows:
            yield from chunk(final=False)
    if fields is not None and (buf or pending is not None):
        yield from chunk(final=True)


def result_schema(compiled: Any, server_type: Any = None):
    """The Arrow schema of an audit's per-server rows (``server_type``: the server keys')."""
    import pyarrow as pa

    types = {"server": server_type or pa.string(), "gpu_capable": pa.bool_(),
             "rows": pa.int64(), "first_row": pa.int64(), "problems": pa.string()}
    return pa.schema([(c, types.get(c, pa.int32())) for c in result_columns(compiled)])


def audit_parquet(path: str | os.PathLike, *, policy: Any = None, server_column: str | None = None,
                  db: Any = None, chunk_rows: int = CHUNK_ROWS) -> Iterator[AuditTable]:
    """:func:`iter_audit` over a Parquet device table, read by row group (only the device
    columns; a file pyarrow cannot read, or damaged text in a row group, is a
    :class:`~gpuclass.errors.SourceError` naming the file)."""
    from .tables import parquet_batches

    name = os.fspath(path)
    return iter_audit(prefetch(parquet_batches(name, server_column, name)), policy=policy,
                      server_column=server_column, source=name, db=db, chunk_rows=chunk_rows)


# a server's own row number and name: a dictionary of these would be as long as the column
_DISTINCT = ("row", "first_row", "server")


def parquet_writer(out: Any, schema: Any):
    """A ParquetWriter for an audit's per-server rows: dictionary-encoded columns where values
    repeat (counts, texts), plain where each server has its own (a quarter less time writing)."""
    import pyarrow.parquet as pq

    return pq.ParquetWriter(out, schema, use_dictionary=[n for n in schema.names if n not in _DISTINCT])


def write_parquet(results: Iterable[AuditTable], out: str | os.PathLike, *, policy: Any = None,
                  server_type: Any = None) -> int:
    """Write the per-server rows of ``results`` to a Parquet file as they come (one row
    group per chunk); returns the number of servers written.  An empty stream writes a
    file with the schema and no rows."""
    writer = None
    total = 0
    try:
        for result in results:
            table = result.table
            if writer is None:
                schema = result_schema(result.compiled, table.schema.field("server").type)
                writer = parquet_writer(out, schema)
            writer.write_table(table.cast(writer.schema))
            total += table.num_rows
        if writer is None:
            writer = parquet_writer(out, result_schema(compile_policy(policy), server_type))
    finally:
        if writer is not None:
            writer.close()
    return total


# -- the rows `gpuclass audit --format parquet` writes: typed columns, a count per card

_INT_COLUMNS = ("row", "supported_cards", "slices", "unsupported_gpus", "rows")
PARQUET_COLUMNS = ("row", "source", "server", "gpu_capable", "supported_cards", "slices", "unsupported_gpus",
                   "unsupported", "problems", "rows", "cpu", "price", "datacenter", "hourly_price")


def output_schema(compiled: Any):
    """The columns ``--format parquet`` writes: the reports' fields as typed columns
    (``PARQUET_COLUMNS``), then ``cards.<card id>``: the count of each card.  The text
    formats' ``cards`` and ``reason`` sentences are left out: the counts are columns."""
    import pyarrow as pa

    types = {"gpu_capable": pa.bool_(), "price": pa.float64(), "hourly_price": pa.float64(),
             **{c: pa.int64() for c in _INT_COLUMNS}}
    return pa.schema([(c, types.get(c, pa.string())) for c in PARQUET_COLUMNS]
                     + [(f"cards.{cid}", pa.int64()) for cid in compiled.card_ids])


def output_table(result: AuditTable):
    """An audited chunk as rows of :func:`output_schema`, a column at a time."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .columnar import unsupported_text

    t = result.table
    n = t.num_rows
    server = t.column("server")
    cols = {"row": pc.add(t.column("first_row"), 1), "source": pa.repeat(pa.scalar(result.source), n),
            "server": server if pa.types.is_string(server.type) else pc.cast(server, pa.string()),
            **{c: t.column(c) for c in ("gpu_capable", "supported_cards", "slices", "unsupported_gpus")},
            "unsupported": unsupported_text(result), "problems": pc.fill_null(t.column("problems"), ""),
            "rows": t.column("rows"), "cpu": pa.nulls(n, pa.string()), "price": pa.nulls(n, pa.float64()),
            "datacenter": pa.nulls(n, pa.string()), "hourly_price": pa.nulls(n, pa.float64())}
    for cid in result.compiled.card_ids:
        cols[f"cards.{cid}"] = t.column(cid)
    schema = output_schema(result.compiled)
    return pa.Table.from_arrays([cols[name] for name in schema.names], names=schema.names).cast(schema)


def _price(value: Any) -> float | None:
    """A price as a number; anything else is no price in a typed column (CSV and JSON keep
    the value as given)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).strip())
    except ValueError:
        return None


def reports_table(reports: list, compiled: Any):
    """:class:`~gpuclass.audit.report.ServerReport` objects as rows of :func:`output_schema`."""
    import pyarrow as pa

    schema = output_schema(compiled)
    flat = [r.to_flat() for r in reports]
    cols: dict[str, list] = {}
    for name in schema.names:
        if name.startswith("cards."):
            cid = name[len("cards."):]
            cols[name] = [sum(c["count"] for c in r.cards if c["card"] == cid) for r in reports]
        elif name in ("price", "hourly_price"):
            cols[name] = [_price(f[name]) for f in flat]
        elif schema.field(name).type == pa.string():
            cols[name] = [None if f[name] is None else str(f[name]) for f in flat]
        else:
            cols[name] = [f[name] for f in flat]
    return pa.table(cols, schema=schema)

"""Audits of data in memory: a device table as columns (:func:`audit_table`), any frame
(:func:`audit_frame`: a pandas DataFrame or a pyarrow Table in, the same kind out).

Both reach the engines every other door reaches: a device table the device engine
(:mod:`gpuclass.audit.engine.devices`, through :func:`gpuclass.audit.ingest.arrow.as_table`),
a text frame the listing engine.  ``audit_frame`` keeps what a pandas user joins on: a text
frame gives one row per input row under the input's own index, a device table one row per
server under the index of its first row; the ``server`` column keeps the id column's dtype
(null where a row names no server).  pandas and pyarrow are imported only when called.

>>> import pandas as pd
>>> df = pd.DataFrame({"id": [7, 9], "description": ["2x RTX 6000 Ada", "Xeon"]}, index=["a", "b"])
>>> out = audit_frame(df)
>>> list(out.index), out["server"].dtype.name, out["cards.rtx-6000-ada"].tolist()
(['a', 'b'], 'int64', [2, 0])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from .ingest.columns import SERVER_COLUMNS, TEXT_COLUMNS, field_names, is_device_header, pick_column
from .progress import Progress
from .results.columns import COUNT_FIELDS, PASSTHROUGH, card_column, flat_columns

if TYPE_CHECKING:
    from .results.table import AuditTable
    from ..policy import PolicyArg
    from ..records import DeviceNames

__all__ = ["audit_table", "audit_frame", "audit_device_rows"]


_BATCH = 1 << 20  # rows of a table audited at a time


def _batches(table: Any, server: str | None, size: int) -> Any:
    """``table`` a batch of about ``size`` rows at a time, each cut where the server changes
    (within a few rows of ``size``) so that a server's rows seldom span two batches (the
    engine merges them wherever they lie; a server that stays whole needs no merging)."""
    n = table.num_rows
    column = table.column(server) if server is not None else None
    start = 0
    while start < n:
        end = min(start + size, n)
        if column is not None and end < n:
            last = column[end - 1].as_py()
            for _ in range(64):  # a server has a few rows; past that, cut anywhere
                if end >= n or column[end].as_py() != last:
                    break
                end += 1
        yield from table.slice(start, end - start).to_batches()
        start = end


def audit_table(data: Any, *, policy: PolicyArg = None, server_column: str | None = None,
                source: str = "table", db: DeviceNames | None = None, kernel: Any = None,
                progress: Any = None) -> AuditTable:
    """Audit a device table (one PCI function per row) given as columns: a pyarrow Table or
    RecordBatch, a pandas DataFrame or a dict of columns.

    Columns are found as in every device table (``server``/``id``/``host``..., ``vendor``,
    ``device``, ``class``, optional ``subvendor``/``subdevice``); IDs are hex text or
    integers.  Returns an :class:`~gpuclass.audit.results.table.AuditTable`: ``.table`` has
    one row per server, in order of first appearance, its rows merged wherever they lie.
    """
    from ..policy import compile_policy
    from .engine.devices import DeviceEngine
    from .ingest.arrow import as_table

    compiled = compile_policy(policy)
    table = as_table(data, server_column)
    fields = field_names(table.column_names, server_column)
    engine = DeviceEngine(compiled, kernel)
    engine.add_all(((batch, fields, None) for batch in _batches(table, fields["server"], _BATCH)),
                   None if progress is None else progress.advance)
    return engine.result(source, db)


def audit_device_rows(rows: Any, *, policy: PolicyArg = None, source: str = "rows") -> Any:
    """Reports for ``(server, vendor, device, subvendor, subdevice, class)`` tuples (cells as
    a device table's: hex text or integers); a row of another shape is flagged.

    >>> rows = [("a", "10de", "27b0", "10de", "16fa", "0300"), ("a", "10de", "22bc", "", "", "0403"),
    ...         ("b", "10de", "1e30", "10de", "12ba", "030000"), ("b", "zz", "1", "", "", "0300")]
    >>> [(r.server, r.slices, r.rows, r.problems) for r in audit_device_rows(rows)]
    [('a', 4, 2, []), ('b', 0, 2, ["row 4: vendor 'zz' is not a hex ID"])]
    """
    import itertools

    from ..policy import compile_policy
    from .engine.devices import DeviceEngine
    from .ingest.arrow import as_table
    from .ingest import columns
    from .ingest.columns import DEVICE_FIELDS

    compiled = compile_policy(policy)
    engine = DeviceEngine(compiled)
    fields = {f: f for f in DEVICE_FIELDS}
    it = iter(rows)
    while True:
        part = list(itertools.islice(it, columns.BATCH_ROWS))
        if not part:
            break
        cols: dict[str, list[Any]] = {f: [] for f in DEVICE_FIELDS}
        errors: dict[int, str] = {}
        for k, row in enumerate(part):
            cells = list(row) if isinstance(row, (list, tuple)) else None
            if cells is None or len(cells) != 6:
                got = len(cells) if cells is not None else type(row).__name__
                errors[k] = f"expected 6 fields (server, vendor, device, subvendor, subdevice, class), got {got}"
                cells = [cells[0] if cells else None] + [None] * 5
            for f, cell in zip(DEVICE_FIELDS, cells):
                cols[f].append(cell)
        for batch in as_table(cols).to_batches():
            engine.add(batch, fields, errors)
    return iter(engine.result(source))


def audit_frame(data: Any, *, policy: PolicyArg = None, text_column: str | None = None,
                server_column: str | None = None, progress: bool | Progress = False) -> Any:
    """Audit a pandas DataFrame or a pyarrow Table; the result is the same kind.

    A frame with ``vendor`` and ``device`` columns is a device table (one result row per
    server); otherwise each row is a server with a text column (``description``, ``text``;
    lists of lines allowed).  The result has the flat columns of every audit
    (:func:`~gpuclass.audit.results.columns.flat_columns`: the report fields, a
    ``cards.<card id>`` count per card, the passthrough fields), counts as int64, under the
    index of the input rows (see the module docstring).  ``progress`` draws a bar of the
    rows on a terminal (``True``: on stderr).
    """
    kind = _frame_kind(data)
    columns = [str(c) for c in data.columns] if kind == "pandas" else list(data.column_names)
    n = len(data) if kind == "pandas" else data.num_rows
    bar = Progress(n, unit="row") if progress is True else (progress or None)
    try:
        if is_device_header(columns):
            result = audit_table(data, policy=policy, server_column=server_column, source="frame", progress=bar)
            out, card_ids = result.flat(), result.compiled.card_ids
            id_name = field_names(columns, server_column)["server"]
        else:
            out, card_ids, id_name = _text_frame(data, kind, columns, n, policy, text_column, server_column, bar)
    finally:
        if bar is not None:
            bar.close()
    return _finish(data, kind, out, card_ids, id_name)


def _text_frame(data: Any, kind: str, columns: list[str], n: int, policy: PolicyArg, text_column: str | None,
                server_column: str | None, bar: Progress | None) -> tuple[Any, list[str], str | None]:
    from .engine.listings import TextAuditor
    from .results.listing import typed_rows
    from .results.columns import typed_schema

    def column(name: str) -> list[Any]:
        if kind == "pandas":
            return data[name].tolist()
        return data.column(name).to_pylist()

    ti = pick_column(columns, TEXT_COLUMNS, text_column, "text")
    if ti is None:
        raise InputError(f"frame has no text column (one of {', '.join(TEXT_COLUMNS)}) "
                         "and no vendor/device columns")
    si = pick_column(columns, SERVER_COLUMNS, server_column, "server")
    fields = {"description": column(columns[ti]),
              "id": column(columns[si]) if si is not None else list(range(1, n + 1))}
    low = [c.lower() for c in columns]
    for k in ("information", "specials", *PASSTHROUGH):
        if k in low and k not in fields:
            fields[k] = column(columns[low.index(k)])

    def records():
        for i in range(n):
            rec = {}
            for k, v in fields.items():
                value = v[i]
                if hasattr(value, "tolist"):  # a numpy array cell (a list column)
                    value = value.tolist()
                if value is None or (isinstance(value, float) and value != value):
                    continue
                rec[k] = value
            yield rec
    auditor = TextAuditor(policy)
    reports = []
    for batch in auditor.batches((i, "frame", rec, None) for i, rec in enumerate(records(), 1)):
        reports += batch.reports()
        if bar is not None:
            bar.advance(len(batch))
            bar.row(len(batch))
    card_ids = list(auditor.compiled.card_ids)
    import pyarrow as pa

    typed = typed_rows(reports, tuple(card_ids), typed_schema(card_ids))
    from .render import cards_cell

    sentences = {"cards": pa.array([cards_cell([(c["card"], c["count"]) for c in r.cards]) for r in reports],
                                   pa.string()),
                 "reason": pa.array([r.reason for r in reports], pa.string())}
    names = flat_columns(card_ids)
    out = pa.table({c: sentences[c] if c in sentences else typed.column(c) for c in names})
    return out, card_ids, None if si is None else columns[si]


def _finish(data: Any, kind: str, out: Any, card_ids: list[str], id_name: str | None) -> Any:
    """The flat table as the input's kind: counts int64, the index of each report's first
    row, the id column's own values (null where a row names no server)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .ingest.arrow import is_view

    for c in (*COUNT_FIELDS, *map(card_column, card_ids)):
        out = out.set_column(out.schema.get_field_index(c), c, out.column(c).cast(pa.int64()))
    first = out.column("row").to_numpy() - 1 if out.num_rows else np.empty(0, np.int64)
    nameless = np.asarray(out.column("server").is_null(), dtype=bool) if out.num_rows else np.zeros(0, bool)
    if kind == "pandas":
        frame = out.to_pandas()
        frame.index = data.index[first]
        if id_name is not None:
            ids = data[id_name].iloc[first].to_numpy()
            if nameless.any():
                ids = ids.astype(object)
                ids[nameless] = None
            frame["server"] = ids
        return frame
    if id_name is not None:
        ids = data.column(id_name)
        if is_view(ids.type):  # the same values, in a type Arrow can take from
            ids = ids.cast(pa.large_binary() if "binary" in str(ids.type) else pa.large_string())
        ids = ids.take(pa.array(first))
        if nameless.any():
            ids = pc.if_else(pa.array(nameless), pa.scalar(None, ids.type), ids)
        out = out.set_column(out.schema.get_field_index("server"), "server", ids)
    return out


def _frame_kind(data: Any) -> str:
    mod = type(data).__module__
    if mod.startswith("pandas") and hasattr(data, "columns"):
        return "pandas"
    if mod.startswith("pyarrow") and hasattr(data, "column_names"):
        return "arrow"
    raise InputError(f"audit_frame: expected a pandas DataFrame or a pyarrow Table, "
                     f"got {type(data).__name__}")

"""Auditing data frames: a pandas DataFrame or a pyarrow Table in, the same kind out.

The result keeps what a pandas user joins on: a text frame gives one row per input
row under the input's own index, a device table one row per server under the index
of its first row; the ``server`` column keeps the id column's dtype.  Beside the
text summary (``cards``) there is one count column per allowlisted card,
``cards.<card id>``.  pandas and pyarrow are imported only here, and only when called.

>>> import pandas as pd
>>> df = pd.DataFrame({"id": [7, 9], "description": ["2x RTX 6000 Ada", "Xeon"]}, index=["a", "b"])
>>> out = audit_frame(df)
>>> list(out.index), out["server"].dtype.name, out["cards.rtx-6000-ada"].tolist()
(['a', 'b'], 'int64', [2, 0])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError
from .csvfiles import pick_column
from .devices import DeviceAuditor
from .listings import TextAuditor
from .progress import Progress
from .readers import CHUNK_ROWS, DEVICE_FIELDS, SERVER_COLUMNS, TEXT_COLUMNS, is_device_header
from .report import CSV_COLUMNS, PASSTHROUGH
from .tables import arrow_column, device_columns

__all__ = ["audit_frame"]


def audit_frame(data: Any, *, policy: Any = None, text_column: str | None = None,
                server_column: str | None = None, progress: bool | Progress = False) -> Any:
    """Audit a pandas DataFrame or a pyarrow Table; the result is the same kind.

    A frame with ``vendor`` and ``device`` columns is a device table (one
    result row per server); otherwise each row is a server with a text column
    (``description``, ``text``; lists of lines allowed).  The result has the
    columns of ``CSV_COLUMNS`` and ``cards.<card id>`` counts, under the index of the
    input rows (see the module docstring).  ``progress`` draws a bar of the rows on a
    terminal (``True``: on stderr).
    """
    kind = _frame_kind(data)
    if kind == "pandas":
        columns = [str(c) for c in data.columns]

        def column(name: str) -> list[Any]:
            return data[name].tolist()
        n = len(data)
    else:
        columns = list(data.column_names)

        def column(name: str) -> Any:
            return arrow_column(data.column(name).combine_chunks()) if data.num_rows else []
        n = data.num_rows
    if is_device_header(columns):
        idx = device_columns(columns, server_column)
        id_name = None if idx["server"] is None else columns[idx["server"]]
        table = _arrow_devices(data, kind, [columns[j] for j in idx.values() if j is not None])
        if table is not None:  # a column at a time (a pandas object column of mixed types: row by row)
            return _device_frame(data, kind, table, id_name, policy, server_column, progress)
        cols_all = {f: (None if idx[f] is None else column(columns[idx[f]])) for f in DEVICE_FIELDS}

        def chunks():
            for lo in range(0, n, CHUNK_ROWS):
                hi = min(n, lo + CHUNK_ROWS)
                yield {"row": np.arange(lo + 1, hi + 1), "error": None,
                       **{f: (None if v is None else v[lo:hi]) for f, v in cols_all.items()}}
        auditor = DeviceAuditor(policy)
        compiled = auditor.compiled
        reports = auditor.reports(chunks(), "frame")
        id_name = None if idx["server"] is None else columns[idx["server"]]
    else:
        ti = pick_column(columns, TEXT_COLUMNS, text_column, "text")
        if ti is None:
            raise InputError(f"frame has no text column (one of {', '.join(TEXT_COLUMNS)}) "
                             "and no vendor/device columns")
        si = pick_column(columns, SERVER_COLUMNS, server_column, "server")
        id_name = None if si is None else columns[si]
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
        compiled = auditor.compiled
        reports = auditor.reports((i, "frame", rec, None) for i, rec in enumerate(records(), 1))
    bar = Progress(n, unit="row") if progress is True else (progress or None)
    done = []
    for r in reports:
        done.append(r)
        if bar is not None:
            bar.advance(r.rows)
            bar.row()
    if bar is not None:
        bar.close()
    first = np.array([r.row - 1 for r in done], dtype=np.int64)
    flat = [r.to_flat() for r in done]
    out_cols: dict[str, Any] = {c: [r[c] for r in flat] for c in CSV_COLUMNS}
    for card in compiled.card_ids:
        out_cols[f"cards.{card}"] = np.array([sum(c["count"] for c in r.cards if c["card"] == card)
                                              for r in done], dtype=np.int64)
    if kind == "pandas":
        import pandas as pd
        out = pd.DataFrame(out_cols, columns=list(out_cols), index=data.index[first])
        if id_name is not None:
            out["server"] = data[id_name].iloc[first].to_numpy()
        return out
    import pyarrow as pa
    table = pa.table(out_cols)
    if id_name is not None:
        ids = data.column(id_name).take(pa.array(first))
        table = table.set_column(table.schema.get_field_index("server"), "server", ids)
    return table


def _frame_kind(data: Any) -> str:
    mod = type(data).__module__
    if mod.startswith("pandas") and hasattr(data, "columns"):
        return "pandas"
    if mod.startswith("pyarrow") and hasattr(data, "column_names"):
        return "arrow"
    raise InputError(f"audit_frame: expected a pandas DataFrame or a pyarrow Table, "
                     f"got {type(data).__name__}")


def _arrow_devices(data: Any, kind: str, names: list[str]) -> Any:
    """The device columns as a pyarrow Table, or None where a column mixes cell types
    (integers beside hex text: each cell must be read as what it is)."""
    import pyarrow as pa

    if kind == "arrow":
        return data.select(names)
    try:
        return pa.Table.from_pandas(data[names], preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None


def _device_frame(data: Any, kind: str, table: Any, id_name: str | None, policy: Any,
                  server_column: str | None, progress: bool | Progress) -> Any:
    """A device table audited a column at a time (:func:`~gpuclass.audit.stream.iter_audit`,
    which flags a server whose rows come back later as the row path does)."""
    import pyarrow as pa

    from .stream import iter_audit

    bar = Progress(table.num_rows, unit="row") if progress is True else (progress or None)
    parts = []
    for chunk in iter_audit(table.to_batches(max_chunksize=1 << 20), policy=policy,
                            server_column=server_column, source="frame"):
        flat = chunk.flat()
        for cid in chunk.compiled.card_ids:
            flat = flat.append_column(f"cards.{cid}", chunk.table.column(cid).cast(pa.int64()))
        parts.append(flat)
        if bar is not None:
            bar.advance(int(chunk.table.column("rows").to_numpy().sum()))
            bar.row(len(chunk))
    if bar is not None:
        bar.close()
    if not parts:
        from ..policy import compile_policy

        ids = compile_policy(policy).card_ids
        names = [*CSV_COLUMNS, *(f"cards.{c}" for c in ids)]
        out = pa.table({c: pa.array([], pa.int64() if c.startswith("cards.") else pa.string()) for c in names})
    else:
        out = pa.concat_tables(parts)
    for c in ("row", "supported_cards", "slices", "unsupported_gpus", "rows"):
        out = out.set_column(out.schema.get_field_index(c), c, out.column(c).cast(pa.int64()))
    first = out.column("row").to_numpy() - 1 if out.num_rows else np.empty(0, np.int64)
    if kind == "pandas":
        frame = out.to_pandas()
        frame.index = data.index[first]
        if id_name is not None:
            frame["server"] = data[id_name].iloc[first].to_numpy()
        return frame
    if id_name is not None:
        out = out.set_column(out.schema.get_field_index("server"), "server",
                             data.column(id_name).take(pa.array(first)))
    return out

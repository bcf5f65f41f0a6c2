"""Auditing data frames: a pandas DataFrame or a pyarrow Table in, the same kind out.

pandas and pyarrow are imported only here, and only when called.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError
from .devices import DeviceAuditor
from .listings import audit_records
from .csvfiles import pick_column
from .readers import CHUNK_ROWS, DEVICE_FIELDS, SERVER_COLUMNS, TEXT_COLUMNS, is_device_header
from .tables import arrow_column, device_columns
from .report import CSV_COLUMNS, PASSTHROUGH

__all__ = ["audit_frame"]


def audit_frame(data: Any, *, policy: Any = None, text_column: str | None = None,
                server_column: str | None = None) -> Any:
    """Audit a pandas DataFrame or a pyarrow Table; the result is the same kind.

    A frame with ``vendor`` and ``device`` columns is a device table (one
    result row per server); otherwise each row is a server with a text column
    (``description``, ``text``; lists of lines allowed).  The result has the
    columns of ``CSV_COLUMNS``.  pandas and pyarrow are imported only here.
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
        cols_all = {f: (None if idx[f] is None else column(columns[idx[f]])) for f in DEVICE_FIELDS}

        def chunks():
            for lo in range(0, n, CHUNK_ROWS):
                hi = min(n, lo + CHUNK_ROWS)
                yield {"row": np.arange(lo + 1, hi + 1), "error": None,
                       **{f: (None if v is None else v[lo:hi]) for f, v in cols_all.items()}}
        reports = DeviceAuditor(policy).reports(chunks(), "frame")
    else:
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
        reports = audit_records(records(), policy=policy, source="frame")
    rows = [r.to_flat() for r in reports]
    out_cols = {c: [r[c] for r in rows] for c in CSV_COLUMNS}
    if kind == "pandas":
        import pandas as pd
        return pd.DataFrame(out_cols, columns=list(CSV_COLUMNS))
    import pyarrow as pa
    return pa.table(out_cols)


def _frame_kind(data: Any) -> str:
    mod = type(data).__module__
    if mod.startswith("pandas") and hasattr(data, "columns"):
        return "pandas"
    if mod.startswith("pyarrow") and hasattr(data, "column_names"):
        return "arrow"
    raise InputError(f"audit_frame: expected a pandas DataFrame or a pyarrow Table, "
                     f"got {type(data).__name__}")

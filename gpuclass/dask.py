"""Fleet audits on more than one machine: a Dask DataFrame of device rows in, one row per server out.

:func:`audit` runs :func:`gpuclass.audit_table` on every partition (the native core, without the
GIL, on each worker) and joins the servers whose rows span partitions by the rollup's rules,
so the answer equals the single-process one.  The compiled policy travels as its plain data (a
few KiB) and becomes one cached, frozen copy per worker process; nothing else is shipped.

Needs the ``dask`` extra (``pip install 'gpuclass[dask]'``).  Problems name the partition and
the row inside it (``partition 3 row 17: vendor 'zz' is not a hex ID``): a partition does not
know its place in the whole table.

>>> import pandas as pd, dask.dataframe as dd
>>> df = pd.DataFrame({"server": ["a", "a", "b"], "vendor": ["10de", "10de", "8086"],
...                    "device": ["27b0", "27b0", "1533"], "class": ["0300", "0300", "0200"]})
>>> out = audit(dd.from_pandas(df, npartitions=2)).compute()
>>> out.set_index("server").loc["a", ["supported_cards", "slices"]].tolist()
[2, 8]
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .audit.columnar import audit_table, result_columns
from .audit.readers import DEVICE_FIELDS
from .audit.tables import device_columns
from .errors import InputError
from .policy import compile_policy

__all__ = ["audit", "partition_audit"]

_SUMS = ("supported_cards", "slices", "unsupported_gpus", "invalid_rows", "rows")
_NAMELESS = "\x00nameless:"  # a key no server has: rows without a server stay apart


def _numbered(problem: str) -> bool:
    """True for a problem that starts 'row N: ' (a row number within the partition)."""
    head, sep, _ = problem.partition(": ")
    return bool(sep) and head.startswith("row ") and head[4:].isdigit()


def _columns(compiled: Any) -> list[str]:
    return [c for c in result_columns(compiled) if c != "first_row"]


def _meta(compiled: Any, server_dtype: Any):
    import pandas as pd

    cols = {c: pd.Series(dtype="int64") for c in _columns(compiled)}
    cols["server"] = pd.Series(dtype=server_dtype)
    cols["gpu_capable"] = pd.Series(dtype="bool")
    cols["problems"] = pd.Series(dtype="object")
    cols["_key"] = pd.Series(dtype="object")
    return pd.DataFrame(cols)


def partition_audit(part: Any, compiled: Any, server_column: str | None = None,
                    partition_info: dict | None = None):
    """One partition (a pandas DataFrame) audited in process: one row per server of it."""
    import pandas as pd

    number = (partition_info or {}).get("number", 0)
    result = audit_table(part, policy=compiled, server_column=server_column)
    frame = result.table.to_pandas()
    frame = frame.drop(columns=["first_row"])
    for c in frame.columns:
        if c not in ("server", "gpu_capable", "problems"):
            frame[c] = frame[c].astype("int64")
    problems: list[str | None] = [None] * len(frame)
    for g, texts in result.problems_by_server().items():
        problems[g] = "; ".join(f"partition {number} {x}" if _numbered(x) else x for x in texts)
    frame["problems"] = problems
    keys = frame["server"].astype(object)
    nameless = keys.isna().to_numpy()
    keys = keys.where(~nameless, [f"{_NAMELESS}{number}:{i}" for i in range(len(frame))])
    frame["_key"] = keys.astype(str) if len(frame) else pd.Series(dtype="object")
    return frame


def _join_problems(values):
    parts = [v for v in values if isinstance(v, str) and v]
    return "; ".join(parts) if parts else None


def audit(data: Any, *, policy: Any = None, server_column: str | None = None):
    """Audit a Dask DataFrame of device rows (or the Parquet dataset at a path): a Dask
    DataFrame with the columns of :func:`gpuclass.audit.columnar.result_columns` (less
    ``first_row``), one row per server."""
    import dask.dataframe as dd

    if isinstance(data, (str, os.PathLike)):
        data = dd.read_parquet(os.fspath(data))
    if not hasattr(data, "map_partitions"):
        raise InputError(f"audit: expected a dask DataFrame or a Parquet path, got {type(data).__name__}")
    compiled = compile_policy(policy)
    idx = device_columns(list(data.columns), server_column)
    server = list(data.columns)[idx["server"]]
    keep = [list(data.columns)[idx[f]] for f in DEVICE_FIELDS if idx[f] is not None]
    meta = _meta(compiled, data.dtypes[server])
    parts = data[keep].map_partitions(partition_audit, compiled, server_column, meta=meta,
                                      partition_info=True)
    cards = list(compiled.card_ids)
    sums = {c: "sum" for c in (*_SUMS, *cards)}
    agg = dd.Aggregation("join", chunk=lambda s: s.agg(_join_problems),
                         agg=lambda s: s.agg(_join_problems))
    merged = parts.groupby("_key", sort=False).agg({**sums, "server": "first", "problems": agg})
    return merged.map_partitions(_finish, compiled, meta=meta.drop(columns=["_key"]))


def _finish(frame: Any, compiled: Any):
    """Per-server rows after the join: capability and column order as ``audit_table`` has them."""
    frame = frame.reset_index(drop=True)
    frame["gpu_capable"] = frame["supported_cards"] > 0
    for c in (*_SUMS, *compiled.card_ids):
        frame[c] = frame[c].astype(np.int64)
    return frame[_columns(compiled)]

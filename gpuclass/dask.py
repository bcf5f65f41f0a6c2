"""Fleet audits on more than one machine: a Dask DataFrame of device rows in, one row per server out.

:func:`audit` runs :func:`gpuclass.audit_table` on every partition (the native core, without the
GIL, on each worker); only the servers whose rows span partitions are then joined, by the
rollup's rules, so the answer equals the single-process one.  The graph, per partition:

1. audit the partition: one row per server of it, and a 64-bit hash of each server name;
2. its distinct hashes, sorted, go up a tree that finds the hashes seen in two partitions or
   more (eight bytes per server travel, never its rows);
3. rows whose hash is not among those pass through untouched; the others are sent, by hash,
   to one of ``split_out`` merge tasks, which group them by the server name itself (a hash
   collision only sends a few more rows through a merge: the answer stays exact) and add
   up their counts, problems joined in partition order.

The result's partitions are the audited ones, then the merged ones.  Rows without a server
name stay rows of their own, as :func:`gpuclass.audit_table` has them.  The compiled policy
travels as its plain data (a few KiB) and becomes one cached, frozen copy per worker process.

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

from ._native import core, key_column
from .audit.columnar import audit_table, int32_columns, pooled_empty, result_columns
from .audit.readers import DEVICE_FIELDS
from .audit.tables import device_columns
from .errors import InputError
from .policy import compile_policy

__all__ = ["audit", "partition_audit"]

# Fixed, so that an audit gives its rows in the same order every run; a collision costs
# only a few more rows through a merge, which compares the names themselves.
_SEED = 0x6770_7563_6C61_7373
_SPLIT_EVERY = 16  # hash arrays combined per task of the tree


def _numbered(problem: str) -> bool:
    """True for a problem that starts 'row N: ' (a row number within the partition)."""
    head, sep, _ = problem.partition(": ")
    return bool(sep) and head.startswith("row ") and head[4:].isdigit()


def _columns(compiled: Any) -> list[str]:
    return [c for c in result_columns(compiled) if c != "first_row"]


def _counts(compiled: Any) -> list[str]:
    """The columns a merge adds up."""
    return [c for c in _columns(compiled) if c not in ("server", "gpu_capable", "problems")]


# counts are int32, as audit_table has them (half the memory a partition's frame takes);
# a server's rows, int64
_WIDE = ("rows",)


def _meta(compiled: Any, server_dtype: Any):
    import pandas as pd

    cols = {c: pd.Series(dtype="int64" if c in _WIDE else "int32") for c in _columns(compiled)}
    cols["server"] = pd.Series(dtype=server_dtype)
    cols["gpu_capable"] = pd.Series(dtype="bool")
    cols["problems"] = pd.Series(dtype=pd.StringDtype("pyarrow"))
    return pd.DataFrame(cols)


def _server_dtype(part: Any, server_column: str | None) -> Any:
    names = list(part.columns)
    return part.dtypes.iloc[device_columns(names, server_column)["server"]]


def _problems(result: Any, number: int):
    """The problem column: each flagged server's problems as one text (rows named by
    partition), null elsewhere; only the flagged servers are visited."""
    import pandas as pd
    import pyarrow as pa

    flagged = result.problems_by_server()
    if not flagged:
        return pd.arrays.ArrowStringArray(pa.nulls(len(result), pa.large_string()))
    where = np.full(len(result), -1, np.int64)
    where[np.fromiter(flagged, np.int64, len(flagged))] = np.arange(len(flagged))
    texts = pa.array(["; ".join(f"partition {number} {x}" if _numbered(x) else x for x in p)
                      for p in flagged.values()], pa.large_string())
    return pd.arrays.ArrowStringArray(texts.take(pa.array(where, mask=where < 0)))


def _audit(part: Any, compiled: Any, server_column: str | None, number: int):
    """``part`` audited: the :class:`~gpuclass.audit.columnar.AuditTable` and its rows as
    the pandas frame :func:`audit` gives (the dtypes of :func:`_meta`)."""
    import pandas as pd

    result = audit_table(part, policy=compiled, server_column=server_column)
    t = result.table
    # the audit's int32 block becomes the frame's, without a copy (only the frame and the
    # server column are read from here on); pandas copies a bare array it is given as a
    # column, and not a Series that wraps it
    frame = pd.DataFrame(result.int32_block(writeable=True).T, columns=int32_columns(compiled),
                         copy=False)
    for c in _WIDE:  # after the counts, as in result_columns
        frame[c] = pd.Series(_writeable(t[c].to_numpy()), copy=False)
    server = t["server"].to_pandas()
    want = _server_dtype(part, server_column)
    frame.insert(0, "server", server if server.dtype == want else server.astype(want))
    frame.insert(1, "gpu_capable", pd.Series(t["gpu_capable"].to_numpy(), copy=False))
    frame["problems"] = _problems(result, number)
    return result, frame


def _writeable(values: np.ndarray) -> np.ndarray:
    """``values`` where they are writeable, else a copy in Arrow's pool: a partition's
    frame is its user's to change (Arrow's columns come out of it read-only)."""
    if values.flags.writeable:
        return values
    out = pooled_empty(values.shape, values.dtype)
    np.copyto(out, values)
    return out


def partition_audit(part: Any, compiled: Any, server_column: str | None = None,
                    partition_info: dict | None = None):
    """One partition (a pandas DataFrame) audited in process: one row per server of it, with
    the columns of :func:`audit`'s result (problems name the partition, ``partition_info``'s
    number, as ``map_partitions`` passes it).

    >>> import pandas as pd
    >>> part = pd.DataFrame({"server": ["a", "b"], "vendor": ["10de", "zz"],
    ...                      "device": ["27b0", "27b0"], "class": ["0300", "0300"]})
    >>> partition_audit(part, compile_policy(), partition_info={"number": 3})["problems"].tolist()
    [<NA>, "partition 3 row 2: vendor 'zz' is not a hex ID"]
    """
    return _audit(part, compiled, server_column, (partition_info or {}).get("number", 0))[1]


def _audited(part: Any, number: int, compiled: Any, server_column: str | None):
    """A partition's rows per server, the hash of each server name and which rows have a name."""
    result, frame = _audit(part, compiled, server_column, number)
    server = result.table["server"]
    named = ~np.asarray(server.is_null(), dtype=bool) if server.null_count else np.ones(len(frame), bool)
    return frame, core.key_hashes(key_column(server, "server"), _SEED), named


def _distinct(sorted_hashes: np.ndarray) -> np.ndarray:
    keep = np.ones(len(sorted_hashes), bool)
    np.not_equal(sorted_hashes[1:], sorted_hashes[:-1], out=keep[1:])
    return sorted_hashes[keep]


def _seen(audited: tuple) -> tuple[np.ndarray, np.ndarray]:
    """A tree leaf: the partition's distinct server hashes (sorted), none shared yet."""
    _, hashes, named = audited
    mine = hashes[named]
    mine.sort()
    return _distinct(mine), np.empty(0, np.uint64)


def _combine(items: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The hashes seen by some of a group of partitions (sorted, distinct) and those seen by
    two or more.  Each item's seen hashes are distinct, so a hash twice in the concatenation
    comes from two partitions."""
    seen = np.sort(np.concatenate([s for s, _ in items]))
    twice = seen[1:][seen[1:] == seen[:-1]]
    shared = np.sort(np.concatenate([twice, *(sh for _, sh in items)]))
    return _distinct(seen), _distinct(shared)


def _shared(items: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """The tree's root: the hashes seen in two partitions or more."""
    return _combine(items)[1]


def _split(audited: tuple, shared: np.ndarray, split_out: int) -> tuple:
    """The partition's rows of servers no other partition has (untouched where there are
    none), then its other rows, one frame per merge task."""
    frame, hashes, named = audited
    empty = frame.iloc[:0]
    hit = np.zeros(len(frame), bool)
    if len(shared) and len(frame):
        at = np.minimum(np.searchsorted(shared, hashes), len(shared) - 1)
        hit = named & (shared[at] == hashes)
    if not hit.any():
        return (frame, *[empty] * split_out)
    rows = np.flatnonzero(hit)
    bucket = hashes[rows] % np.uint64(split_out)
    pieces = [frame.take(rows[bucket == j]).reset_index(drop=True) for j in range(split_out)]
    return (frame.take(np.flatnonzero(~hit)).reset_index(drop=True), *pieces)


def _merge(pieces: list[Any], compiled: Any):
    """One row per server of ``pieces`` (frames in partition order): counts added up, the
    first name kept, problems joined in partition order."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    full = [p for p in pieces if len(p)]
    if not full:
        return pieces[0]
    frame = pd.concat(full, ignore_index=True)
    codes, _ = pd.factorize(frame["server"], sort=False)  # groups in order of first appearance
    order = np.argsort(codes, kind="stable")
    group = codes[order]
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    out: dict[str, Any] = {"server": frame["server"].take(order[starts]).reset_index(drop=True)}
    for c in _counts(compiled):
        out[c] = np.add.reduceat(frame[c].to_numpy(np.int64)[order], starts).astype(frame[c].dtype)
    out["gpu_capable"] = out["supported_cards"] > 0
    texts = pa.array(frame["problems"])
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    texts = texts.take(pa.array(order))
    flagged = np.flatnonzero(np.asarray(texts.is_valid(), dtype=bool))
    per = np.bincount(group[flagged], minlength=len(starts))
    offsets = pa.array(np.concatenate([[0], np.cumsum(per)]).astype(np.int64))
    joined = pc.binary_join(pa.LargeListArray.from_arrays(offsets, texts.take(pa.array(flagged))),
                            pa.scalar("; ", texts.type))
    joined = pc.if_else(pa.array(per > 0), joined, pa.scalar(None, joined.type))
    out["problems"] = pd.arrays.ArrowStringArray(joined)
    return pd.DataFrame(out, copy=False)[_columns(compiled)]


def _graph(keys: list[Any], compiled: Any, server_column: str | None, split_out: int, token: str):
    """The tasks of an audit over the partitions at ``keys``; the keys of its outputs."""
    import operator
    from functools import partial

    name = f"gpuclass-audit-{token}"
    one = partial(_audited, compiled=compiled, server_column=server_column)
    dsk: dict[Any, Any] = {}
    level = []
    for i, key in enumerate(keys):
        dsk[(name, "part", i)] = (one, key, i)
        dsk[(name, "seen", i)] = (_seen, (name, "part", i))
        level.append((name, "seen", i))
    depth = 0
    while len(level) > _SPLIT_EVERY:  # a tree: each task combines _SPLIT_EVERY hash arrays
        depth += 1
        groups = [level[j:j + _SPLIT_EVERY] for j in range(0, len(level), _SPLIT_EVERY)]
        for j, group in enumerate(groups):
            dsk[(name, "combine", depth, j)] = (_combine, group)
        level = [(name, "combine", depth, j) for j in range(len(groups))]
    dsk[(name, "shared")] = (_shared, level)
    outputs = []
    for i in range(len(keys)):
        dsk[(name, "split", i)] = (_split, (name, "part", i), (name, "shared"), split_out)
        for j in range(split_out + 1):
            dsk[(name, "piece", i, j)] = (operator.getitem, (name, "split", i), j)
        outputs.append((name, "piece", i, 0))
    merge = partial(_merge, compiled=compiled)
    for j in range(split_out):
        dsk[(name, "merged", j)] = (merge, [(name, "piece", i, 1 + j) for i in range(len(keys))])
        outputs.append((name, "merged", j))
    return name, dsk, outputs


def audit(data: Any, *, policy: Any = None, server_column: str | None = None,
          split_out: int | None = None):
    """Audit a Dask DataFrame of device rows (or the Parquet dataset at a path): a Dask
    DataFrame with the columns of :func:`gpuclass.audit.columnar.result_columns` (less
    ``first_row``), one row per server, in no particular order.

    ``split_out``: how many tasks merge the servers whose rows span partitions (default: one
    per partition, at most 8).  Input sorted by server leaves them little to do; unsorted
    input on many workers wants more (each partition adds ``split_out + 4`` tasks to the
    graph).  The result has the audited partitions, then ``split_out`` merged ones.
    """
    import dask.dataframe as dd
    from dask.base import tokenize
    from dask.delayed import Delayed
    from dask.highlevelgraph import HighLevelGraph

    if isinstance(data, (str, os.PathLike)):
        data = dd.read_parquet(os.fspath(data))
    if not hasattr(data, "map_partitions"):
        raise InputError(f"audit: expected a dask DataFrame or a Parquet path, got {type(data).__name__}")
    compiled = compile_policy(policy)
    names = list(data.columns)
    idx = device_columns(names, server_column)
    keep = [names[idx[f]] for f in DEVICE_FIELDS if idx[f] is not None]
    meta = _meta(compiled, data.dtypes[names[idx["server"]]])
    parts = data[keep].to_delayed()
    n = len(parts)
    if split_out is None:
        split_out = min(n, 8)
    if not isinstance(split_out, int) or split_out < 1:
        raise InputError(f"audit: split_out must be a whole number >= 1, got {split_out!r}")
    token = tokenize(*(p.key for p in parts), compiled, server_column, split_out)
    name, dsk, outputs = _graph([p.key for p in parts], compiled, server_column, split_out, token)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=parts)
    return dd.from_delayed([Delayed(k, graph, layer=name) for k in outputs], meta=meta, verify_meta=False)

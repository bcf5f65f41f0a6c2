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

The result's partitions are the audited ones, then the merged ones.  :func:`gather` brings a
result into this process as one pandas frame, each partition straight from the worker that
holds it (``compute()`` first puts them together on one worker).  Rows without a server
name stay rows of their own, as :func:`gpuclass.audit_table` has them.  The same tree adds up
the partitions' lengths, so that ``row`` (a server's first row) and the row numbers in
``problems`` count from the start of the whole table, 1-based, as in every other audit.  The
compiled policy travels as its plain data (a few KiB) and becomes one cached, frozen copy per
worker process.

Needs the ``dask`` extra (``pip install 'gpuclass[dask]'``).

>>> import pandas as pd, dask.dataframe as dd
>>> df = pd.DataFrame({"server": ["a", "a", "b"], "vendor": ["10de", "10de", "8086"],
...                    "device": ["27b0", "27b0", "1533"], "class": ["0300", "0300", "0200"]})
>>> out = audit(dd.from_pandas(df, npartitions=2)).compute()
>>> out.set_index("server").loc["a", ["supported_cards", "slices"]].tolist()
[2, 8]
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from ._native import core, key_column
from .audit.frames import audit_table
from .audit.ingest.columns import DEVICE_FIELDS, device_columns
from .audit.pool import pooled_empty
from .audit.render import device_conflicts
from .audit.results.columns import card_column, int32_columns, table_columns
from .errors import InputError
from .policy import compile_policy

if TYPE_CHECKING:
    from .policy import PolicyArg

__all__ = ["audit", "gather", "partition_audit"]

# Fixed, so that an audit gives its rows in the same order every run; a collision costs
# only a few more rows through a merge, which compares the names themselves.
_SEED = 0x6770_7563_6C61_7373
_SPLIT_EVERY = 16  # hash arrays combined per task of the tree


def _columns(compiled: Any) -> list[str]:
    return table_columns(compiled.card_ids)


def _counts(compiled: Any) -> list[str]:
    """The columns a merge adds up."""
    return [c for c in _columns(compiled) if c not in ("server", "gpu_capable", "problems", "conflicts", "row")]


# counts are int32, as audit_table has them (half the memory a partition's frame takes);
# a server's rows and first row, int64
_WIDE = ("rows", "row")


def _meta(compiled: Any, server_dtype: Any):
    import pandas as pd

    cols = {c: pd.Series(dtype="int64" if c in _WIDE else "int32") for c in _columns(compiled)}
    cols["server"] = pd.Series(dtype=server_dtype)
    cols["gpu_capable"] = pd.Series(dtype="bool")
    cols["problems"] = pd.Series(dtype=pd.StringDtype("pyarrow"))
    cols["conflicts"] = pd.Series(dtype=pd.StringDtype("pyarrow"))
    return pd.DataFrame(cols)


def _server_dtype(part: Any, server_column: str | None) -> Any:
    names = list(part.columns)
    return part.dtypes.iloc[device_columns(names, server_column)["server"]]


def _texts(flagged: dict[int, list[str]], n: int):
    """A text column of ``n`` servers: each flagged server's texts joined, null elsewhere;
    only the flagged servers are visited."""
    import pandas as pd
    import pyarrow as pa

    if not flagged:
        return pd.arrays.ArrowStringArray(pa.nulls(n, pa.large_string()))
    where = np.full(n, -1, np.int64)
    where[np.fromiter(flagged, np.int64, len(flagged))] = np.arange(len(flagged))
    texts = pa.array(["; ".join(p) for p in flagged.values()], pa.large_string())
    return pd.arrays.ArrowStringArray(texts.take(pa.array(where, mask=where < 0)))


def _audit(part: Any, compiled: Any, server_column: str | None):
    """``part`` audited: the :class:`~gpuclass.audit.results.table.AuditTable` and its rows
    as the pandas frame :func:`audit` gives (the dtypes of :func:`_meta`; ``row`` and
    ``problems`` counted within the partition until :func:`_place` moves them)."""
    import pandas as pd

    result = audit_table(part, policy=compiled, server_column=server_column)
    t = result.table
    # the audit's int32 block becomes the frame's, without a copy (only the frame and the
    # server column are read from here on); pandas copies a bare array it is given as a
    # column, and not a Series that wraps it
    frame = pd.DataFrame(result.int32_block(writeable=True).T, columns=int32_columns(compiled.card_ids),
                         copy=False)
    for c in _WIDE:  # after the counts, as in table_columns
        frame[c] = pd.Series(_writeable(t[c].to_numpy()), copy=False)
    server = t["server"].to_pandas()
    want = _server_dtype(part, server_column)
    frame.insert(0, "server", server if server.dtype == want else server.astype(want))
    frame.insert(1, "gpu_capable", pd.Series(t["gpu_capable"].to_numpy(), copy=False))
    return result, frame


def _place(result: Any, frame: Any, offset: int) -> Any:
    """A partition's frame with its rows counted from ``offset`` (its first row in the table)."""
    if offset:
        frame["row"] += offset
    frame["problems"] = _texts(result.problem_lists(offset, conflicts=False), len(result))
    frame["conflicts"] = _texts(result.conflict_lists(), len(result))
    return frame


def _writeable(values: np.ndarray) -> np.ndarray:
    """``values`` where they are writeable, else a copy in Arrow's pool: a partition's
    frame is its user's to change (Arrow's columns come out of it read-only)."""
    if values.flags.writeable:
        return values
    out = pooled_empty(values.shape, values.dtype)
    np.copyto(out, values)
    return out


def partition_audit(part: Any, compiled: Any, server_column: str | None = None, offset: int = 0):
    """One partition (a pandas DataFrame) audited in process: one row per server of it, with
    the columns of :func:`audit`'s result, rows counted from ``offset`` (the partition's
    first row in the whole table).

    >>> import pandas as pd
    >>> part = pd.DataFrame({"server": ["a", "b"], "vendor": ["10de", "zz"],
    ...                      "device": ["27b0", "27b0"], "class": ["0300", "0300"]})
    >>> partition_audit(part, compile_policy(), offset=10)["problems"].tolist()
    [<NA>, "row 12: vendor 'zz' is not a hex ID"]
    """
    return _place(*_audit(part, compiled, server_column), offset)


def _audited(part: Any, number: int, compiled: Any, server_column: str | None):
    """A partition audited, the hash of each server name, which rows have a name, and the
    partition's number and length."""
    result, frame = _audit(part, compiled, server_column)
    server = result.table["server"]
    named = ~np.asarray(server.is_null(), dtype=bool) if server.null_count else np.ones(len(frame), bool)
    return result, frame, core.key_hashes(key_column(server, "server"), _SEED), named, number, len(part)


def _distinct(sorted_hashes: np.ndarray) -> np.ndarray:
    keep = np.ones(len(sorted_hashes), bool)
    np.not_equal(sorted_hashes[1:], sorted_hashes[:-1], out=keep[1:])
    return sorted_hashes[keep]


def _seen(audited: tuple) -> tuple[np.ndarray, np.ndarray, dict[int, int]]:
    """A tree leaf: the partition's distinct server hashes (sorted), none shared yet, and
    its length."""
    _, _, hashes, named, number, length = audited
    mine = hashes[named]
    mine.sort()
    return _distinct(mine), np.empty(0, np.uint64), {number: length}


def _seen_and_shared(items: list[tuple[np.ndarray, np.ndarray, dict[int, int]]]) -> tuple[np.ndarray,
                                                                                          np.ndarray]:
    """The hashes seen by some of a group of partitions (sorted, not distinct) and those
    seen by two or more (sorted, distinct).  Each item's seen hashes are sorted and
    distinct, so a hash twice in the concatenation comes from two partitions; the
    concatenation is sorted runs, which a stable sort (a merge of runs) takes in a fraction
    of a full sort's time."""
    seen = np.concatenate([s for s, _, _ in items])
    seen.sort(kind="stable")
    twice = seen[1:][seen[1:] == seen[:-1]]
    shared = np.concatenate([twice, *(sh for _, sh, _ in items)])
    shared.sort(kind="stable")
    return seen, _distinct(shared)


def _lengths(items: list[tuple[np.ndarray, np.ndarray, dict[int, int]]]) -> dict[int, int]:
    """The lengths of a group's partitions, by partition number."""
    return {k: v for _, _, part in items for k, v in part.items()}


def _combine(items: list[tuple[np.ndarray, np.ndarray, dict[int, int]]]) -> tuple[np.ndarray, np.ndarray,
                                                                                  dict[int, int]]:
    """The hashes seen by some of a group of partitions (sorted, distinct), those seen by
    two or more, and the partitions' lengths."""
    seen, shared = _seen_and_shared(items)
    return _distinct(seen), shared, _lengths(items)


def _root(items: list[tuple[np.ndarray, np.ndarray, dict[int, int]]]) -> tuple[np.ndarray, dict[int, int]]:
    """The tree's root: the hashes seen in two partitions or more, and each partition's
    first row in the whole table."""
    _, shared = _seen_and_shared(items)
    lengths = _lengths(items)
    offsets, at = {}, 0
    for number in sorted(lengths):
        offsets[number] = at
        at += lengths[number]
    return shared, offsets


def _split(audited: tuple, root: tuple[np.ndarray, dict[int, int]], split_out: int) -> tuple:
    """The partition's rows of servers no other partition has (untouched where there are
    none), then its other rows, one frame per merge task; rows counted in the whole table."""
    result, frame, hashes, named, number, _ = audited
    shared, offsets = root
    frame = _place(result, frame, offsets[number])
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
    out["row"] = np.minimum.reduceat(frame["row"].to_numpy(np.int64)[order], starts)
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
    # the cards a server holds in all: its conflicts decided again (the one node decision)
    counts = np.column_stack([out[card_column(c)] for c in compiled.card_ids]) if compiled.card_ids else \
        np.zeros((len(starts), 0), np.int64)
    out["conflicts"] = _texts(device_conflicts(compiled, counts), len(starts))
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
    dsk[(name, "shared")] = (_root, level)
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


def audit(data: Any, *, policy: PolicyArg = None, server_column: str | None = None,
          split_out: int | None = None):
    """Audit a Dask DataFrame of device rows (or the Parquet dataset at a path): a Dask
    DataFrame with the columns of :func:`gpuclass.audit.results.columns.table_columns` (those
    of ``audit_table().table``), one row per server, in no particular order.

    ``split_out``: how many tasks merge the servers whose rows span partitions (default: one
    for every 16 partitions, as the tree combines them; Dask's own groupby also gives one
    output partition for every 15 input ones).  Input sorted by server leaves them little
    to do; unsorted input on many workers wants more (each partition adds ``split_out + 4``
    tasks to the graph).  The result has the audited partitions, then ``split_out`` merged
    ones, each a task of the graph itself (no task wraps them).
    """
    import dask.dataframe as dd
    from dask.base import tokenize
    from dask.dataframe.dask_expr import from_graph
    from dask.highlevelgraph import HighLevelGraph

    if isinstance(data, (str, os.PathLike)):
        data = dd.read_parquet(os.fspath(data))
    if not isinstance(data, dd.DataFrame):  # (a Delayed has every attribute)
        raise InputError(f"audit: expected a dask DataFrame or a Parquet path, got {type(data).__name__}")
    compiled = compile_policy(policy)
    names = list(data.columns)
    idx = device_columns(names, server_column)
    keep = [names[idx[f]] for f in DEVICE_FIELDS if idx[f] is not None]
    meta = _meta(compiled, data.dtypes[names[idx["server"]]])
    parts = data[keep].to_delayed()
    n = len(parts)
    if split_out is None:
        split_out = -(-n // _SPLIT_EVERY)
    if not isinstance(split_out, int) or split_out < 1:
        raise InputError(f"audit: split_out must be a whole number >= 1, got {split_out!r}")
    token = tokenize(*(p.key for p in parts), compiled, server_column, split_out)
    name, dsk, outputs = _graph([p.key for p in parts], compiled, server_column, split_out, token)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=parts)
    return from_graph(graph, meta, (None,) * (len(outputs) + 1), outputs, "gpuclass-audit")


def gather(servers: Any, client: Any = None):
    """``servers`` (an :func:`audit`'s result, or any Dask DataFrame) as one pandas frame in
    this process: the frame ``servers.compute()`` gives, each partition taken straight from
    the worker that holds it and put together here.

    ``compute()`` puts the partitions together on one worker first (the other workers'
    partitions sent there, copied into one frame) and then sends the whole frame; a
    fleet's result is large (about 100 bytes a server), and that serial tail does not
    shrink with more workers.  Gathered, each partition crosses once, from every worker at
    the same time (BENCHMARKS.md, "Issue 30, gathering a result").  The price: for a
    moment this process holds the partitions and the frame they make (``compute()`` holds
    both on the worker).

    ``client``: a ``distributed.Client`` to compute on; by default Dask's current scheduler
    (a client made the default, or the scheduler ``dask.config`` names).  A client takes
    results from the workers only if it connects to them (``direct_to_workers=True``);
    otherwise they come through the scheduler.

    >>> import pandas as pd, dask, dask.dataframe as dd
    >>> df = pd.DataFrame({"server": ["a", "a", "b"], "vendor": ["10de", "10de", "8086"],
    ...                    "device": ["27b0", "27b0", "1533"], "class": ["0300", "0300", "0200"]})
    >>> with dask.config.set(scheduler="synchronous"):
    ...     gather(audit(dd.from_pandas(df, npartitions=2)))[["server", "slices"]].values.tolist()
    [['a', 8], ['b', 0]]
    """
    import dask
    import dask.dataframe as dd

    if not isinstance(servers, dd.DataFrame):
        raise InputError(f"gather: expected a dask DataFrame, got {type(servers).__name__}")
    # what compute() does with the partitions once it has them (dask's concatenation,
    # which leaves out empty partitions), done here instead of in a task on a worker
    finalize, extra = servers.__dask_postcompute__()
    parts = dask.compute(*servers.to_delayed(), **({} if client is None else {"scheduler": client}))
    return finalize(list(parts), *extra)

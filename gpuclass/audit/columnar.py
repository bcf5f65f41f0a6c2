"""Device tables audited a column at a time: Arrow (or pandas) in, one Arrow row per server out.

:func:`audit_table` hands each record batch's columns to the native core, which parses
the hex IDs straight from the Arrow string buffers (integer columns are taken as they
are), classifies the rows and rolls them up per run of equal server keys without the
GIL.  Runs of one server anywhere in the table (split across batches, or unsorted
input) are merged by a hash grouping of the run keys.  Names and per-server Python
objects are made only when asked for: iterating an :class:`AuditTable` gives
:class:`~gpuclass.audit.report.ServerReport` objects, whose unsupported GPUs are named
from pci.ids once per distinct ID.

>>> import pyarrow as pa
>>> t = pa.table({"server": ["a", "a", "b", "b"], "vendor": ["10de", "10de", "10de", "zz"],
...               "device": ["27b0", "22bc", "1e30", "1"], "class": ["0300", "0403", "030000", "0300"]})
>>> result = audit_table(t)
>>> result.table.select(["server", "gpu_capable", "slices", "rtx-4000-sff-ada", "invalid_rows"]).to_pylist()[0]
{'server': 'a', 'gpu_capable': True, 'slices': 4, 'rtx-4000-sff-ada': 1, 'invalid_rows': 0}
>>> [(r.server, r.slices, r.problems) for r in result]
[('a', 4, []), ('b', 0, ["row 4: vendor 'zz' is not a hex ID"])]
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from .. import constants as C
from .._native import audit_columns, cell_text, core, problem_text
from ..errors import InputError
from ..pcinames import unsupported_label
from ..policy import compile_policy
from .readers import DEVICE_FIELDS
from .report import ServerReport, card_entries, finish, unsupported_entries
from .tables import device_columns

__all__ = ["AuditTable", "audit_table", "result_columns", "int32_columns", "Runs", "audit_batches",
           "group_runs", "build_result", "field_columns", "unsupported_text"]

# the ID columns in the order the core takes them
_ID_FIELDS = ("vendor", "device", "class", "subvendor", "subdevice")


def result_columns(compiled: Any) -> list[str]:
    """The columns of an audit's per-server table, in order."""
    return ["server", "gpu_capable", *int32_columns(compiled), "rows", "first_row", "problems"]


def int32_columns(compiled: Any) -> list[str]:
    """The int32 columns of an audit's per-server table (adjacent, in this order): the
    counts a merge of two audits adds up, with ``rows``."""
    return ["supported_cards", "slices", "unsupported_gpus", *compiled.card_ids, "invalid_rows"]


class Runs(NamedTuple):
    """A table's rows rolled up per run (see :func:`audit_batches`), with the facts the
    reports need later: problems and unsupported GPUs by run, and the server keys."""

    keys: Any                # pyarrow array: the server of each run
    first: np.ndarray        # int64: the first row of each run (0-based, whole table)
    rows: np.ndarray         # int64: rows in each run
    totals: np.ndarray       # int32 (runs, 8)
    counts: np.ndarray       # int32 (runs, cards)
    problems: list[tuple[int, int, str]]   # (run, row, text): rows with a problem (rare)
    unsupported_run: np.ndarray            # int64: the run of each unsupported GPU
    unsupported_ids: np.ndarray            # int64: its vendor << 16 | device


# Below this size an array is numpy's as usual; from it on, an audit's arrays come from
# Arrow's memory pool, which keeps freed memory for the next call.  glibc maps such blocks
# afresh each time in a process that returns memory to the system at once (Dask's nanny
# sets MALLOC_TRIM_THRESHOLD_ for its workers): a 1M-row audit paid a page fault per 4 KiB
# of its outputs there, every call.
_POOLED_FROM = 1 << 16


def pooled_empty(shape: int | tuple[int, ...], dtype: Any) -> np.ndarray:
    """An uninitialised, writeable array (C order) whose memory comes from Arrow's pool
    when it is large; the memory goes back to the pool with the last array or Arrow
    column that uses it.

    >>> a = pooled_empty((2, 100_000), np.int32)
    >>> a.shape, a.dtype.name, a.flags.writeable, a.flags.c_contiguous
    ((2, 100000), 'int32', True, True)
    """
    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if size < _POOLED_FROM:
        return np.empty(shape, dtype)
    import pyarrow as pa

    return np.frombuffer(pa.allocate_buffer(size), dtype).reshape(shape)


def _iota(n: int) -> np.ndarray:
    """``np.arange(n)`` (int64) in a :func:`pooled_empty` array."""
    out = pooled_empty(n, np.int64)
    if n:
        out[0] = 0
        out[1:] = 1
        np.cumsum(out, out=out)
    return out


def _as_arrow(data: Any):
    import pyarrow as pa

    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.Table):
        return data
    mod = type(data).__module__
    if mod.startswith("pandas") and hasattr(data, "columns"):
        return pa.Table.from_pandas(data, preserve_index=False)
    if isinstance(data, dict):
        return pa.table({str(k): (v if isinstance(v, (pa.Array, pa.ChunkedArray)) else
                                  pa.array(v, from_pandas=True)) for k, v in data.items()})
    raise InputError(f"audit_table: expected a pyarrow Table or RecordBatch, a pandas DataFrame or a "
                     f"dict of columns, got {type(data).__name__}")


def field_columns(table: Any, server_column: str | None) -> dict[str, str | None]:
    """The column of each device field (``None``: absent) among ``table``'s columns."""
    names = table.column_names if hasattr(table, "column_names") else table.names
    idx = device_columns(names, server_column)
    return {f: (None if idx[f] is None else names[idx[f]]) for f in DEVICE_FIELDS}


def audit_batches(batches: Any, fields: dict[str, str | None], compiled: Any, first_row: int = 0,
                  kernel: Any = None) -> Runs:
    """Roll the rows of record ``batches`` up per run of equal server keys (runs do not
    cross batches; :func:`group_runs` joins them).  ``first_row``: the row number of the
    first batch's first row in the whole input."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kernel = core if kernel is None else kernel
    keys, first, rows, totals, counts, problems, uns_run, uns_ids = [], [], [], [], [], [], [], []
    base, run_base = first_row, 0
    n_cards = len(compiled.cards)
    for batch in batches:
        n = batch.num_rows
        if n == 0:
            continue
        server = batch.column(fields["server"])
        cols = audit_columns(server, [None if fields[f] is None else batch.column(fields[f])
                                      for f in _ID_FIELDS], n)
        runs = kernel.audit_rows(compiled.tables, cols, n_cards)
        starts = runs.starts
        heads = server.take(pa.array(starts[:-1]))
        if pa.types.is_dictionary(heads.type):  # a run's server as its value
            heads = heads.cast(heads.type.value_type)
        if runs.nameless.any():  # blank names are no names
            heads = pc.if_else(pa.array(runs.nameless), pa.scalar(None, heads.type), heads)
        keys.append(heads)
        first.append(starts[:-1] + base if base else starts[:-1])
        rows.append(np.subtract(starts[1:], starts[:-1], out=pooled_empty(len(starts) - 1, np.int64)))
        totals.append(runs.totals)
        counts.append(runs.counts)
        if len(runs.problem_rows):
            run_of = np.searchsorted(starts, runs.problem_rows, side="right") - 1 + run_base
            for run, r, code in zip(run_of.tolist(), runs.problem_rows.tolist(),
                                    runs.problem_codes.tolist()):
                problems.append((run, base + r, problem_text(code, cell_text(cols[1 + code // 4], r))))
        uns_run.append(np.searchsorted(starts, runs.unsupported_rows, side="right") - 1 + run_base)
        uns_ids.append(runs.unsupported_ids)
        base += n
        run_base += len(starts) - 1
    if not keys:
        empty = np.empty(0, np.int64)
        return Runs(pa.array([], pa.string()), empty, empty, np.empty((0, C.ROLLUP_COLUMNS), np.int32),
                    np.empty((0, n_cards), np.int32), [], empty, empty)
    def joined(parts: list[np.ndarray]) -> np.ndarray:  # one batch's arrays as they are
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    return Runs(pa.concat_arrays(keys) if len(keys) > 1 else keys[0], joined(first), joined(rows),
                joined(totals), joined(counts), problems,
                joined(uns_run).astype(np.int64, copy=False), joined(uns_ids))


def group_runs(runs: Runs) -> tuple[np.ndarray, np.ndarray]:
    """The server group of each run and the first run of each group, groups in order of
    first appearance (runs of one server key share a group; a run without a server is a
    group of its own)."""
    import pyarrow.compute as pc

    n = len(runs.first)
    keys = runs.keys
    if n < 2 or (keys.null_count == 0
                 and pc.all(pc.greater(keys.slice(1), keys.slice(0, n - 1))).as_py()):
        ident = _iota(n)  # sorted by server: each run is its group
        return ident, ident
    # dictionary indices count the distinct keys in order of first appearance
    idx = pc.dictionary_encode(keys).indices.to_numpy(zero_copy_only=False)
    null = np.asarray(keys.is_null(), dtype=bool) if keys.null_count else np.zeros(n, dtype=bool)
    idx = np.where(null, -1, idx).astype(np.int64)
    seen = np.maximum.accumulate(np.concatenate(([-1], idx)))[:-1]
    new = null | (idx > seen)          # a key never seen before, or no key at all
    order = np.cumsum(new) - 1
    key_group = np.zeros(int(idx.max(initial=-1)) + 1, dtype=np.int64)
    key_group[idx[new & ~null]] = order[new & ~null]
    group = order.copy()
    group[~null] = key_group[idx[~null]]
    return group, np.flatnonzero(new)


def _merged(runs: Runs, group: np.ndarray, first_run: np.ndarray, kernel: Any):
    """Totals, counts, rows and first row per group (the rollup's rules)."""
    n_groups = len(first_run)
    if n_groups == len(group):
        return runs.totals, runs.counts, runs.rows, runs.first
    totals, counts = kernel.merge_runs(group, runs.totals, runs.counts, n_groups)
    rows = np.bincount(group, weights=runs.rows, minlength=n_groups).astype(np.int64)
    return totals, counts, rows, runs.first[first_run]


class AuditTable:
    """An audit of a device table: :attr:`table` (pyarrow) has one row per server; iterate
    for :class:`ServerReport` objects (names made on demand)."""

    def __init__(self, table: Any, compiled: Any, problems: dict[int, list[str]],
                 unsupported_group: np.ndarray, unsupported_ids: np.ndarray, source: str,
                 db: Any = None, block: np.ndarray | None = None) -> None:
        self.table = table
        self._block = block
        self.compiled = compiled
        self._problems = problems
        if len(unsupported_group) > 1 and (unsupported_group[1:] < unsupported_group[:-1]).any():
            order = np.argsort(unsupported_group, kind="stable")
            unsupported_group, unsupported_ids = unsupported_group[order], unsupported_ids[order]
        self._uns_group = unsupported_group  # sorted by group (row order within one)
        self._uns_ids = unsupported_ids
        self.source = source
        self._db = db
        self._labels: dict[int, str] = {}

    def __len__(self) -> int:
        return self.table.num_rows

    def to_arrow(self):
        return self.table

    def to_pandas(self):
        return self.table.to_pandas()

    def int32_block(self, writeable: bool = False) -> np.ndarray:
        """The columns of :func:`int32_columns` as one ``(columns, servers)`` int32 array: the
        memory :attr:`table`'s columns use (no copy), for a pandas frame's block.  Read-only,
        unless ``writeable``: a caller done with :attr:`table` takes the memory over (a write
        would show through the table's columns).

        >>> import pyarrow as pa
        >>> r = audit_table(pa.table({"server": ["a"], "vendor": ["10de"], "device": ["27b0"],
        ...                           "class": ["0300"]}))
        >>> dict(zip(int32_columns(r.compiled), r.int32_block()[:, 0].tolist()))["slices"]
        4
        """
        if self._block is None:  # a table made elsewhere: its columns stacked
            self._block = np.stack([self.table[c].to_numpy() for c in int32_columns(self.compiled)])
        if writeable:
            return self._block
        view = self._block.view()
        view.flags.writeable = False
        return view

    def problems_by_server(self) -> dict[int, list[str]]:
        """The problems of each server that has any, by its row in :attr:`table`."""
        return {g: list(p) for g, p in self._problems.items()}

    def flat(self):
        """The reports' flat rows (``CSV_COLUMNS``: the columns of ``ServerReport.to_flat``) as a
        pyarrow Table, made a column at a time; only servers with unsupported GPUs or problems
        are visited one by one."""
        return flat_table(self)

    def _label(self, key: int) -> str:
        label = self._labels.get(key)
        if label is None:  # named once per distinct ID
            if self._db is None:
                from ..db import default_database
                self._db = default_database()
            label = self._labels[key] = unsupported_label(self._db, key >> 16, key & 0xFFFF)
        return label

    def unsupported(self, g: int) -> dict[str, int]:
        """The unsupported GPUs of server ``g``, by their pci.ids label."""
        lo, hi = np.searchsorted(self._uns_group, [g, g + 1])
        labels: dict[str, int] = {}
        for key in self._uns_ids[lo:hi].tolist():
            label = self._label(key)
            labels[label] = labels.get(label, 0) + 1
        return labels

    def __iter__(self) -> Iterator[ServerReport]:
        cols = self.table.to_pydict()
        ids = self.compiled.card_ids
        for g in range(len(self)):
            r = ServerReport(int(cols["first_row"][g]) + 1, self.source,
                             None if cols["server"][g] is None else str(cols["server"][g]),
                             rows=int(cols["rows"][g]))
            counts = {ci: cols[cid][g] for ci, cid in enumerate(ids) if cols[cid][g]}
            r.cards = card_entries(self.compiled, counts, "id", _evidence(self.compiled))
            unsupported_entries(r, self.unsupported(g))
            r.problems = list(self._problems.get(g, ()))
            yield finish(r)


def _evidence(compiled: Any) -> dict[int, str]:
    return {i: ", ".join(f"{m[0]:04x}:{m[1]:04x}" for m in c["match"]) for i, c in enumerate(compiled.cards)}


def audit_table(data: Any, *, policy: Any = None, server_column: str | None = None,
                source: str = "table", db: Any = None, kernel: Any = None) -> AuditTable:
    """Audit a device table (one PCI function per row) given as columns: a pyarrow Table or
    RecordBatch, a pandas DataFrame or a dict of columns.

    Columns are found as in every device table (``server``/``id``/``host``..., ``vendor``,
    ``device``, ``class``, optional ``subvendor``/``subdevice``); IDs are hex strings or
    integers.  Returns an :class:`AuditTable`: ``.table`` has the columns of
    :func:`result_columns`, one row per server in order of first appearance.
    """
    compiled = compile_policy(policy)
    table = _as_arrow(data)
    fields = field_columns(table, server_column)
    kernel = core if kernel is None else kernel
    runs = audit_batches(table.to_batches(), fields, compiled, kernel=kernel)
    return build_result(runs, compiled, source, db, kernel)


def build_result(runs: Runs, compiled: Any, source: str, db: Any = None, kernel: Any = None,
                 grouping: tuple[np.ndarray, np.ndarray] | None = None,
                 notes: dict[int, str] | None = None) -> AuditTable:
    """The :class:`AuditTable` of ``runs``: runs grouped by ``grouping`` (the group of each run
    and the first run of each group; default :func:`group_runs`), ``notes`` a problem put
    first for some groups."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kernel = core if kernel is None else kernel
    group, first_run = group_runs(runs) if grouping is None else grouping
    n_groups = len(first_run)
    totals, counts, rows, first = _merged(runs, group, first_run, kernel)
    problems: dict[int, list[str]] = {}
    nameless = np.flatnonzero(np.asarray(runs.keys.is_null(), dtype=bool)) if runs.keys.null_count else []
    for run in nameless:
        problems.setdefault(int(group[run]), []).append("row has no server name")
    for g, note in (notes or {}).items():
        problems.setdefault(g, []).append(note)
    for run, row, text in runs.problems:
        problems.setdefault(int(group[run]), []).append(f"row {row + 1}: {text}")
    # the int32 columns written once, into one block that the Arrow columns share (and
    # a pandas frame may take as its block: gpuclass.dask)
    names = int32_columns(compiled)
    block = pooled_empty((len(names), n_groups), np.int32)
    block[0] = totals[:, C.R_CARDS]
    block[1] = totals[:, C.R_SLICES]
    block[2] = totals[:, C.R_UNSUPPORTED]
    block[3:-1] = counts.T
    block[-1] = totals[:, C.R_INVALID]
    # every run its own group (groups come in order of first appearance): nothing moves
    identity = n_groups == len(runs.first)
    columns = {"server": runs.keys if identity else runs.keys.take(pa.array(first_run)),
               "gpu_capable": pc.greater(pa.array(block[0]), 0)}
    for name, values in zip(names, block):
        columns[name] = pa.array(values)
    columns["rows"] = pa.array(rows.astype(np.int64, copy=False))
    columns["first_row"] = pa.array(first.astype(np.int64, copy=False))
    columns["problems"] = _problem_column(problems, n_groups)
    return AuditTable(pa.table(columns), compiled, problems,
                      runs.unsupported_run if identity else group[runs.unsupported_run],
                      runs.unsupported_ids, source, db, block)


def _problem_column(problems: dict[int, list[str]], n: int):
    """Each group's problems as one string (null where it has none), without a Python
    list of all the groups."""
    import pyarrow as pa

    if not problems:
        return pa.nulls(n, pa.string())
    where = np.full(n, -1, np.int64)
    where[np.fromiter(problems.keys(), np.int64, len(problems))] = np.arange(len(problems))
    texts = pa.array(["; ".join(p) for p in problems.values()], pa.string())
    return texts.take(pa.array(where, mask=where < 0))


def _unsupported_lists(result: AuditTable):
    """Each server's unsupported GPUs as ``Nx label`` entries (labels in order of first
    appearance, as :meth:`AuditTable.unsupported` gives them): a pyarrow list array."""
    import pyarrow as pa

    n = len(result)
    groups, ids = result._uns_group, result._uns_ids
    if not len(ids):
        return pa.ListArray.from_arrays(pa.array(np.zeros(n + 1, np.int32)), pa.array([], pa.string()))
    distinct, which = np.unique(ids, return_inverse=True)
    names = [result._label(int(k)) for k in distinct.tolist()]     # one name per distinct ID
    label_names = sorted(set(names))                                # IDs of one label count together
    place = {name: j for j, name in enumerate(label_names)}
    lab = np.array([place[name] for name in names], np.int64)[which]
    key = groups.astype(np.int64) * len(label_names) + lab
    # (server, label) pairs in row order of their first GPU: rows are sorted by server already
    uniq, first, counts = np.unique(key, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    uniq, counts = uniq[order], counts[order]
    pair_group = uniq // len(label_names)
    entries = [f"{k}x {label_names[j]}" for k, j in zip(counts.tolist(), (uniq % len(label_names)).tolist())]
    offsets = np.zeros(n + 1, np.int32)
    np.add.at(offsets, pair_group + 1, 1)
    return pa.ListArray.from_arrays(pa.array(np.cumsum(offsets, dtype=np.int32)), pa.array(entries, pa.string()))


def _array(values: Any):
    """A string Array of ``values`` (an Array or ChunkedArray)."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], values.type)
    return values.cast(pa.string())


def _scatter(n: int, default: str, rows: np.ndarray, values: Any):
    """A string column of ``n`` rows: ``values`` at ``rows``, ``default`` elsewhere."""
    import pyarrow as pa

    index = np.zeros(n, np.int64)
    index[rows] = np.arange(1, len(rows) + 1)
    pool = pa.concat_arrays([pa.array([default], pa.string()), _array(values)])
    return pool.take(pa.array(index))


def unsupported_text(result: AuditTable, lists: Any = None):
    """Each server's unsupported GPUs as the reports write them (``"1x label; 2x label"``,
    ``""`` for none), made only for the servers that have some."""
    import pyarrow as pa
    import pyarrow.compute as pc

    lists = _unsupported_lists(result) if lists is None else lists
    rows = np.flatnonzero(result.table["unsupported_gpus"].to_numpy() > 0)
    return _scatter(len(result), "", rows, pc.binary_join(lists.take(pa.array(rows)), "; "))


def flat_table(result: AuditTable):
    """See :meth:`AuditTable.flat`: the card texts are made for the capable servers only,
    the unsupported GPUs' for servers that have them, and scattered into place."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = result.table
    n = t.num_rows
    cards = result.compiled.cards
    cap = t["gpu_capable"]
    cap_rows = np.flatnonzero(t["supported_cards"].to_numpy() > 0)
    sub = t.take(pa.array(cap_rows))
    count_text, name_text = [], []
    for c in cards:
        k = sub[c["id"]]
        has = pc.greater(k, 0)
        k_text = pc.cast(k, pa.string())
        count_text.append(pc.if_else(has, pc.binary_join_element_wise(c["id"] + " x", k_text, "; ", ""), ""))
        name_text.append(pc.if_else(has, pc.binary_join_element_wise(k_text, "x " + c["name"], ", ", ""), ""))
    m = len(cap_rows)
    card_col = pc.utf8_rtrim(pc.binary_join_element_wise(*count_text, ""), characters="; ") \
        if cards else pa.array([""] * m, pa.string())
    names = pc.utf8_rtrim(pc.binary_join_element_wise(*name_text, ""), characters=", ") \
        if cards else pa.array([""] * m, pa.string())
    capable = pc.binary_join_element_wise(names, ": ", pc.cast(sub["slices"], pa.string()), " slices", "")
    mixed = pc.greater(sub["unsupported_gpus"], 0)
    capable = pc.if_else(mixed, pc.binary_join_element_wise(
        capable, "; mixed with ", pc.cast(sub["unsupported_gpus"], pa.string()), " unsupported GPU(s)", ""),
        capable)
    uns = t["unsupported_gpus"].to_numpy()
    sup = t["supported_cards"].to_numpy()
    lists = _unsupported_lists(result)
    unsupported = unsupported_text(result, lists)
    # why a server is not capable: its unsupported GPUs, else its first problem, else no GPU
    only = np.flatnonzero((sup == 0) & (uns > 0))
    only_text = pc.binary_join_element_wise(
        "unsupported GPU only: ", pc.binary_join(lists.take(pa.array(only)), ", "), "")
    flagged = [g for g in sorted(result._problems) if not uns[g] and not sup[g]]
    reason_rows = np.concatenate([cap_rows, only, np.array(flagged, np.int64)])
    reason_values = pa.concat_arrays([_array(capable), _array(only_text),
                                      pa.array(["flagged: " + result._problems[g][0] for g in flagged],
                                               pa.string())])
    reason = _scatter(n, "no GPU", reason_rows, reason_values)
    server = t["server"]
    if not pa.types.is_string(server.type):
        server = pc.cast(server, pa.string())
    return pa.table({
        "row": pc.add(t["first_row"], 1), "source": pa.repeat(pa.scalar(result.source, pa.string()), n),
        "server": server, "gpu_capable": cap, "cards": _scatter(n, "", cap_rows, card_col),
        "supported_cards": t["supported_cards"], "slices": t["slices"],
        "unsupported": unsupported, "unsupported_gpus": t["unsupported_gpus"],
        "reason": reason, "problems": pc.fill_null(t["problems"], ""), "rows": t["rows"],
        "cpu": pa.nulls(n, pa.string()), "price": pa.nulls(n, pa.float64()),
        "datacenter": pa.nulls(n, pa.string()), "hourly_price": pa.nulls(n, pa.float64()),
    })

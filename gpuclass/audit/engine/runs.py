"""Runs: a device table's rows rolled up per run of one server key, and how runs are
joined (the parts of several batches), split (the runs given out and the one held) and
merged into one per server (by the rollup's rules: ``core.merge_runs``).  The device
engine (:mod:`.devices`) holds them between batches.

>>> import numpy as np, pyarrow as pa
>>> from gpuclass.policy import compile_policy
>>> r = Runs(pa.array(["a", "b", "a"]), np.array([0, 1, 2]), np.array([1, 1, 1]),
...          np.zeros((3, 8), np.int32), np.zeros((3, 7), np.int32), [], np.empty(0, np.int64),
...          np.empty(0, np.int64))
>>> [g.tolist() for g in group_runs(r)]
[[0, 1, 0], [0, 1]]
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ... import constants as C
from ..._native import core
from ..pool import iota

__all__ = ["Runs", "empty_runs", "joined", "run_keys", "group_runs", "merge_runs", "split_runs"]


class Runs(NamedTuple):
    """Rows rolled up per run of one server key, with what the reports need later."""

    keys: Any                # pyarrow array: the server of each run (null: no server)
    first: np.ndarray        # int64: the first row of each run (0-based, whole input)
    rows: np.ndarray         # int64: rows in each run
    totals: np.ndarray       # int32 (runs, ROLLUP_COLUMNS)
    counts: np.ndarray       # int32 (runs, cards)
    problems: list[tuple[int, int, str]]   # (run, row, text): rows with a problem, in row order
    unsupported_run: np.ndarray            # int64: the run of each unsupported GPU
    unsupported_ids: np.ndarray            # int64: its vendor << 16 | device


def empty_runs(n_cards: int) -> Runs:
    import pyarrow as pa

    empty = np.empty(0, np.int64)
    return Runs(pa.array([], pa.string()), empty, empty, np.empty((0, C.ROLLUP_COLUMNS), np.int32),
                np.empty((0, n_cards), np.int32), [], empty, empty)


def joined(parts: list[np.ndarray]) -> np.ndarray:
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def run_keys(parts: list[Any]) -> Any:
    """Server keys of several batches as one array (a batch of only missing names is of
    the null type; integers of two widths become int64, anything else mixed text)."""
    import pyarrow as pa

    if len(parts) == 1:
        return parts[0]
    types = {p.type for p in parts} - {pa.null()}
    if len(types) > 1:
        target = pa.int64() if all(pa.types.is_integer(t) for t in types) else pa.large_string()
    else:
        target = types.pop() if types else pa.null()
    return pa.concat_arrays([p if p.type == target else p.cast(target) for p in parts])


def group_runs(runs: Runs) -> tuple[np.ndarray, np.ndarray]:
    """The server group of each run and the first run of each group, groups in order of
    first appearance (runs of one server key share a group; a run without a server is a
    group of its own)."""
    import pyarrow.compute as pc

    from ..arrowfn import rising, to_numpy

    n = len(runs.first)
    keys = runs.keys
    if n < 2 or (keys.null_count == 0 and rising(keys)):
        ident = iota(n)  # sorted by server: each run is its group
        return ident, ident
    # dictionary indices count the distinct keys in order of first appearance
    idx = pc.dictionary_encode(keys).indices
    idx = to_numpy(idx.fill_null(0) if idx.null_count else idx)
    null = to_numpy(keys.is_null()) if keys.null_count else np.zeros(n, dtype=bool)
    idx = np.where(null, -1, idx).astype(np.int64)
    seen = np.maximum.accumulate(np.concatenate(([-1], idx)))[:-1]
    new = null | (idx > seen)          # a key never seen before, or no key at all
    order = np.cumsum(new) - 1
    key_group = np.zeros(int(idx.max(initial=-1)) + 1, dtype=np.int64)
    key_group[idx[new & ~null]] = order[new & ~null]
    group = order.copy()
    group[~null] = key_group[idx[~null]]
    return group, np.flatnonzero(new)


def merge_runs(runs: Runs, group: np.ndarray | None = None, first_run: np.ndarray | None = None,
               kernel: Any = None) -> Runs:
    """``runs`` with the runs of each group (default: :func:`group_runs`) made one, by the
    rollup's rules (sums, the first supported model, the mixed bits: ``core.merge_runs``)."""
    from ..arrowfn import from_numpy

    if group is None or first_run is None:
        group, first_run = group_runs(runs)
    n_groups = len(first_run)
    if n_groups == len(runs.first):  # every run its own group, in order: nothing moves
        return runs
    kernel = core if kernel is None else kernel
    sizes = np.bincount(group, minlength=n_groups)
    several = np.flatnonzero(sizes > 1)  # the groups of more than one run
    if len(several) * 4 < n_groups:
        # few servers come back (a server split by a batch's end): merge only their runs;
        # every other group is its one run, as it is
        at = np.full(n_groups, -1, dtype=np.int64)
        at[several] = np.arange(len(several), dtype=np.int64)
        mine = np.flatnonzero(at[group] >= 0)
        sub = at[group[mine]]
        t, c = kernel.merge_runs(sub, runs.totals[mine], runs.counts[mine], len(several))
        totals, counts, rows = runs.totals[first_run], runs.counts[first_run], runs.rows[first_run]
        totals[several], counts[several] = t, c
        rows[several] = np.bincount(sub, weights=runs.rows[mine], minlength=len(several)).astype(np.int64)
    else:
        totals, counts = kernel.merge_runs(group, runs.totals, runs.counts, n_groups)
        rows = np.bincount(group, weights=runs.rows, minlength=n_groups).astype(np.int64)
    return Runs(runs.keys.take(from_numpy(first_run)), runs.first[first_run], rows, totals, counts,
                [(int(group[run]), row, text) for run, row, text in runs.problems],
                group[runs.unsupported_run], runs.unsupported_ids)


def split_runs(runs: Runs, k: int) -> tuple[Runs, Runs]:
    """``runs``' first ``k`` runs and the rest (each counting its runs from its own first;
    problems and unsupported GPUs go with their run)."""
    uns = runs.unsupported_run
    if (uns[1:] < uns[:-1]).any():  # not in run order (the kernel gives them in row order)
        mine = uns < k
        head_uns = (runs.unsupported_run[mine], runs.unsupported_ids[mine])
        tail_uns = (runs.unsupported_run[~mine] - k, runs.unsupported_ids[~mine])
    else:
        cut = int(np.searchsorted(uns, k))
        head_uns = (runs.unsupported_run[:cut], runs.unsupported_ids[:cut])
        tail_uns = (runs.unsupported_run[cut:] - k, runs.unsupported_ids[cut:])
    head = Runs(runs.keys.slice(0, k), runs.first[:k], runs.rows[:k], runs.totals[:k], runs.counts[:k],
                [p for p in runs.problems if p[0] < k], *head_uns)
    tail = Runs(runs.keys.slice(k), runs.first[k:], runs.rows[k:], runs.totals[k:], runs.counts[k:],
                [(run - k, row, text) for run, row, text in runs.problems if run >= k], *tail_uns)
    return head, tail

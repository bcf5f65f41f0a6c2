"""The device-table engine: Arrow record batches in, one row per server out.

Every device table reaches this one engine, whatever its door: a Parquet or CSV file (the
CSV reader makes Arrow batches), a pyarrow Table, a pandas DataFrame, a Dask partition.
Each batch's columns go to the native core (``core.audit_rows``), which parses the hex
cells straight from the Arrow buffers, classifies the rows and rolls them up per run of
equal server keys without the GIL.  Runs of one server are then merged by the rollup's
rules (``core.merge_runs``), wherever they lie: a server split across batches, or whose
rows are not next to each other, is one row, and ``rows`` counts all of its rows.  A row
that names no server (a missing cell, or only whitespace) is a server of its own.

What is kept between batches is the runs (a key and a few counts each).  A run's server
is found among those seen before by a 64-bit hash of its key (``core.key_hashes``, in the
core's ``KeySet``, as each batch comes), and a hash seen before is confirmed by comparing
the keys themselves (a collision makes the engine group by the keys instead, the same
answer); the runs are merged into one per server whenever the repeated ones pile up, so
the memory an audit holds grows with its servers, not its rows, and a table ten times the
size costs ten times as much.  Keys that rise strictly are not hashed at all, nor is a
batch whose first key is the last one held (a server split by a batch's end, as by a
Parquet row group's): that run goes on with the last run held.  Sorted runs are never
joined: their counts go straight into the output's columns.  :meth:`DeviceEngine.add_all`
audits every other batch on a worker thread where a second core is there.

>>> import pyarrow as pa
>>> from gpuclass.policy import compile_policy
>>> engine = DeviceEngine(compile_policy())
>>> fields = {"server": "server", "vendor": "vendor", "device": "device", "subvendor": None,
...           "subdevice": None, "class": "class"}
>>> engine.add(pa.record_batch({"server": ["a", "b"], "vendor": ["10de", "8086"],
...                             "device": ["27b0", "1533"], "class": ["0300", "0200"]}), fields)
>>> engine.add(pa.record_batch({"server": ["a"], "vendor": ["10de"], "device": ["27b0"],
...                             "class": ["0300"]}), fields)
>>> [(r.server, r.slices, r.rows, r.row) for r in engine.result("t")]
[('a', 8, 2, 1), ('b', 0, 1, 2)]
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..._native import audit_columns, cell_text, core, key_column, problem_text
from ...errors import InputError
from ...ids import CELL_OK
from ..ingest.arrow import device_arrays
from ..pool import iota, pooled_empty
from . import Unsettled
from .runs import Runs, empty_runs, group_runs, joined, merge_runs, run_keys, split_runs

if TYPE_CHECKING:
    from ...records import DeviceNames

__all__ = ["Runs", "DeviceEngine", "Unsettled", "audit_batches", "group_runs", "merge_runs"]


# Repeated runs (a server seen before) held before the runs are merged into one per server
# (or as many as the distinct ones held, whichever is more).
_COMPACT_AT = 1 << 20
_SEED = 0x6465_7669_6365_7321  # the key hashes' seed (any fixed value)


# Whether DeviceEngine.add_all audits every other batch on a worker thread (where the
# process may run on two cores or more, with the compiled core, whose pass releases the GIL).
_THREADS = True


def _second_core(kernel: Any) -> bool:
    if not _THREADS or not getattr(kernel, "IS_COMPILED", False):
        return False  # the pure-Python twin holds the GIL: threads would only take turns
    try:
        return len(os.sched_getaffinity(0)) > 1
    except (AttributeError, OSError):
        return (os.cpu_count() or 1) > 1


# DeviceEngine._in_order's answers
_NOT_IN_ORDER, _RISING, _GOES_ON = 0, 1, 2

# Private: True feeds every batch's subsystem columns to the kernel as they are (tests hold
# the answers of _subsystem_feed's "no subsystem" equal to those of this full parse).
_FULL_PARSE = False


def _missing_everywhere(col: Any) -> bool:
    return col is None or col.null_count == len(col)


def _good_everywhere(col: Any, field: str, kernel: Any) -> bool:
    """Whether every cell of ``col`` is a good ID, shown without parsing it row by row: a
    dictionary column without a missing index whose entries all parse (the kernel's own
    parser, once per entry) and whose indices all name one.  Text or integer cells are not
    looked at: parsing them is what checking them costs."""
    import pyarrow as pa

    from ..arrowfn import indices_within

    if col is None or col.null_count or not isinstance(col, pa.DictionaryArray):
        return False
    if not indices_within(col):  # lying buffers: the kernel, which refuses them
        return False
    state, _ = kernel.parse_id_cells(key_column(col.dictionary, field), field)
    return bool((state == CELL_OK).all())


def _subsystem_feed(ids: list[Any], compiled: Any, kernel: Any) -> list[Any]:
    """``ids`` as the kernel gets them: the subsystem columns dropped ("no subsystem", as
    for a table without them) where the answers provably cannot depend on them: no rule
    of the policy names a subsystem (:attr:`CompiledPolicy.needs_subsystem`), and no row
    would be flagged for them, because every row's subsystem is wholly missing or every
    row's is a good pair (:func:`_good_everywhere`).  Otherwise the kernel parses them
    (a malformed cell or a lone half flags its row under every policy: RELIABILITY.md)."""
    sv, sd = ids[3], ids[4]
    if _FULL_PARSE or (sv is None and sd is None) or compiled.needs_subsystem:
        return ids
    if not (_missing_everywhere(sv) and _missing_everywhere(sd)) and not (
            _good_everywhere(sv, "subvendor", kernel) and _good_everywhere(sd, "subdevice", kernel)):
        return ids
    return [*ids[:3], None, None]


def audit_batches(items: Any, fields: dict[str, str | None], compiled: Any, first_row: int = 0,
                  kernel: Any = None) -> Runs:
    """Roll up the rows of ``items`` per run of equal server keys (runs do not cross
    batches; :func:`group_runs` joins them).  An item is a record batch, or ``(batch,
    errors)`` with ``errors`` ``{row in batch: text}``: rows the reader could not read,
    whose ID cells it left missing, flagged with that text instead.  ``first_row``: the
    row number (0-based) of the first batch's first row in the whole input."""
    import pyarrow as pa

    from .. import arrowfn as af

    kernel = core if kernel is None else kernel
    keys, first, rows, totals, counts, problems, uns_run, uns_ids = [], [], [], [], [], [], [], []
    base, run_base = first_row, 0
    n_cards = len(compiled.cards)
    for item in items:
        batch, errors = item if isinstance(item, tuple) else (item, None)
        n = batch.num_rows
        if n == 0:
            continue
        server, ids = device_arrays(batch, fields)
        cols = audit_columns(server, _subsystem_feed(ids, compiled, kernel), n)
        runs = kernel.audit_rows(compiled.tables, cols, n_cards)
        starts = runs.starts
        heads = af.take_text(server, starts[:-1])
        if pa.types.is_dictionary(heads.type):  # a run's server as its value
            heads = af.cast(heads, heads.type.value_type)
        if runs.nameless.any():  # blank names are no names
            heads = af.call("if_else", af.from_numpy(runs.nameless.astype(bool, copy=False)),
                            pa.scalar(None, heads.type), heads)
        keys.append(heads)
        first.append(starts[:-1] + base if base else starts[:-1])
        rows.append(np.subtract(starts[1:], starts[:-1], out=pooled_empty(len(starts) - 1, np.int64)))
        totals.append(runs.totals)
        counts.append(runs.counts)
        if len(runs.problem_rows):
            run_of = np.searchsorted(starts, runs.problem_rows, side="right") - 1 + run_base
            for run, r, code in zip(run_of.tolist(), runs.problem_rows.tolist(), runs.problem_codes.tolist()):
                text = errors.get(r) if errors else None
                if text is None:
                    text = problem_text(code, cell_text(cols[1 + code // 4], r))
                problems.append((run, base + r, text))
        uns_of = np.searchsorted(starts, runs.unsupported_rows, side="right")
        uns_of += run_base - 1  # in place: a Dask worker maps each large temporary afresh
        uns_run.append(uns_of)
        uns_ids.append(runs.unsupported_ids)
        base += n
        run_base += len(starts) - 1
    if not keys:
        return empty_runs(n_cards)
    return Runs(run_keys(keys), joined(first), joined(rows), joined(totals), joined(counts), problems,
                joined(uns_run).astype(np.int64, copy=False), joined(uns_ids))


class DeviceEngine:
    """One device table fed a batch at a time (see the module docstring); :meth:`result`
    gives its servers, in order of first appearance."""

    def __init__(self, compiled: Any, kernel: Any = None) -> None:
        self.compiled = compiled
        self.kernel = core if kernel is None else kernel
        self.rows = 0            # input rows fed so far
        self._names: Any = None  # the unsupported GPUs' labels of every table given out ...
        self._names_db: Any = None  # ... for this database (None: the default)
        self._reset()

    def _reset(self) -> None:
        self._runs: list[Runs] = []
        self._held = 0                       # runs in self._runs
        self._seen = self.kernel.KeySet()    # hashes of the named runs' keys
        self._named: list[np.ndarray] = []   # per part: the run index of each named run
        self._n_named = 0
        self._found: list[np.ndarray] = []   # runs whose key's hash was seen before ...
        self._prior: list[np.ndarray] = []   # ... and the named run that had it first
        self._repeated = 0
        self._types: set[Any] = set()        # the key types of the parts hashed
        self._bases: list[int] = []          # per part: the index of its first run
        self._ordered = True                 # every key so far above the one before ...
        self._last: Any = None               # ... the last of them
        self._hashed = 0                     # parts whose keys were hashed
        self._given = False                  # settled() gave servers out

    def add(self, batch: Any, fields: dict[str, str | None], errors: dict[int, str] | None = None) -> None:
        """Audit one record batch (``errors``: see :func:`audit_batches`)."""
        n = batch.num_rows
        if n == 0:
            return
        runs = audit_batches([(batch, errors)], fields, self.compiled, self.rows, self.kernel)
        self.rows += n
        self._hold(runs)
        if self._repeated > max(_COMPACT_AT, self._held - self._repeated):
            self._compact()

    def add_all(self, items: Iterable[tuple[Any, dict[str, str | None], dict[int, str] | None]],
                done: Callable[[int], None] | None = None) -> None:
        """:meth:`add` each ``(batch, fields, errors)`` of ``items``, in order, and call
        ``done(rows)`` after each.  The compiled core's pass over a batch runs without the
        GIL: where this process may use a second core, every other batch is audited on a
        worker thread while this thread audits the next one and holds the runs that came
        before, in the order of the batches.  The answers are those of :meth:`add` (each
        batch is audited alone; only the holding depends on order)."""
        if not _second_core(self.kernel):
            for batch, fields, errors in items:
                self.add(batch, fields, errors)
                if done is not None:
                    done(batch.num_rows)
            return
        from .pipeline import feed

        base = self.rows

        def audit(batch: Any, fields: dict[str, str | None], errors: dict[int, str] | None, row: int) -> Runs:
            return audit_batches([(batch, errors)], fields, self.compiled, base + row, self.kernel)

        feed(audit, self._take, items, done)

    def _take(self, runs: Runs, n: int) -> None:
        self.rows += n
        self._hold(runs)
        if self._repeated > max(_COMPACT_AT, self._held - self._repeated):
            self._compact()

    @property
    def held(self) -> int:
        """Runs held now (one per server seen once merged)."""
        return self._held

    def _hold(self, runs: Runs) -> None:
        order = self._in_order(runs.keys) if self._ordered else _NOT_IN_ORDER
        if order == _GOES_ON:
            rest = self._go_on(runs)
            if rest is not None and not len(rest.first):
                return  # the whole batch was the last server's
            if rest is None:  # the server's slices would pass int32: merged as any other
                order = _NOT_IN_ORDER
            else:
                runs = rest
        self._bases.append(self._held)
        self._runs.append(runs)
        self._held += len(runs.first)
        if order != _NOT_IN_ORDER:
            return  # keys in strictly rising order so far: no server can have come back
        if self._given:
            raise Unsettled("a server key below one given out by settled()")
        self._ordered = False
        while self._hashed < len(self._runs):  # the parts held in order, then this one
            self._hash(self._runs[self._hashed].keys, self._bases[self._hashed])
            self._hashed += 1

    def _in_order(self, keys: Any) -> int:
        """Whether ``keys`` rise strictly (then they are distinct): from above the last key
        held (``_RISING``: none is a server seen before), or from the last key held itself,
        a text or integer key (``_GOES_ON``: a batch's first run goes on with the server
        the one before ended with, as where a row group's end splits a server); else
        ``_NOT_IN_ORDER``."""
        import pyarrow as pa

        from ..arrowfn import greater_equal, is_text, rising

        n = len(keys)
        if n == 0:
            return _RISING
        if keys.null_count or (self._last is not None and self._last.type != keys.type):
            return _NOT_IN_ORDER
        order = _RISING
        above, same = (True, False) if self._last is None else greater_equal(keys[0], self._last)
        if not above:
            t = keys.type
            if not (is_text(t) or pa.types.is_integer(t)) or not self._runs \
                    or not len(self._runs[-1].first) or not same:
                return _NOT_IN_ORDER
            order = _GOES_ON
        if not rising(keys):  # (no key is missing here)
            return _NOT_IN_ORDER
        self._last = keys[n - 1]
        return order

    def _go_on(self, runs: Runs) -> Runs | None:
        """The last run held and ``runs``' first (one server) made one, by the rollup's rules
        (as merge_runs would make them one later); ``runs`` without its first run, or None
        (nothing changed) where their slices would pass the int32 range."""
        prev = self._runs[-1]
        last = len(prev.first) - 1
        try:
            t, c = self.kernel.merge_runs(np.zeros(2, np.int64), np.concatenate([prev.totals[last:], runs.totals[:1]]),
                                          np.concatenate([prev.counts[last:], runs.counts[:1]]), 1)
        except InputError:
            return None
        totals, counts, rows = (a if a.flags.writeable else a.copy() for a in (prev.totals, prev.counts, prev.rows))
        totals[last], counts[last] = t[0], c[0]
        rows[last] += runs.rows[0]
        first, rest = split_runs(runs, 1)
        uns_run, uns_ids = prev.unsupported_run, prev.unsupported_ids
        if len(first.unsupported_run):
            uns_run = np.concatenate([uns_run, np.full(len(first.unsupported_run), last, np.int64)])
            uns_ids = np.concatenate([uns_ids, first.unsupported_ids])
        problems = prev.problems + [(last, row, text) for _, row, text in first.problems]
        self._runs[-1] = prev._replace(rows=rows, totals=totals, counts=counts, problems=problems,
                                       unsupported_run=uns_run, unsupported_ids=uns_ids)
        return rest

    def _hash(self, keys: Any, base: int) -> None:
        n = len(keys)
        if keys.null_count == n:
            return
        self._types.add(keys.type)
        from ..arrowfn import from_numpy, to_numpy

        named = np.flatnonzero(~to_numpy(keys.is_null())) if keys.null_count else iota(n)
        hashes = self.kernel.key_hashes(key_column(keys.take(from_numpy(named)) if keys.null_count else keys,
                                                   "server"), _SEED)
        found, prior = self._seen.add(hashes, self._n_named)
        self._named.append(named + base)
        self._n_named += len(named)
        if len(found):
            self._found.append(named[found] + base)
            self._prior.append(prior)
            self._repeated += len(found)

    def _grouping(self, runs: Runs) -> tuple[np.ndarray, np.ndarray] | None:
        """Each run's server group and each group's first run (see :func:`group_runs`), from
        the hashes seen; None when every run is a server of its own."""
        if not self._repeated:
            return None
        if len(self._types) > 1:  # keys of several types compare as text: group by the keys
            return group_runs(runs)
        import pyarrow as pa
        import pyarrow.compute as pc

        found = joined(self._found)
        first = joined(self._named)[joined(self._prior)]
        keys = runs.keys
        from ..arrowfn import from_numpy

        if not pc.all(pc.equal(keys.take(from_numpy(found)), keys.take(from_numpy(first)))).as_py():
            return group_runs(runs)  # two keys with one hash: group by the keys themselves
        ident = np.arange(len(runs.first), dtype=np.int64)
        rep = ident.copy()
        rep[found] = first
        new = rep == ident
        order = np.cumsum(new) - 1
        return order[rep], np.flatnonzero(new)

    def _merged(self) -> Runs:
        runs = self.joined()
        grouping = self._grouping(runs)
        return runs if grouping is None else merge_runs(runs, *grouping, kernel=self.kernel)

    def _compact(self) -> None:
        merged = self._merged()
        self._reset()
        self._hold(merged)

    def joined(self) -> Runs:
        parts = self._runs
        if not parts:
            return empty_runs(len(self.compiled.cards))
        if len(parts) == 1:
            return parts[0]
        offsets = np.cumsum([0] + [len(p.first) for p in parts])
        return Runs(run_keys([p.keys for p in parts]), joined([p.first for p in parts]),
                    joined([p.rows for p in parts]), joined([p.totals for p in parts]),
                    joined([p.counts for p in parts]),
                    [(run + int(off), row, text) for p, off in zip(parts, offsets) for run, row, text in p.problems],
                    joined([p.unsupported_run + off for p, off in zip(parts, offsets)]),
                    joined([p.unsupported_ids for p in parts]))

    def settled(self, source: str, db: DeviceNames | None = None):
        """The servers that no batch to come can add to, as an
        :class:`~gpuclass.audit.results.table.AuditTable`, and no longer held (None: none
        such): while every key so far has risen, every server but the last one held (only
        it can go on in the next batch).  Once this gave servers out, a batch whose keys
        do not rise raises :class:`Unsettled` (its servers could be some given out).  The
        tables given out, then :meth:`result`, hold the rows :meth:`result` alone would
        give, in the same order."""
        from ..results.table import AuditTable

        if not self._ordered or not self._runs:
            return None
        parts, last = self._runs[:-1], self._runs[-1]
        k = len(last.first) - 1  # the last part's runs given out: all but its last
        if k:
            head, last = split_runs(last, k)
            parts.append(head)
        if not parts:
            return None
        self._runs, self._bases, self._held = [last], [0], len(last.first)
        self._given = True
        return AuditTable.from_parts(run_keys([p.keys for p in parts]), parts, self.compiled, source, db,
                                     self._labels(db))

    def result(self, source: str, db: DeviceNames | None = None):
        """The per-server :class:`~gpuclass.audit.results.table.AuditTable` of what was fed."""
        from ..results.table import AuditTable

        if len(self._runs) > 1 and not self._repeated:
            # every run a server of its own, in order: the parts go to the table as they are
            # (no joined copy of their counts)
            return AuditTable.from_parts(run_keys([p.keys for p in self._runs]), self._runs, self.compiled,
                                         source, db, self._labels(db))
        return AuditTable.from_runs(self._merged(), self.compiled, source, db, self._labels(db))

    def _labels(self, db: DeviceNames | None) -> Any:
        """The labels shared by the tables given out for ``db`` (each named once a run)."""
        from ...pcinames import UnsupportedLabels

        if self._names is None or self._names_db is not db:
            self._names, self._names_db = UnsupportedLabels(db), db
        return self._names

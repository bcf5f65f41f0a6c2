"""A device audit's servers as columns: :class:`AuditTable`.

:attr:`AuditTable.table` (pyarrow) has one row per server, the columns of
:func:`~gpuclass.audit.results.columns.table_columns`; the texts a report shows (its
unsupported GPUs by pci.ids name, its reason) are made only when asked for, once per
distinct ID or outcome.  Iterating gives :class:`~gpuclass.audit.results.reports.ServerReport`
objects; :meth:`~AuditTable.flat` the flat rows as columns; :meth:`~AuditTable.summary` the
totals.

>>> import pyarrow as pa
>>> from gpuclass.audit import audit_table
>>> r = audit_table(pa.table({"server": ["a", "a", "b"], "vendor": ["10de", "10de", "zz"],
...                           "device": ["27b0", "1e30", "1"], "class": ["0300", "0300", "0300"]}))
>>> r.table.select(["server", "slices", "cards.rtx-4000-sff-ada", "rows", "row"]).to_pylist()[0]
{'server': 'a', 'slices': 4, 'cards.rtx-4000-sff-ada': 1, 'rows': 2, 'row': 1}
>>> [(x.server, x.reason) for x in r]
[('a', '1x RTX 4000 SFF Ada Generation: 4 slices; mixed with 1 unsupported GPU(s)'), ('b', "flagged: row 3: vendor 'zz' is not a hex ID")]
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ... import constants as C
from ...pcinames import UnsupportedLabels
from ...printable import utf8_text
from ..pool import pooled_empty
from ..render import (NO_SERVER, card_entries, device_conflicts, finish, problem, rule_evidence, unsupported_entries,
                      unsupported_entry)
from .columns import PASSTHROUGH, card_column, flat_columns, int32_columns, typed_schema
from .reports import AuditSummary, ServerReport

if TYPE_CHECKING:
    import pandas
    import pyarrow

    from ...records import DeviceNames

__all__ = ["AuditTable"]


class AuditTable:
    """An audit of a device table (see the module docstring)."""

    def __init__(self, table: Any, compiled: Any, problems: dict[int, list[tuple[int | None, str]]],
                 unsupported_group: np.ndarray, unsupported_ids: np.ndarray, source: str,
                 db: DeviceNames | None = None, block: np.ndarray | None = None,
                 conflicts: dict[int, list[str]] | None = None, labels: UnsupportedLabels | None = None) -> None:
        self.table = table
        self.compiled = compiled
        self.source = source
        self._block = block
        self._problems = problems   # server: [(row (0-based) or None, text)], in row order
        self._conflicts = {} if conflicts is None else conflicts  # server: its cards' conflicts
        if len(unsupported_group) > 1 and (unsupported_group[1:] < unsupported_group[:-1]).any():
            order = np.argsort(unsupported_group, kind="stable")
            unsupported_group, unsupported_ids = unsupported_group[order], unsupported_ids[order]
        self._uns_group = unsupported_group  # sorted by server (row order within one)
        self._uns_ids = unsupported_ids
        self._label = UnsupportedLabels(db) if labels is None else labels

    @classmethod
    def from_runs(cls, runs: Any, compiled: Any, source: str, db: DeviceNames | None = None,
                  labels: UnsupportedLabels | None = None) -> AuditTable:
        """The table of merged runs (one per server, in order of first appearance)."""
        return cls.from_parts(runs.keys, [runs], compiled, source, db, labels)

    @classmethod
    def from_parts(cls, keys: Any, parts: list[Any], compiled: Any, source: str,
                   db: DeviceNames | None = None, labels: UnsupportedLabels | None = None) -> AuditTable:
        """The table of runs held as ``parts`` (each a ``Runs`` whose runs, problems and
        unsupported GPUs count from its own first run), one run per server in order of
        first appearance across them; ``keys``: their run keys as one array; ``labels``: the
        unsupported GPUs' names, shared with the audit's other tables.  Each part's counts
        are written straight into the output's columns: at 10M rows joining them
        first cost a second copy of every count, in fresh pages."""
        from .. import arrowfn as af

        n = len(keys)
        bases = np.cumsum([0] + [len(p.first) for p in parts]).tolist()
        problems: dict[int, list[tuple[int | None, str]]] = {}
        if keys.null_count:
            for g in np.flatnonzero(af.is_null_mask(keys)).tolist():
                problems[g] = [(None, NO_SERVER)]
        for p, base in zip(parts, bases):
            for g, row, text in p.problems:
                problems.setdefault(g + base, []).append((row, text))
        # the int32 columns written once, into one block that the Arrow columns share (and
        # a pandas frame may take as its block: gpuclass.dask)
        names = int32_columns(compiled.card_ids)
        block = pooled_empty((len(names), n), np.int32)
        for p, base in zip(parts, bases):
            _fill_block(block, base, p.totals, p.counts)
        if len(parts) == 1:
            rows = parts[0].rows.astype(np.int64, copy=False)
            first = np.add(parts[0].first, 1, out=pooled_empty(n, np.int64), casting="unsafe")
        else:
            rows, first = pooled_empty(n, np.int64), pooled_empty(n, np.int64)
            for p, lo, hi in zip(parts, bases, bases[1:]):
                rows[lo:hi] = p.rows
                np.add(p.first, 1, out=first[lo:hi], casting="unsafe")
        columns = {"server": keys, "gpu_capable": af.from_numpy(np.greater(block[0], 0, out=pooled_empty(n, np.bool_)))}
        for name, values in zip(names, block):
            columns[name] = af.from_numpy(values)
        columns["rows"] = af.from_numpy(rows)
        columns["row"] = af.from_numpy(first)
        columns["problems"] = _problem_column({g: [problem(r, t) for r, t in p] for g, p in problems.items()}, n)
        found = device_conflicts(compiled, block[3:-1].T)
        columns["conflicts"] = _problem_column(found, n)
        if len(parts) == 1:
            uns_run, uns_ids = parts[0].unsupported_run, parts[0].unsupported_ids
        else:
            uns_run = np.concatenate([p.unsupported_run + base for p, base in zip(parts, bases)])
            uns_ids = np.concatenate([p.unsupported_ids for p in parts])
        import pyarrow as pa

        return cls(pa.table(columns), compiled, problems, uns_run, uns_ids, source, db, block, found, labels)

    def __len__(self) -> int:
        return self.table.num_rows

    def to_arrow(self) -> pyarrow.Table:
        """The per-server table (pyarrow)."""
        return self.table

    def to_pandas(self) -> pandas.DataFrame:
        """The per-server table as a pandas DataFrame."""
        return self.table.to_pandas()

    def int32_block(self, writeable: bool = False) -> np.ndarray:
        """The columns of :func:`~gpuclass.audit.results.columns.int32_columns` as one
        ``(columns, servers)`` int32 array: the memory :attr:`table`'s columns use (no copy),
        for a pandas frame's block.  Read-only, unless ``writeable``: a caller done with
        :attr:`table` takes the memory over (a write would show through the table).

        >>> import pyarrow as pa
        >>> from gpuclass.audit import audit_table
        >>> r = audit_table(pa.table({"server": ["a"], "vendor": ["10de"], "device": ["27b0"],
        ...                           "class": ["0300"]}))
        >>> r.int32_block()[1].tolist()
        [4]
        """
        if self._block is None:  # a table made elsewhere: its columns stacked
            from ..arrowfn import to_numpy

            self._block = np.stack([to_numpy(self.table[c]) for c in int32_columns(self.compiled.card_ids)])
        if writeable:
            return self._block
        view = self._block.view()
        view.flags.writeable = False
        return view

    def problem_lists(self, offset: int = 0, conflicts: bool = True) -> dict[int, list[str]]:
        """Each flagged server's problems (by its row in :attr:`table`), row numbers counted
        from ``offset`` (a partition's first row in the whole table): its rows' own, then
        (``conflicts``) those of the cards it holds together."""
        out = {g: [problem(r, t, offset) for r, t in p] for g, p in self._problems.items()}
        if conflicts:
            for g, texts in self._conflicts.items():
                out.setdefault(g, []).extend(texts)
        return out

    def conflict_lists(self) -> dict[int, list[str]]:
        """The conflicts of each server whose cards cannot be provisioned together."""
        return {g: list(c) for g, c in self._conflicts.items()}

    def problems_by_server(self) -> dict[int, list[str]]:
        """The problems of each server that has any, by its row in :attr:`table`."""
        return self.problem_lists()

    def unsupported(self, g: int) -> dict[str, int]:
        """The unsupported GPUs of server ``g``, by their pci.ids label (in row order)."""
        lo, hi = np.searchsorted(self._uns_group, [g, g + 1])
        labels: dict[str, int] = {}
        for key in self._uns_ids[lo:hi].tolist():
            label = self._label(key)
            labels[label] = labels.get(label, 0) + 1
        return labels

    def unsupported_lists(self) -> dict[int, list[str]]:
        """Each server's unsupported GPUs as ``Nx label`` texts (only the servers with some):
        :meth:`unsupported` of every such server, made from the distinct (server, ID) pairs
        (a server has one or two models, a fleet thousands of such servers)."""
        out: dict[int, list[str]] = {}
        groups = self._uns_group
        if not len(groups):
            return out
        # the distinct (server, ID) pairs and their counts; a server of one model is its one
        # pair, one of several is made as unsupported() makes it (row order, by label)
        pair = (groups.astype(np.int64) << 32) | self._uns_ids.astype(np.int64)
        keys, counts = np.unique(pair, return_counts=True)
        texts: dict[tuple[int, int], str] = {}
        merged: set[int] = set()
        for key, count in zip(keys.tolist(), counts.tolist()):
            g, dev = key >> 32, key & 0xFFFFFFFF
            text = texts.get((dev, count))
            if text is None:
                text = texts[dev, count] = unsupported_entry(self._label(dev), count)
            have = out.get(g)
            if have is None:
                out[g] = [text]
            else:
                have.append(text)
                merged.add(g)
        for g in merged:
            out[g] = [unsupported_entry(k, v) for k, v in self.unsupported(g).items()]
        return out

    def _unsupported_column(self, n: int) -> Any:
        """The flat ``unsupported`` column (pyarrow strings): each server's
        :meth:`unsupported_lists` texts joined by ``"; "``, ``""`` for a server without
        any, made from the distinct (server, ID) pairs without a Python object per server
        (a server of one model takes its text from the distinct (ID, count) pairs; one of
        several, as unsupported_lists makes it)."""
        import pyarrow as pa

        index = np.zeros(n, np.int64)
        pool: list[str] = [""]
        groups = self._uns_group
        if len(groups):
            pair = (groups.astype(np.int64) << 32) | self._uns_ids.astype(np.int64)
            keys, counts = np.unique(pair, return_counts=True)
            g = keys >> 32
            starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
            per = np.diff(np.r_[starts, len(g)])
            one = starts[per == 1]  # the pair of each server of one model
            combo = ((keys[one] & 0xFFFFFFFF) << 32) | counts[one].astype(np.int64)
            distinct, which = np.unique(combo, return_inverse=True)
            pool += [unsupported_entry(self._label(c >> 32), c & 0xFFFFFFFF) for c in distinct.tolist()]
            index[g[one]] = which.reshape(-1) + 1
            for k in g[starts[per > 1]].tolist():
                index[k] = len(pool)
                pool.append("; ".join(unsupported_entry(label, v) for label, v in self.unsupported(k).items()))
        from .. import arrowfn as af

        return af.take_text(pa.array(pool, pa.string()), index)

    def reports(self) -> list[ServerReport]:
        """Every server's report."""
        return list(self)

    def __iter__(self) -> Iterator[ServerReport]:
        cols = self.table.select(["server", "rows", "row", *map(card_column, self.compiled.card_ids)]).to_pydict()
        ids = [card_column(c) for c in self.compiled.card_ids]
        evidence = rule_evidence(self.compiled)
        problems = self.problem_lists()
        for g in range(len(self)):
            server = cols["server"][g]
            r = ServerReport(cols["row"][g], self.source, None if server is None else str(server),
                             rows=cols["rows"][g])
            r.cards = card_entries(self.compiled, {ci: cols[cid][g] for ci, cid in enumerate(ids)}, "id", evidence)
            unsupported_entries(r, self.unsupported(g))
            r.problems = problems.get(g, [])
            yield finish(r)

    def add_to(self, summary: AuditSummary) -> None:
        """Add this table's servers to ``summary``, a column at a time."""
        from ..arrowfn import to_numpy

        t = self.table

        def total(c: str) -> int:
            return int(to_numpy(t.column(c)).sum())
        uns = to_numpy(t.column("unsupported_gpus"))
        summary.add_counts(t.num_rows, total("rows"), int((to_numpy(t.column("supported_cards")) > 0).sum()),
                           total("supported_cards"), total("slices"), int(uns.sum()), int((uns > 0).sum()),
                           len(self._problems.keys() | self._conflicts.keys()),
                           [(cid, total(card_column(cid))) for cid in self.compiled.card_ids])

    def summary(self) -> AuditSummary:
        """The totals of this table's servers."""
        s = AuditSummary()
        self.add_to(s)
        return s

    def flat(self) -> pyarrow.Table:
        """The reports' flat rows (:func:`~gpuclass.audit.results.columns.flat_columns`) as a
        pyarrow Table, made a column at a time."""
        return self._flat(sentences=True)

    def _flat(self, sentences: bool, narrow: bool = False) -> pyarrow.Table:
        """The flat columns (``sentences``: with the ``cards`` and ``reason`` texts; ``narrow``:
        without them, the counts int32, as :meth:`narrow_typed` gives them)."""
        import pyarrow as pa

        from .. import arrowfn as af
        from ..render import device_texts

        t = self.table
        n = t.num_rows
        ids = self.compiled.card_ids
        block = self.int32_block()
        if sentences:
            texts = device_texts(self.compiled, block[3:3 + len(ids)].T, af.to_numpy(t.column("slices")),
                                 af.to_numpy(t.column("unsupported_gpus")), self.unsupported_lists(),
                                 self.problem_lists(), sentences)
        else:
            texts = {"unsupported": self._unsupported_column(n)}
        names = ("supported_cards", "slices", "unsupported_gpus", *map(card_column, ids))
        if sentences or narrow:  # the table's own int32 columns
            counted = {c: t.column(c) for c in names}
        else:
            # the typed counts are int64: widened here at once, into one array (a cast per
            # column made each its own fresh allocation)
            wide = np.empty((len(names), n), np.int64)
            wide[...] = block[:len(names)]
            counted = {c: af.from_numpy(wide[k]) for k, c in enumerate(names)}
        server = t.column("server")
        if not pa.types.is_string(server.type):
            server = af.cast(server, pa.string())
        cols = {"row": t.column("row"), "source": pa.repeat(pa.scalar(utf8_text(self.source), pa.string()), n),
                "server": server, "gpu_capable": t.column("gpu_capable")}
        if sentences:
            cols["cards"] = texts["cards"]
        cols.update({"supported_cards": counted["supported_cards"], "slices": counted["slices"],
                     "unsupported": texts["unsupported"], "unsupported_gpus": counted["unsupported_gpus"]})
        if sentences:
            cols["reason"] = texts["reason"]
        cols.update({"problems": _problem_column(self.problem_lists(), n, missing=""),
                     "rows": t.column("rows")})
        for cid in ids:
            cols[card_column(cid)] = counted[card_column(cid)]
        for k in PASSTHROUGH:
            cols[k] = pa.nulls(n, pa.float64() if k.endswith("price") else pa.string())
        return pa.table(cols)

    def typed(self, card_ids: Any = None) -> pyarrow.Table:
        """The flat rows as typed columns (:func:`~gpuclass.audit.results.columns.typed_schema`;
        ``card_ids``: the audit's own, whatever is given)."""
        import pyarrow as pa

        from .. import arrowfn as af

        schema = typed_schema(self.compiled.card_ids)
        flat = self._flat(sentences=False)
        if flat.schema.equals(schema):
            return flat
        return pa.Table.from_arrays([c if c.type == f.type else af.cast(c, f.type)
                                     for c, f in zip(flat.columns, schema)], schema=schema)

    def narrow_typed(self, card_ids: Any = None) -> pyarrow.Table:
        """:meth:`typed`'s columns with the counts (``supported_cards``, ``slices``,
        ``unsupported_gpus`` and each card's) int32, as this table holds them (no widened
        copy): for a writer that writes them as typed_schema's int64, as
        :class:`~gpuclass.audit.sinks.parquet_file.ParquetFileWriter` does (the Parquet
        sink's).  Cast to :func:`~gpuclass.audit.results.columns.typed_schema`, it is
        :meth:`typed`."""
        return self._flat(sentences=False, narrow=True)

    def csv_parts(self, card_ids: Any = None) -> Iterator[list[Any]]:
        """Each server's flat row (a list, in :func:`~gpuclass.audit.results.columns.flat_columns`
        order), for the csv module."""
        flat = self.flat()
        return map(list, zip(*(flat.column(c).to_pylist() for c in flat_columns(self.compiled.card_ids))))


# Runs copied into the block at a time: a slice of the (runs, columns) arrays that stays in
# the caches while each of its columns is read out of it.
_FILL = 1 << 15


def _fill_block(block: np.ndarray, base: int, totals: np.ndarray, counts: np.ndarray) -> None:
    """The block's columns ``base, base + 1, ...`` from runs' ``totals`` and ``counts``
    (rows: cards, slices, unsupported GPUs, each card's count, invalid rows)."""
    for lo in range(0, len(totals), _FILL):
        hi = min(lo + _FILL, len(totals))
        at = slice(base + lo, base + hi)
        t = totals[lo:hi]
        block[0, at] = t[:, C.R_CARDS]
        block[1, at] = t[:, C.R_SLICES]
        block[2, at] = t[:, C.R_UNSUPPORTED]
        block[3:-1, at] = counts[lo:hi].T
        block[-1, at] = t[:, C.R_INVALID]


def _problem_column(problems: dict[int, list[str]], n: int, missing: str | None = None) -> Any:
    """Each server's problems as one string (``missing`` where it has none: null by
    default), without a Python list of all the servers."""
    import pyarrow as pa

    if not problems:
        return pa.nulls(n, pa.string()) if missing is None else pa.repeat(pa.scalar(missing, pa.string()), n)
    texts = [utf8_text("; ".join(p)) for p in problems.values()]
    where = np.full(n, -1 if missing is None else len(texts), np.int64)
    where[np.fromiter(problems.keys(), np.int64, len(problems))] = np.arange(len(problems))
    from .. import arrowfn as af

    return af.take_text(pa.array(texts if missing is None else [*texts, missing], pa.string()), where)

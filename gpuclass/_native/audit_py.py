"""Pure-Python twin of the audit kernel (``audit.pxi``): a device table's rows, cell by cell.

Every cell goes through the contract's ``cell_value`` (the grammar of
:func:`gpuclass.ids.cell_parts`) and a class cell through :func:`gpuclass.ids.class_value`,
the rows through the matcher's and the rollup's twins; the runs, problems and
unsupported rows come out as the compiled kernel gives them.

>>> import pyarrow as pa
>>> from gpuclass._native.contract.audit import column_of
>>> from gpuclass.policy import compile_policy
>>> cols = [column_of(pa.array(v), "x") for v in (["a", "a", "b"], ["10de", "10de", "8086"],
...         ["27b0", "22bc", "1533"], ["0300", "0403", "0200"], [None] * 3, [None] * 3)]
>>> runs = audit_rows(compile_policy().tables, cols, 7)
>>> runs.starts.tolist(), runs.totals[:, :2].tolist(), runs.counts[0].tolist()
([0, 2, 3], [[1, 4], [0, 0]], [0, 0, 1, 0, 0, 0, 0])
"""

from __future__ import annotations

import numpy as np

from .. import constants as C
from ..ids import class_value
from .contract import audit as _AU
from .contract import match as _MS
from .match_py import match_devices
from .rollup_py import rollup

__all__ = ["audit_rows", "parse_id_cells", "key_hashes", "KeySet", "text_rising", "take_text"]


def _same_server(c: _AU.Column, i: int, j: int) -> bool:
    if _AU.nameless(c, i) or _AU.nameless(c, j):
        return False
    (c, i), (_, j) = _AU._entry(c, i), _AU._entry(c, j)  # a dictionary's entries
    if c.kind == _AU.INT:
        return int(c.ints[i]) == int(c.ints[j])
    return _AU._bytes(c, i) == _AU._bytes(c, j)


def audit_rows(tables, columns, n_cards):
    """Classify a device table's rows and roll them up per run (see the compiled core)."""
    t = _MS.check_tables(tables)
    cols, n, nc = _AU.prepare_audit_args(tables, columns, n_cards)
    ids = np.zeros((5, n), dtype=np.uint32)
    has_sub = np.zeros(n, dtype=bool)
    flags = np.zeros(n, dtype=np.uint32)
    problem_rows, problem_codes = [], []
    for i in range(n):
        cells = [_AU.cell_value(cols[f + 1], i, _AU.WIDTHS[f]) for f in range(5)]
        st = [c[0] for c in cells]
        if st[2] == _AU.CELL_OK:
            cells[2] = (st[2], class_value(cells[2][1], cells[2][2]), cells[2][2])
        code = next((f * 4 + st[f] for f in range(3) if st[f] != _AU.CELL_OK), 0)
        code = code or next((f * 4 + _AU.CELL_BAD for f in (3, 4) if st[f] == _AU.CELL_BAD), 0)
        if not code and (st[3] == _AU.CELL_OK) != (st[4] == _AU.CELL_OK):
            code = 3 * 4 + _AU.CELL_PAIR
        pair = st[3] == _AU.CELL_OK and st[4] == _AU.CELL_OK
        for f in range(5):
            ids[f, i] = cells[f][1] if f < 3 or pair else 0
        has_sub[i] = pair
        if code:
            flags[i] = C.FLAG_INVALID
            problem_rows.append(i)
            problem_codes.append(code)
    status, card, slices = match_devices(t, ids[0], ids[1], ids[3], ids[4], ids[2],
                                         has_subsystem=has_sub, flags=flags)
    starts = [i for i in range(n) if i == 0 or not _same_server(cols[0], i, i - 1)]
    run = np.cumsum(np.isin(np.arange(n), starts)) - 1
    total: dict[int, int] = {}
    for i in np.flatnonzero(status == C.SUPPORTED).tolist():  # a run's slices stay in int32
        total[run[i]] = total.get(run[i], 0) + int(slices[i])
        if total[run[i]] > 0x7FFFFFFF:
            raise _AU.overflow_error(i)
    totals, counts = rollup(status, card, slices, run, len(starts), nc)
    unsupported = np.flatnonzero(status == C.UNSUPPORTED).astype(np.int64)
    return _AU.AuditRuns(np.array(starts + [n], dtype=np.int64), totals, counts,
                         np.array(problem_rows, dtype=np.int64), np.array(problem_codes, dtype=np.int64),
                         unsupported, (ids[0, unsupported].astype(np.int64) << 16) | ids[1, unsupported],
                         np.array([_AU.nameless(cols[0], i) for i in starts], dtype=bool))


def parse_id_cells(column, field):
    """Each cell of one ID column as ``audit_rows`` parses it (see the compiled core)."""
    c, n, maxdigits, is_class = _AU.prepare_cells_args(column, field)
    state = np.zeros(n, dtype=np.uint8)
    value = np.zeros(n, dtype=np.uint32)
    for i in range(n):
        st, v, digits = _AU.cell_value(c, i, maxdigits)
        state[i] = st
        value[i] = class_value(v, digits) if is_class and st == _AU.CELL_OK else v
    return state, value


def text_rising(column):
    """Whether each text cell comes after the one before (see the compiled core): Python
    compares bytes as Arrow orders binary values."""
    c, n = _AU.prepare_text_args(column)
    return all(_AU._bytes(c, i - 1) < _AU._bytes(c, i) for i in range(1, n))


def take_text(column, indices, empty=None):
    """The text cells at ``indices``, packed as ``(offsets, data)`` (see the compiled core)."""
    c, idx, m = _AU.prepare_take_args(column, indices)
    parts = [b"" if k < 0 else _AU._bytes(c, k) for k in idx.tolist()]
    joined = b"".join(parts)
    off = _AU.take_output(empty, m + 1, np.int64, "offsets")
    off[0] = 0
    np.cumsum(np.fromiter(map(len, parts), np.int64, m), out=off[1:])
    data = _AU.take_output(empty, len(joined), np.uint8, "data")
    data[:] = np.frombuffer(joined, dtype=np.uint8)
    return off, data


def key_hashes(column, seed):
    """64-bit hashes of a key column's cells, 0 for a missing cell (see the compiled core)."""
    c, n, seed = _AU.prepare_hash_args(column, seed)
    out = np.zeros(n, dtype=np.uint64)
    for row in range(n):
        at = _AU._entry(c, row)  # a dictionary cell hashes as its entry
        if at is None or _AU._null(*at):
            continue
        e, i = at
        if e.kind == _AU.INT:
            out[row] = _AU.mix64(seed ^ (int(e.ints[i]) & _AU._M64))
            continue
        b = _AU._bytes(e, i)
        h = seed ^ ((len(b) * 0x9E3779B97F4A7C15) & _AU._M64)
        for k in range(0, len(b), 8):
            h = _AU.mix64(h ^ int.from_bytes(b[k:k + 8], "little"))
        out[row] = h
    return out


class KeySet:
    """Key hashes seen so far, each with the first position (see the compiled core)."""

    def __init__(self) -> None:
        self._first: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._first)

    def add(self, hashes, base):
        h, n, base = _AU.prepare_keyset_args(hashes, base)
        found, prior = [], []
        for i, value in enumerate(h.tolist()):
            p = self._first.setdefault(value, base + i)
            if p != base + i:
                found.append(i)
                prior.append(p)
        return np.array(found, dtype=np.int64), np.array(prior, dtype=np.int64)

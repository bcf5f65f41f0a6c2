"""Pure-Python twin of the rollup kernel (``rollup.pxi``, C in ``include/gpuclass_rollup.h``).

The rollup's rules, once, as the C writes them once: :func:`add_row` adds one classified
row to its group's totals, :func:`merge_row` one group's totals to another's
(``contract/rollup_rules.py``, numpy-free).  ``rollup`` and ``merge_runs`` are loops over
them, checking their arguments and reporting their first bad row as the compiled kernel
does.

>>> import numpy as np
>>> totals = rollup([1, 2, 1], [0, -1, 3], [4, 0, 4])
>>> totals.tolist()
[[2, 8, 1, 0, 0, 0, 0, 3]]
>>> merge_runs([0, 0], totals.repeat(2, axis=0), np.zeros((2, 0), np.int32), 1)[0].tolist()
[[4, 16, 2, 0, 0, 0, 0, 3]]
"""

from __future__ import annotations

import numpy as np

from .. import constants as C
from .contract import rollup as _RU
from .contract.rollup_rules import add_row, empty_row, merge_row

__all__ = ["rollup", "merge_runs", "add_row", "merge_row"]

def rollup(status, card, slices, group=None, n_groups=1, n_cards=None):
    """Per-group totals as an ``(n_groups, 8)`` int32 matrix, with ``n_cards`` also the
    per-card counts (see the compiled core)."""
    n, st, cd, sc, g, ng, nc = _RU.prepare_rollup_args(status, card, slices, group, n_groups, n_cards)
    out = [empty_row() for _ in range(ng)]
    counts = [[0] * (nc or 0) for _ in range(ng)]
    st_l, cd_l, sc_l = st.tolist(), cd.tolist(), sc.tolist()
    g_l = g.tolist() if g is not None else [0] * n
    for base in range(0, n, _RU.ROLLUP_CHUNK):  # checked, then added, a chunk at a time
        rows = range(base, min(n, base + _RU.ROLLUP_CHUNK))
        for i in rows:
            if st_l[i] > C.INVALID:
                raise _RU.rollup_error(_RU.RU_STATUS, st, cd, g, i, ng, nc)
            if not 0 <= g_l[i] < ng:
                raise _RU.rollup_error(_RU.RU_GROUP, st, cd, g, i, ng, nc)
            if nc is not None and st_l[i] == C.SUPPORTED and not 0 <= cd_l[i] < nc:
                raise _RU.rollup_error(_RU.RU_CARD, st, cd, g, i, ng, nc)
        for i in rows:
            if st_l[i] == C.NOT_GPU:
                continue
            if not add_row(out[g_l[i]], st_l[i], cd_l[i], sc_l[i]):
                raise _RU.rollup_error(_RU.RU_OVERFLOW, st, cd, g, i, ng, nc)
            if nc is not None and st_l[i] == C.SUPPORTED:
                counts[g_l[i]][cd_l[i]] += 1
    matrix = np.array(out, dtype=np.int32).reshape(ng, C.ROLLUP_COLUMNS)
    if nc is None:
        return matrix
    return matrix, np.array(counts, dtype=np.int32).reshape(ng, nc)


def merge_runs(group, totals, counts, n_groups):
    """Combine runs into groups with the rollup's rules (see the compiled core)."""
    g, t, c, ng, nc = _RU.prepare_merge_args(group, totals, counts, n_groups)
    out = [empty_row() for _ in range(ng)]
    out_counts = [[0] * nc for _ in range(ng)]
    for r, (grp, row_t, row_c) in enumerate(zip(g.tolist(), t.tolist(), c.tolist())):
        if not merge_row(out[grp], row_t):
            raise _RU.merge_overflow_error(r)
        out_counts[grp] = [a + b for a, b in zip(out_counts[grp], row_c)]
    return (np.array(out, dtype=np.int32).reshape(ng, C.ROLLUP_COLUMNS),
            np.array(out_counts, dtype=np.int32).reshape(ng, nc))

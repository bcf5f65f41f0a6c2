# The rollup, included into gpuclass/_core.pyx (twin: rollup_py.py; contract:
# contract/rollup.py, whose checks both entry points call).  The C is
# include/gpuclass_rollup.h: one set of rules for adding rows to a group and for merging
# groups' totals, which the audit row pass uses too.

from gpuclass._native.arrays cimport data_or_null
from gpuclass._native.contract import rollup as _RU


def rollup(status, card, slices, group=None, n_groups=1, n_cards=None):
    """Per-group totals of a classification as an ``(n_groups, 8)`` int32 matrix.

    Columns (``gpuclass.constants.R_*``): supported cards, slices, unsupported
    GPUs, companion functions, virtual functions, invalid records, the first
    supported card's index (-1: none) and the mixed-node bits.  Without
    ``group`` (int32 or int64) every row belongs to group 0.  With ``n_cards``
    the result is ``(matrix, counts)``, ``counts`` the ``(n_groups, n_cards)``
    int32 supported cards of each group by card index.
    """
    n_, st, cd, sc, g, ng, nc = _RU.prepare_rollup_args(status, card, slices, group, n_groups, n_cards)
    cdef Py_ssize_t n = n_
    cdef int64_t c_ng = ng
    cdef int c_nc = 0 if nc is None else nc
    # The kernel writes every row (zeros, and -1 for the model): no np.zeros pass.
    out = np.empty((ng, ROLLUP_COLUMNS), dtype=np.int32)
    counts = None if nc is None else np.empty((ng, nc), dtype=np.int32)
    if ng == 0 and n == 0:
        return out if counts is None else (out, counts)
    cdef const uint8_t* p_status = <const uint8_t*> data_or_null(st)
    cdef const int16_t* p_card = <const int16_t*> data_or_null(cd)
    cdef const uint16_t* p_slices = <const uint16_t*> data_or_null(sc)
    cdef const void* p_group = data_or_null(g)
    cdef int gw = 0 if g is None else g.dtype.itemsize
    cdef int32_t* p_out = <int32_t*> data_or_null(out)
    cdef int32_t* p_counts = NULL if counts is None else <int32_t*> cnp.PyArray_DATA(<cnp.ndarray> counts)
    cdef int what = 0
    cdef Py_ssize_t bad
    with nogil:
        bad = gpuclass_rollup(n, p_status, p_card, p_slices, p_group, gw, c_ng, p_out, p_counts,
                              c_nc, &what)
    if bad >= 0:
        raise _RU.rollup_error(what, st, cd, g, bad, ng, nc)
    return out if counts is None else (out, counts)


def merge_runs(group, totals, counts, n_groups):
    """Combine runs into ``n_groups`` groups (``group``: each run's, runs in row order) with
    the rollup's rules; returns ``(totals, counts)`` per group."""
    g, t, c, ng, nc = _RU.prepare_merge_args(group, totals, counts, n_groups)
    out = np.empty((ng, ROLLUP_COLUMNS), dtype=np.int32)
    out_counts = np.empty((ng, nc), dtype=np.int32)
    cdef int64_t n_runs = g.shape[0], c_ng = ng
    cdef int c_nc = nc
    cdef const int64_t* p_g = <const int64_t*> data_or_null(g)
    cdef const int32_t* p_t = <const int32_t*> data_or_null(t)
    cdef const int32_t* p_c = <const int32_t*> data_or_null(c)
    cdef int32_t* p_out = <int32_t*> data_or_null(out)
    cdef int32_t* p_oc = <int32_t*> data_or_null(out_counts)
    cdef int64_t bad
    with nogil:
        bad = gpuclass_merge_runs(n_runs, p_g, p_t, p_c, c_nc, c_ng, p_out, p_oc)
    if bad >= 0:
        raise _RU.merge_overflow_error(bad)
    return out, out_counts

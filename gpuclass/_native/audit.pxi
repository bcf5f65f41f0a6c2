# Device tables audited from their columns, included into gpuclass/_core.pyx (twin:
# audit_py.py; contract: contract/audit.py, which makes the columns and checks them).
#
# One nogil pass over the rows, a chunk at a time (include/gpuclass_audit.h): the hex
# cells are parsed straight from the Arrow string buffers (include/gpuclass_cell.h), each
# chunk is classified by the matcher's kernel, and its rows are added to their run's
# totals (include/gpuclass_rollup.h).  Only the runs, the rows with a problem and the
# unsupported GPUs' rows come back.  parse_id_cells gives the cell parser alone, for
# Python's numpy paths; key_hashes and KeySet tell server keys met before; text_rising and
# take_text order and gather text keys (the sorted path's, without Arrow's compute module).

from cpython.pycapsule cimport PyCapsule_Destructor, PyCapsule_GetPointer, PyCapsule_New
from libc.stdlib cimport free, realloc
from libc.string cimport memset

from gpuclass._native.arrays cimport data_or_null
from gpuclass._native.contract import audit as _AU
from gpuclass._native.contract import match as _MS

# the matcher (fill_ctx: its context for a policy's tables), which audit_rows classifies with
include "match.pxi"


cdef void fill_col(AuditCol* out, object c, AuditCol* entries):
    """``out`` from the Column ``c``; a DICT column's dictionary goes into ``entries``."""
    out.kind = c.kind
    out.data = <const uint8_t*> data_or_null(c.data)
    out.data_len = 0 if c.data is None else c.data.shape[0]
    out.off32 = data_or_null(c.offsets) if c.kind == COL_STR32 else NULL
    out.off64 = data_or_null(c.offsets) if c.kind == COL_STR64 else NULL
    out.ints = data_or_null(c.ints)
    out.valid = <const uint8_t*> data_or_null(c.valid)
    out.voff = c.voff
    out.index = NULL
    out.index_size = 0
    out.dictionary = NULL
    out.dictionary_len = 0
    if c.kind == COL_DICT:
        fill_col(entries, c.dictionary, NULL)
        out.index = data_or_null(c.index)
        out.index_size = c.index.dtype.itemsize
        out.dictionary = entries
        out.dictionary_len = c.dictionary.n


cdef void free_buffer(object capsule) noexcept:
    free(PyCapsule_GetPointer(capsule, NULL))


cdef object vec_array(AuditVec* v, object dtype, object width):
    """The vector's items as a numpy array, one row each (``width`` None: 1-D).  The array
    takes the vector's buffer over (trimmed to its items; freed with the array): at ten
    million rows a copy costs as much again in fresh pages."""
    cdef cnp.npy_intp dims[2]
    cdef void* p
    if v.n == 0 or v.p == NULL or v.item == 0:
        free(v.p)
        v.p = NULL
        return np.empty(v.n if width is None else (v.n, width), dtype=dtype)
    if v.cap > v.n:
        p = realloc(v.p, <size_t> v.n * v.item)  # shrinking: a large block is remapped
        if p != NULL:
            v.p = p
            v.cap = v.n
    dims[0] = v.n
    dims[1] = 0 if width is None else width
    capsule = PyCapsule_New(v.p, NULL, <PyCapsule_Destructor> free_buffer)
    v.p = NULL  # the capsule owns it now
    arr = cnp.PyArray_SimpleNewFromData(1 if width is None else 2, dims, np.dtype(dtype).num,
                                        PyCapsule_GetPointer(capsule, NULL))
    cnp.set_array_base(arr, capsule)
    return arr


def audit_rows(tables, columns, n_cards):
    """Classify a device table's rows and roll them up per run of equal server keys.

    ``columns``: six :class:`~gpuclass._native.contract.audit.Column` (server, vendor,
    device, class, subvendor, subdevice); ``n_cards``: the policy's cards.  Returns an
    :class:`~gpuclass._native.contract.audit.AuditRuns`.
    """
    t = _MS.check_tables(tables)
    cols, n_, nc = _AU.prepare_audit_args(tables, columns, n_cards)
    cdef int64_t n = n_
    cdef int c_nc = nc
    cdef MatchCtx ctx
    keep = fill_ctx(&ctx, t, False)
    cdef int sub_rules = t.sub_keys.shape[0] > 0
    cdef AuditCol c_cols[6]
    cdef AuditCol c_entries[6]  # the dictionaries of DICT columns
    cdef int k
    for k in range(6):
        fill_col(&c_cols[k], cols[k], &c_entries[k])
    cdef AuditOut o
    memset(&o, 0, sizeof(AuditOut))
    o.starts.item = sizeof(int64_t)
    o.totals.item = ROLLUP_COLUMNS * sizeof(int32_t)
    o.counts.item = c_nc * sizeof(int32_t)
    o.problems.item = 2 * sizeof(int64_t)
    o.unsupported.item = 2 * sizeof(int64_t)
    o.nameless.item = sizeof(uint8_t)
    cdef int rc = 0
    cdef int64_t bad = -1
    cdef int64_t* end
    with nogil:
        if n:
            rc = gpuclass_audit(&ctx, sub_rules, c_cols, n, c_nc, &o, &bad)
        if rc == 0:  # the runs' starts end with the row count
            end = <int64_t*> gpuclass_vec_push(&o.starts)
            if end == NULL:
                rc = -1
            else:
                end[0] = n
    starts = vec_array(&o.starts, np.int64, None)
    totals = vec_array(&o.totals, np.int32, ROLLUP_COLUMNS)
    counts = vec_array(&o.counts, np.int32, c_nc)
    problems = vec_array(&o.problems, np.int64, 2)
    unsupported = vec_array(&o.unsupported, np.int64, 2)
    nameless = vec_array(&o.nameless, np.bool_, None)
    if rc == -1:
        raise MemoryError("audit_rows: no memory for the runs")
    if rc == -2:
        raise _AU.overflow_error(bad)
    return _AU.AuditRuns(starts, totals, counts, problems[:, 0].copy(),
                         problems[:, 1].copy(), unsupported[:, 0].copy(), unsupported[:, 1].copy(),
                         nameless)


def parse_id_cells(column, field):
    """Each cell of one ID column parsed as ``audit_rows`` parses it: ``(state uint8,
    value uint32)``, the state a ``CELL_*`` code, the value 0 unless the cell is good;
    ``field`` one of the contract's ``FIELDS`` (its digits, and for ``"class"`` the
    class-digit rule: 4 digits are base class and subclass)."""
    c, n_, maxdigits, is_class = _AU.prepare_cells_args(column, field)
    state = np.empty(n_, dtype=np.uint8)
    value = np.empty(n_, dtype=np.uint32)
    cdef AuditCol col, entries
    fill_col(&col, c, &entries)
    cdef int64_t n = n_
    cdef int md = maxdigits, cls = is_class, rc = 0
    cdef uint8_t* p_st = <uint8_t*> data_or_null(state)
    cdef uint32_t* p_val = <uint32_t*> data_or_null(value)
    if n:
        with nogil:
            rc = gpuclass_parse_cells(&col, n, md, cls, p_st, p_val)
    if rc:
        raise MemoryError("parse_id_cells: no memory for the dictionary's entries")
    return state, value


def key_hashes(column, seed):
    """64-bit hashes of a key column's cells (0 for a missing cell), for telling keys seen
    before: equal keys hash equal, and a match is confirmed by comparing the keys."""
    c, n_, s_ = _AU.prepare_hash_args(column, seed)
    out = np.empty(n_, dtype=np.uint64)
    cdef AuditCol col, entries
    fill_col(&col, c, &entries)
    cdef int64_t n = n_
    cdef uint64_t s = s_
    cdef uint64_t* p = <uint64_t*> data_or_null(out)
    with nogil:
        gpuclass_key_hashes(&col, n, s, p)
    return out


def text_rising(column):
    """Whether every cell of a text column without missing cells comes after the one
    before in Arrow's order of binary values (bytes unsigned, a prefix first)."""
    c, n_ = _AU.prepare_text_args(column)
    cdef AuditCol col, entries
    fill_col(&col, c, &entries)
    cdef int64_t n = n_
    cdef int r
    with nogil:
        r = gpuclass_text_rising(&col, n)
    return bool(r)


def take_text(column, indices, empty=None):
    """The cells of a text column without missing cells at ``indices`` (an index < 0: an
    empty cell), packed: ``(offsets, data)``, int64 offsets (``len(indices) + 1``) into
    uint8 data.  ``empty(n, dtype)`` makes the two arrays (``numpy.empty`` where None;
    ``gpuclass.audit.pool.pooled_empty`` takes them from Arrow's pool)."""
    c, idx, m_ = _AU.prepare_take_args(column, indices)
    cdef AuditCol col, entries
    fill_col(&col, c, &entries)
    cdef int64_t m = m_
    cdef const int64_t* p_idx = <const int64_t*> data_or_null(idx)
    cdef int64_t total
    with nogil:
        total = gpuclass_take_bytes(&col, p_idx, m)
    off = _AU.take_output(empty, m + 1, np.int64, "offsets")
    data = _AU.take_output(empty, total, np.uint8, "data")
    cdef int64_t* p_off = <int64_t*> data_or_null(off)
    cdef uint8_t* p_data = <uint8_t*> data_or_null(data)
    with nogil:
        gpuclass_take_text(&col, p_idx, m, p_off, p_data)
    return off, data


cdef class KeySet:
    """Key hashes seen so far, each with the position of the first key that had it.

    ``add(hashes, base)`` inserts the hashes of keys at positions ``base, base + 1, ...``
    and returns ``(found, prior)``: the indices into ``hashes`` of the hashes already
    present, and the earlier position of each.  Equal hashes are not proof of equal
    keys: callers compare the keys.
    """
    cdef KeySetC k

    def __cinit__(self):
        memset(&self.k, 0, sizeof(KeySetC))

    def __dealloc__(self):
        free(self.k.hash)
        free(self.k.pos)

    def __len__(self):
        return self.k.n

    def add(self, hashes, base):
        h, n_, b_ = _AU.prepare_keyset_args(hashes, base)
        found = np.empty(n_, dtype=np.int64)
        prior = np.empty(n_, dtype=np.int64)
        cdef int64_t n = n_, b = b_, m
        cdef const uint64_t* p_h = <const uint64_t*> data_or_null(h)
        cdef int64_t* p_f = <int64_t*> data_or_null(found)
        cdef int64_t* p_p = <int64_t*> data_or_null(prior)
        with nogil:
            m = gpuclass_keyset_add(&self.k, p_h, n, b, p_f, p_p)
        if m < 0:
            raise MemoryError("KeySet: no memory for more keys")
        return found[:m].copy(), prior[:m].copy()

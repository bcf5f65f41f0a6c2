# Parquet page encodings, included into gpuclass/_core.pyx (twin: parquet_py.py; contract:
# contract/parquet.py, whose checks both entry points call).  The C is
# include/gpuclass_parquet.h: an audit's output columns encoded in one pass each, without
# the GIL, for gpuclass.audit.sinks.parquet_file.

from gpuclass._native.arrays cimport data_or_null
from gpuclass._native.contract import parquet as _PQ


def parquet_dictionary(values):
    """The dictionary of a column chunk's integers (int32 or int64): ``(distinct,
    index)``, the distinct values (int64, rising) and each value's index (uint8); None where
    they span 65,536 or more, or are more than 256 distinct."""
    v = _PQ.integers(values)
    cdef Py_ssize_t n = v.shape[0]
    index = np.empty(n, np.uint8)
    distinct = np.empty(_PQ.DICT_MAX, np.int64)
    cdef int found = 0, refused = 0
    cdef bint wide = v.dtype.itemsize == 8
    cdef const void* p_v = data_or_null(v)
    cdef int64_t* p_d = <int64_t*> cnp.PyArray_DATA(<cnp.ndarray> distinct)
    cdef uint8_t* p_i = <uint8_t*> data_or_null(index)
    with nogil:
        if wide:
            refused = gpuclass_pq_dictionary64(<const int64_t*> p_v, n, p_d, &found, p_i)
        else:
            refused = gpuclass_pq_dictionary32(<const int32_t*> p_v, n, p_d, &found, p_i)
    if refused < 0:
        raise MemoryError()
    if refused:
        return None
    return distinct[:found].copy(), index


def parquet_hybrid(index, int width):
    """Dictionary indices of ``width`` bits (1 to 8) in the RLE / bit-packed hybrid
    encoding: one RLE run where they are all the same, else one bit-packed run."""
    idx = _PQ.indices(index, width)
    cdef Py_ssize_t n = idx.shape[0]
    out = np.empty(gpuclass_pq_hybrid_room(n, width), np.uint8)
    cdef const uint8_t* p_i = <const uint8_t*> data_or_null(idx)
    cdef uint8_t* p_o = <uint8_t*> cnp.PyArray_DATA(<cnp.ndarray> out)
    cdef int64_t size
    with nogil:
        size = gpuclass_pq_hybrid(p_i, n, width, p_o)
    return out[:size].tobytes()


def parquet_delta(values):
    """Integers as ``DELTA_BINARY_PACKED``: blocks of 128 deltas in 4 miniblocks, every block
    with the least delta of all and the widest width (the same header each), the last block
    only as many miniblocks as its deltas fill (the others' widths 0)."""
    v = _PQ.int64s(values)
    cdef Py_ssize_t m = v.shape[0]
    cdef const int64_t* p_v = <const int64_t*> data_or_null(v)
    cdef int64_t least = 0, size
    cdef int width = 0
    if m >= 2:
        with nogil:
            gpuclass_pq_delta_plan(p_v, m, &least, &width)
    out = np.empty(gpuclass_pq_delta_room(m, width), np.uint8)
    cdef uint8_t* p_o = <uint8_t*> cnp.PyArray_DATA(<cnp.ndarray> out)
    with nogil:
        size = gpuclass_pq_delta(p_v, m, least, width, p_o)
    return out[:size].tobytes()


def parquet_text_bounds(starts, data):
    """The positions of the least and greatest texts (``data[starts[i]:starts[i + 1]]``),
    compared byte by byte (a prefix first); the first of equal ones."""
    s, d = _PQ.texts(starts, data)
    cdef const int64_t* p_s = <const int64_t*> cnp.PyArray_DATA(<cnp.ndarray> s)
    cdef const uint8_t* p_d = <const uint8_t*> data_or_null(d)
    cdef int64_t n = s.shape[0] - 1, lo = 0, hi = 0
    with nogil:
        gpuclass_pq_text_bounds(p_d, p_s, n, &lo, &hi)
    return int(lo), int(hi)

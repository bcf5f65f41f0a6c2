# Plain CSV lines split into cells, included into gpuclass/_core.pyx (twin: csv_py.py;
# contract: contract/csv.py, whose checks both entry points call).  The C is
# include/gpuclass_csv.h: a device table's lines scanned without the GIL, for
# gpuclass.audit.ingest.csv.

from libc.stdlib cimport malloc

from gpuclass._native.contract import csv as _CSV


def csv_cells(text, Py_ssize_t pos, int width, wanted, int64_t limit, int64_t room):
    """The plain lines of ``text`` (bytes) from ``pos``, at most ``room`` of them, split into
    ``width`` cells (see ``gpuclass_csv.h`` for what is plain): ``(rows, end, columns)``,
    ``end`` where the scan stopped (the start of the first line that is not plain, or
    after the last row) and for each of the ``wanted`` cell numbers its cells as Arrow
    string buffers ``(offsets int32, data uint8)``."""
    view, want = _CSV.cells_arguments(text, pos, width, wanted, limit, room)
    cdef const uint8_t[::1] t = view
    cdef int32_t k = want.shape[0]
    cdef int64_t n = t.shape[0], rows, end = pos, cap = n - pos + 16
    room = min(room, n - pos)  # a plain line takes a byte at least: no more rows than bytes
    slot = np.full(width, -1, np.int32)
    slot[want] = np.arange(k, dtype=np.int32)  # each wanted once (the contract checks)
    cdef const uint8_t* p_t = &t[0] if n else NULL
    cdef const int32_t* p_slot = <const int32_t*> cnp.PyArray_DATA(<cnp.ndarray> slot)
    cdef int64_t* p_s = <int64_t*> malloc((2 * k + 2) * sizeof(int64_t))
    # the room each column may need, on the C heap (reused by the next call, where numpy's
    # large arrays would ask for fresh huge pages); exact copies are returned
    cdef int32_t* p_o = <int32_t*> malloc(max(k, 1) * (room + 1) * sizeof(int32_t))
    cdef uint8_t* p_d = <uint8_t*> malloc(max(k, 1) * cap)
    cdef int32_t j
    try:
        if p_s == NULL or p_o == NULL or p_d == NULL:
            raise MemoryError()
        with nogil:
            rows = gpuclass_csv_split(p_t, n, pos, width, p_slot, k, limit, room, p_o, p_d, cap, p_s, &end)
        columns = []
        for j in range(k):
            offsets = np.empty(rows + 1, np.int32)
            memcpy(cnp.PyArray_DATA(<cnp.ndarray> offsets), p_o + j * (room + 1), (rows + 1) * sizeof(int32_t))
            data = np.empty(p_o[j * (room + 1) + rows], np.uint8)
            if data.shape[0]:
                memcpy(cnp.PyArray_DATA(<cnp.ndarray> data), p_d + j * cap, data.shape[0])
            columns.append((offsets, data))
    finally:
        free(p_s)
        free(p_o)
        free(p_d)
    return int(rows), int(end), columns

# Plain CSV lines split into cells, included into gpuclass/_core.pyx (twin: csv_py.py;
# contract: contract/csv.py, whose checks both entry points call).  The C is
# include/gpuclass_csv.h: a device table's lines scanned without the GIL, for
# gpuclass.audit.ingest.csv.

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
    offsets = np.empty((k, room + 1), np.int32)
    data = np.empty((k, cap), np.uint8)
    span = np.zeros(2 * k + 2, np.int64)
    cdef const uint8_t* p_t = &t[0] if n else NULL
    cdef const int32_t* p_slot = <const int32_t*> cnp.PyArray_DATA(<cnp.ndarray> slot)
    cdef int32_t* p_o = <int32_t*> data_or_null(offsets)
    cdef uint8_t* p_d = <uint8_t*> data_or_null(data)
    cdef int64_t* p_s = <int64_t*> cnp.PyArray_DATA(<cnp.ndarray> span)
    with nogil:
        rows = gpuclass_csv_split(p_t, n, pos, width, p_slot, k, limit, room, p_o, p_d, cap, p_s, &end)
    columns = []
    for j in range(k):  # exact copies: the room each column had is let go
        o = offsets[j, :rows + 1]
        columns.append((o.copy(), data[j, :o[rows]].copy()))
    return int(rows), int(end), columns

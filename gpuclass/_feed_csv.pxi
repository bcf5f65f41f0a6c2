# A listing's CSV lines, included into gpuclass/_feed.pyx: audit/results/listing.py's
# ReportBatch.csv_lines, the lines the csv module writes, a record's in one allocation.
# Needs only the Python API (no JSON syntax of _feed_syntax.pxi).

from cpython.list cimport PyList_Append
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_XDECREF
from libc.stdint cimport uint64_t
from libc.string cimport memcpy

cdef extern from "Python.h":
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    Py_UCS4 PyUnicode_MAX_CHAR_VALUE(object o)
    void PyUnicode_WRITE(int kind, void* data, Py_ssize_t i, Py_UCS4 c) nogil
    bint PyLong_CheckExact(object o)
    bint PyFloat_CheckExact(object o)
    bint PyBool_Check(object o)
    bint PyUnicode_CheckExact(object o)
    bint PyTuple_CheckExact(object o)
    bint PyDict_CheckExact(object o)
    object PyObject_Str(object o)
    double PyFloat_AS_DOUBLE(object o)
    PyObject* PyDict_GetItemWithError(object d, object key) except? NULL

cdef enum:
    LINE_CELLS = 8       # row, source, server, the shared cells, then the passthrough four
    FLOAT_SLOTS = 1024   # float texts kept (a power of two)


# A listing's prices repeat: the text of a float is kept by its bits (the same bits, the
# same text) in a small table, sparing most of the shortest-repr conversions.
cdef uint64_t float_bits[FLOAT_SLOTS]
cdef PyObject* float_texts[FLOAT_SLOTS]


cdef object float_text(object value):
    cdef double d = PyFloat_AS_DOUBLE(value)
    cdef uint64_t bits
    cdef Py_ssize_t k
    cdef PyObject* old
    cdef object out
    memcpy(&bits, &d, 8)
    k = <Py_ssize_t>(((bits * <uint64_t>0x9E3779B97F4A7C15ULL) >> 40) & (FLOAT_SLOTS - 1))
    old = float_texts[k]
    if old != NULL and float_bits[k] == bits:
        return <object>old
    out = PyObject_Str(value)
    old = float_texts[k]
    Py_INCREF(out)
    float_texts[k] = <PyObject*>out
    float_bits[k] = bits
    Py_XDECREF(old)
    return out


cdef inline object cell_text(object value):
    """``value`` as an f-string writes it (None as nothing); None where it is of another
    type than str, int, float or bool (the csv module then writes the line)."""
    if value is None:
        return ""
    if PyUnicode_CheckExact(value):
        return value
    if PyFloat_CheckExact(value):
        return float_text(value)
    if PyLong_CheckExact(value) or PyBool_Check(value):
        return PyObject_Str(value)
    return None


cdef bint plain_cell(str s):
    """Whether the csv module writes ``s`` as it is: no comma, quote or line break in it."""
    cdef int kind = PyUnicode_KIND(s)
    cdef void* data = PyUnicode_DATA(s)
    cdef Py_ssize_t k
    cdef Py_UCS4 c
    for k in range(PyUnicode_GET_LENGTH(s)):
        c = PyUnicode_READ(kind, data, k)
        if c == 0x2C or c == 0x22 or c == 0x0D or c == 0x0A:
            return False
    return True


cdef object shared_line(tuple entry, tuple keys):
    """The line of ``(row, source, server, outcome, record)``, or None (see csv_lines)."""
    cdef object row, source, server, outcome, rec, value, shared
    cdef list cells = [None] * LINE_CELLS
    cdef PyObject* found
    cdef Py_ssize_t size = LINE_CELLS, pos = 0, k, j, n
    cdef Py_UCS4 widest = 0x7F
    cdef int kind
    cdef void* data
    row, source, server, outcome, rec = entry
    if server is None:
        server = ""
    if not (PyLong_CheckExact(row) and PyUnicode_CheckExact(source) and PyUnicode_CheckExact(server)):
        return None
    if not (plain_cell(source) and plain_cell(server)):
        return None
    cells[0] = PyObject_Str(row)
    cells[1] = source
    cells[2] = server
    for k in range(4):
        if PyDict_CheckExact(rec):
            found = PyDict_GetItemWithError(rec, keys[k])
            value = <object>found if found != NULL else None
        else:
            value = rec.get(keys[k])
        value = cell_text(value)
        if value is None or not plain_cell(value):
            return None
        cells[4 + k] = value
    shared = outcome.cells()  # SharedOutcome's public, cached cells
    if not PyUnicode_CheckExact(shared):
        return None
    cells[3] = shared
    for k in range(LINE_CELLS):
        size += PyUnicode_GET_LENGTH(cells[k])
        widest = max(widest, PyUnicode_MAX_CHAR_VALUE(cells[k]))
    line = PyUnicode_New(size, widest)
    kind = PyUnicode_KIND(line)
    data = PyUnicode_DATA(line)
    for k in range(LINE_CELLS):
        value = cells[k]
        n = PyUnicode_GET_LENGTH(value)
        if PyUnicode_KIND(value) == kind:
            memcpy(<char*>data + pos * kind, PyUnicode_DATA(value), n * kind)
        else:
            for j in range(n):
                PyUnicode_WRITE(kind, data, pos + j, PyUnicode_READ(PyUnicode_KIND(value), PyUnicode_DATA(value), j))
        pos += n
        PyUnicode_WRITE(kind, data, pos, 0x2C if k < LINE_CELLS - 1 else 0x0A)
        pos += 1
    return line


def csv_lines(list entries, tuple keys):
    """Each entry's CSV line (``\\n`` ended), as :meth:`ReportBatch.csv_lines
    <gpuclass.audit.results.listing.ReportBatch.csv_lines>` asks for it: for ``(row,
    source, server, outcome, record)``, the row, source and server, the outcome's shared
    ``cells()`` and the record's ``keys`` (the passthrough fields); None for anything
    else, or where a cell of the record's own is not plain text or a number, or would need
    quoting (the csv module then writes that line)."""
    cdef list out = []
    cdef object e
    if len(keys) != 4:
        raise ValueError("csv_lines: four passthrough keys")
    for e in entries:
        if PyTuple_CheckExact(e) and len(<tuple>e) == 5:
            PyList_Append(out, shared_line(<tuple>e, keys))
        else:
            PyList_Append(out, None)
    return out


# The auction feed's record scanner: a compiled fast path under audit/readers.iter_feed.
# No numpy here (the listing path starts without it).  Compiler directives: setup.py.
"""Auction-feed records read straight from the decoded text, only the fields asked for.

``scan_records(buf, pos, keys)`` reads the records of a feed's list that start at
``pos`` (a ``{``) and returns ``(records, end)``: one dict per record holding only
the ``keys`` present in it, decoded exactly as :mod:`json` decodes them, and the
position of the next record's ``{`` (or of the ``]`` that closes the list).

It takes a record only when it is sure of it: the whole record is valid JSON
(validated as strictly as :mod:`json`, however deep), every asked-for field is a
string, a number, ``true``/``false``/``null`` or a list of strings, and the record
is followed by ``,`` and the next record's ``{`` or by the list's ``]``.  Anything else (a nested value in an asked-for field, ``NaN``, a key
spelled with escapes, damage, a record cut off by the end of ``buf``) stops the scan
before that record, for the caller's record-by-record decoder: a damaged record is
still reported by the one reader that explains damage.

Short strings repeat from record to record (the same CPU, disks, card): the scanner
keeps the last few thousand it made (at most 96 characters each) and hands the same
object out again for the same text.

>>> scan_records('{"id": 1, "x": [{"a": null}], "description": ["GTX 1080"]}, {"id": 2}]', 0, ("id", "description"))
([{'id': 1, 'description': ['GTX 1080']}, {'id': 2}], 69)
>>> scan_records('{"id": "RTX\\\\u2122"}, {"id": {"x": 1}}]', 0, ("id",))
([{'id': 'RTX™'}], 21)
"""

import sys

from cpython.unicode cimport PyUnicode_Check
from cpython.dict cimport PyDict_SetItem
from cpython.list cimport PyList_Append

from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_XDECREF
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcmp, memcpy, memset

cdef extern from *:
    """
    #define gpuclass_ctz64(x) __builtin_ctzll(x)
    """
    int ctz64 "gpuclass_ctz64"(uint64_t x) nogil

cdef extern from "Python.h":
    int PyUnicode_4BYTE_KIND
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)
    int PyUnicode_KIND(object o)
    void* PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    Py_UCS4 PyUnicode_READ(int kind, void* data, Py_ssize_t i) nogil
    object PyUnicode_Substring(object s, Py_ssize_t start, Py_ssize_t end)
    object PyFloat_FromString(object s)
    object PyLong_FromLongLong(long long v)

IS_COMPILED = True

cdef enum:
    MAX_DEPTH = 512      # nesting deeper than this is left to the record decoder
    MAX_INT_DIGITS = 18  # an integer literal this long or shorter fits a long long
    MAX_KEYS = 32
    BY_LENGTH = 64       # key lengths looked up in a table (longer ones: compared in turn)
    SEEN_SLOTS = 4096    # strings kept for reuse (a power of two)
    SEEN_LONGEST = 96    # the longest string kept
    # where a value's end would be: what it was instead
    V_BAD = -1           # not a shape this scanner decodes (or not valid JSON)
    V_END = -2           # the text ended inside it


include "_feed_syntax.pxi"


cdef struct KeyTable:
    Py_ssize_t lengths[MAX_KEYS]        # each asked-for key's length
    uint64_t by_length[BY_LENGTH]       # for each length below BY_LENGTH, its keys as bits


cdef int key_index(const uchar_t* t, Py_ssize_t start, Py_ssize_t end, list keys, const KeyTable* table):
    """Which of ``keys`` the key text ``start:end`` (no escapes) is, or -1."""
    cdef Py_ssize_t size = end - start, k
    cdef int j
    cdef uint64_t candidates
    cdef object key
    if size < BY_LENGTH:
        candidates = table.by_length[size]
    else:
        candidates = 0
        for j in range(len(keys)):
            if table.lengths[j] == size:
                candidates |= (<uint64_t>1) << j
    while candidates:
        j = <int>ctz64(candidates)
        candidates &= candidates - 1
        key = keys[j]
        if uchar_t is uint8_t:
            if PyUnicode_KIND(key) == 1:
                if memcmp(PyUnicode_DATA(key), t + start, size) == 0:
                    return j
                continue
        for k in range(size):
            if PyUnicode_READ(PyUnicode_KIND(key), PyUnicode_DATA(key), k) != t[start + k]:
                break
        else:
            return j
    return -1


cdef inline Py_UCS4 hex4(const uchar_t* t, Py_ssize_t i) nogil:
    """The four hex digits of a ``\\u`` escape at ``i`` (validated by string_end)."""
    return <Py_UCS4>((gpuclass_hex_digit(t[i]) << 12) | (gpuclass_hex_digit(t[i + 1]) << 8)
                     | (gpuclass_hex_digit(t[i + 2]) << 4) | gpuclass_hex_digit(t[i + 3]))


cdef object unescape(const uchar_t* t, Py_ssize_t i, Py_ssize_t e):
    """The string between ``i`` and ``e`` (its closing quote; escapes already validated by
    string_end) decoded as json decodes it: a ``\\u`` high surrogate joins a ``\\u`` low
    one that follows it, and any other surrogate stays as it is."""
    cdef Py_UCS4* out = <Py_UCS4*>malloc((e - i + 1) * sizeof(Py_UCS4))
    cdef Py_ssize_t n = 0
    cdef unsigned int c, lo
    if out == NULL:
        raise MemoryError()
    try:
        while i < e:
            c = <unsigned int>t[i]
            i += 1
            if c == 0x5C:
                c = <unsigned int>t[i]
                i += 1
                if c == 0x75:
                    c = <unsigned int>hex4(t, i)
                    i += 4
                    if 0xD800 <= c <= 0xDBFF and i + 6 <= e and t[i] == 0x5C and t[i + 1] == 0x75:
                        lo = <unsigned int>hex4(t, i + 2)
                        if 0xDC00 <= lo <= 0xDFFF:
                            c = 0x10000 + (((c - 0xD800) << 10) | (lo - 0xDC00))
                            i += 6
                elif c == 0x62:
                    c = 0x08
                elif c == 0x66:
                    c = 0x0C
                elif c == 0x6E:
                    c = 0x0A
                elif c == 0x72:
                    c = 0x0D
                elif c == 0x74:
                    c = 0x09
                # else: " \\ / stand for themselves
            out[n] = <Py_UCS4>c
            n += 1
        return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, n)
    finally:
        free(out)


# Listings repeat their lines (the same CPU, disks, card) record after record: short
# strings are kept in a small table and handed out again, one object per distinct text
# (fewer allocations, and a string's hash is computed once).  Only ever used with the GIL.
cdef PyObject* seen_strings[SEEN_SLOTS]


cdef extern from *:
    """
    #define GPUCLASS_FNV_PRIME 1099511628211ULL
    #define GPUCLASS_FNV_BASIS 14695981039346656037ULL
    """
    const uint64_t FNV_PRIME "GPUCLASS_FNV_PRIME"
    const uint64_t FNV_BASIS "GPUCLASS_FNV_BASIS"


cdef inline Py_ssize_t seen_slot(const uchar_t* t, Py_ssize_t i, Py_ssize_t size) nogil:
    """The table slot of the text ``t[i:i + size]``: a multiplicative hash of its code
    units, eight at a time where they are bytes."""
    cdef uint64_t h = FNV_BASIS ^ <uint64_t>size, w
    cdef Py_ssize_t k = 0
    if uchar_t is uint8_t:
        while k + 8 <= size:
            memcpy(&w, t + i + k, 8)
            h = (h ^ w) * FNV_PRIME
            h ^= h >> 29
            k += 8
        w = 0
        memcpy(&w, t + i + k, size - k)
        h = (h ^ w) * FNV_PRIME
    else:
        for k in range(size):
            h = (h ^ <uint64_t>t[i + k]) * FNV_PRIME
    return <Py_ssize_t>((h >> 40) & (SEEN_SLOTS - 1))


cdef object plain_string(object buf, const uchar_t* t, Py_ssize_t i, Py_ssize_t e):
    """``buf[i:e]`` (no escapes in it), from the table where the same text is there."""
    cdef Py_ssize_t size = e - i, k
    cdef PyObject* old
    cdef object out
    if size > SEEN_LONGEST:
        return PyUnicode_Substring(buf, i, e)
    k = seen_slot(t, i, size)
    old = seen_strings[k]
    if old != NULL and same_text(<object>old, t, i, size):
        return <object>old
    out = PyUnicode_Substring(buf, i, e)
    old = seen_strings[k]   # again: making the string may have run other code
    Py_INCREF(out)
    seen_strings[k] = <PyObject*>out
    Py_XDECREF(old)
    return out


cdef bint same_text(object s, const uchar_t* t, Py_ssize_t i, Py_ssize_t size):
    cdef int kind = PyUnicode_KIND(s)
    cdef void* data = PyUnicode_DATA(s)
    cdef Py_ssize_t k
    if PyUnicode_GET_LENGTH(s) != size:
        return False
    if uchar_t is uint8_t:
        if kind == 1:
            return memcmp(data, t + i, size) == 0
    for k in range(size):
        if PyUnicode_READ(kind, data, k) != t[i + k]:
            return False
    return True


cdef object scalar(object buf, const uchar_t* t, Py_ssize_t n, Py_ssize_t i, Py_ssize_t* end):
    """The string, number or literal at ``i`` as json decodes it; ``end[0]`` is set to
    the index after it, or to V_BAD / V_END (and None returned)."""
    cdef bint flag = False
    cdef Py_ssize_t e, k
    cdef long long v
    cdef Py_UCS4 c = t[i]
    if c == 0x22:
        e = string_end(t, n, i + 1, &flag)
        end[0] = e
        if e < 0:
            return None
        if flag:
            return unescape(t, i + 1, e - 1)
        return plain_string(buf, t, i + 1, e - 1)
    if c == 0x2D or is_digit(c):
        e = number_end(t, n, i, &flag)
        end[0] = e
        if e < 0:
            return None
        if flag:
            return PyFloat_FromString(PyUnicode_Substring(buf, i, e))
        k = i + 1 if c == 0x2D else i
        if e - k > MAX_INT_DIGITS:
            end[0] = V_BAD
            return None
        v = 0
        while k < e:
            v = v * 10 + (<long long>t[k] - 0x30)
            k += 1
        return PyLong_FromLongLong(-v if c == 0x2D else v)
    e = literal_end(t, n, i)
    end[0] = e
    if e < 0:
        return None
    return True if c == 0x74 else (False if c == 0x66 else None)


cdef object field_value(object buf, const uchar_t* t, Py_ssize_t n, Py_ssize_t i, Py_ssize_t* end):
    """An asked-for field's value: a scalar, or a list of strings."""
    cdef list out
    cdef object item
    cdef bint closed = False
    if t[i] != 0x5B:
        if t[i] == 0x7B:
            end[0] = V_BAD
            return None
        return scalar(buf, t, n, i, end)
    out = []
    i = first_item(t, n, i, 0x5D, &closed)
    while not closed:
        if i >= n or t[i] != 0x22:
            end[0] = V_END if i >= n else V_BAD
            return None
        item = scalar(buf, t, n, i, end)
        if end[0] < 0:
            return None
        PyList_Append(out, item)
        i = next_item(t, n, end[0], 0x5D, &closed)
        if i < 0:
            end[0] = i
            return None
    end[0] = i
    return out


cdef object record(object buf, const uchar_t* t, Py_ssize_t n, Py_ssize_t i, list keys, const KeyTable* table,
                   Py_ssize_t* end):
    """The record (an object) at ``i`` with only the asked-for fields, or None with
    ``end[0]`` set to V_BAD / V_END."""
    cdef dict out = {}
    cdef Py_ssize_t ks, ke, e
    cdef bint escaped, closed = False
    cdef int j
    cdef object value
    i = first_item(t, n, i, 0x7D, &closed)
    while not closed:
        escaped = False
        ks = i + 1   # the key's text, once object_key has found it a string
        i = object_key(t, n, i, &ke, &escaped)
        if i >= 0 and escaped:   # a key spelled with escapes may still be an asked-for one
            i = V_BAD
        if i >= 0:
            i = skip_ws(t, n, i)
            if i >= n:
                i = V_END
        if i < 0:
            end[0] = i
            return None
        j = key_index(t, ks, ke, keys, table)
        if j >= 0:
            value = field_value(buf, t, n, i, &e)
            if e < 0:
                end[0] = e
                return None
            PyDict_SetItem(out, keys[j], value)   # a repeated key: the last one wins, as in json
        else:
            e = value_end(t, n, i)
            if e < 0:
                end[0] = e
                return None
        i = next_item(t, n, e, 0x7D, &closed)
        if i < 0:
            end[0] = i
            return None
    end[0] = i
    return out


def scan_records(str buf, Py_ssize_t pos, keys, Py_ssize_t limit=-1):
    """The records from ``pos`` that are sure (see the module docstring), at most ``limit``
    of them (any number where negative): ``(records, end)``."""
    cdef list key_list = [k for k in keys]
    cdef KeyTable table
    cdef Py_ssize_t i, n = PyUnicode_GET_LENGTH(buf)
    cdef int kind = PyUnicode_KIND(buf)
    cdef void* data = PyUnicode_DATA(buf)
    if len(key_list) > MAX_KEYS:
        raise ValueError(f"scan_records: at most {MAX_KEYS} keys")
    memset(table.by_length, 0, sizeof(table.by_length))
    for i in range(len(key_list)):
        if not PyUnicode_Check(key_list[i]):
            raise TypeError("scan_records: keys must be str")
        table.lengths[i] = PyUnicode_GET_LENGTH(key_list[i])
        if table.lengths[i] < BY_LENGTH:
            table.by_length[table.lengths[i]] |= (<uint64_t>1) << i
    if pos < 0 or pos > n:
        raise IndexError("scan_records: pos out of range")
    global int_digits_limit
    int_digits_limit = sys.get_int_max_str_digits()
    if kind == 1:
        return records(buf, <const uint8_t*>data, n, pos, key_list, &table, limit)
    if kind == 2:
        return records(buf, <const uint16_t*>data, n, pos, key_list, &table, limit)
    return records(buf, <const uint32_t*>data, n, pos, key_list, &table, limit)


cdef tuple records(object buf, const uchar_t* t, Py_ssize_t n, Py_ssize_t i, list keys,
                   const KeyTable* table, Py_ssize_t limit):
    cdef list out = []
    cdef object rec
    cdef Py_ssize_t e, nxt
    while i < n and t[i] == 0x7B and len(out) != limit:
        rec = record(buf, t, n, i, keys, table, &e)
        if e < 0:
            break
        # what follows must be the next record or the end of the list
        nxt = skip_ws(t, n, e)
        if nxt >= n:
            break
        if t[nxt] == 0x5D:
            out.append(rec)
            i = nxt
            break
        if t[nxt] != 0x2C:
            break
        nxt = skip_ws(t, n, nxt + 1)
        if nxt >= n or t[nxt] != 0x7B:
            break
        out.append(rec)
        i = nxt
    return out, i


# a listing's CSV lines (ReportBatch.csv_lines' compiled maker)
include "_feed_csv.pxi"

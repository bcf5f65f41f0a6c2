# The compiled core.  Compiler directives are set in one place, setup.py
# (GPUCLASS_CYTHON_DEBUG=1 turns bounds and wraparound checks back on).
"""The native core: pci.ids tokenizer and hashed key lookups.

Its pure-Python twin is ``gpuclass._core_py``; both expose the same names with
the same signatures, results and exception types.

>>> import numpy as np
>>> idx = KeyIndex(np.array([3, 7, 9], dtype=np.uint32))
>>> idx.lookup(np.array([7, 8, 3], dtype=np.uint32)).tolist()
[1, -1, 0]
"""

import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int32_t, int64_t
from libc.string cimport memcpy, memchr
from libc.stdlib cimport calloc, free

from . import _pciids as P
from ._keycheck import as_key_array, check_sorted_keys

cnp.import_array()

IS_COMPILED = True

# Error and field codes mirror gpuclass._pciids (checked at import below).
cdef enum:
    E_BAD_HEX = 1
    E_WIDTH = 2
    E_NO_NAME = 3
    E_TABS = 4
    E_DEVICE_FIRST = 5
    E_SUBSYS_FIRST = 6
    E_PROGIF_OUTSIDE = 7
    E_UTF8 = 9
    E_TOO_LONG = 10
    E_NUL = 11
    E_GENSUB_VENDOR = 12
    E_GENSUB_HEADER = 13
    E_GENSUB_NEST = 14
    E_IN_SKIPPED = 15

cdef enum:
    F_NONE = 0
    F_VENDOR = 1
    F_DEVICE = 2
    F_SUBVENDOR = 3
    F_SUBDEVICE = 4
    F_GSVENDOR = 5
    F_GSDEVICE = 6
    F_CLASS = 7
    F_SUBCLASS = 8
    F_PROGIF = 9

cdef enum:
    K_VENDOR = 0
    K_DEVICE = 1
    K_SUBSYS = 2
    K_GENSUB = 3
    K_CLASS = 4
    K_SUBCLASS = 5
    K_PROGIF = 6

cdef enum:
    TOP_NONE = 0
    TOP_VENDOR = 1
    TOP_CLASS = 2
    TOP_GENSUB = 3
    TOP_UNKNOWN = 4
    TOP_BAD = 5
    L1_NONE = 0
    L1_OK = 1
    L1_BAD = 2

assert (P.E_BAD_HEX, P.E_WIDTH, P.E_NO_NAME, P.E_TABS, P.E_UTF8, P.E_IN_SKIPPED) == (1, 2, 3, 4, 9, 15)
assert (P.F_VENDOR, P.F_PROGIF, P.K_PROGIF, P.MAX_LINE) == (1, 9, 6, 1022)


cdef struct ScanOut:
    uint64_t* keys[7]
    uint32_t* entries[7]
    Py_ssize_t counts[7]
    uint32_t* lines
    uint32_t* name_start
    uint32_t* name_end
    Py_ssize_t n_entries
    uint32_t* err_line
    uint8_t* err_code
    uint8_t* err_field
    uint64_t* err_start
    Py_ssize_t n_errors


cdef extern from *:
    """
    /* Hex digit values, -1 for every other byte. */
    static const signed char gpuclass_hex[256] = {
        -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1, -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
        -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,  0, 1, 2, 3, 4, 5, 6, 7, 8, 9,-1,-1,-1,-1,-1,-1,
        -1,10,11,12,13,14,15,-1,-1,-1,-1,-1,-1,-1,-1,-1, -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
        -1,10,11,12,13,14,15,-1,-1,-1,-1,-1,-1,-1,-1,-1, -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
        -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1, -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
        -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1, -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
        -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1, -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
        -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1, -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
    };

    /* Offset of the first newline in s[0:n], or n: eight bytes at a time (a
       line of pci.ids is ~40 bytes, where a libc memchr call costs more in
       setup than in scanning). */
    static inline Py_ssize_t gpuclass_line_end(const unsigned char *s, Py_ssize_t n, int *high) {
        /* Also reports whether the line may hold a non-ASCII byte (a byte with
           the high bit set before the newline, or in the word that holds it),
           so that only such lines need a UTF-8 check. */
        const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
        const uint64_t nl = 0x0a0a0a0a0a0a0a0aULL;
        uint64_t seen = 0;
        Py_ssize_t i = 0;
        while (i + 8 <= n) {
            uint64_t w, x;
            memcpy(&w, s + i, 8);
            seen |= w;
            x = w ^ nl;
            uint64_t hit = (x - ones) & ~x & highs;
            if (hit) {
    #if PY_LITTLE_ENDIAN
                *high = (seen & highs) != 0;
                return i + (__builtin_ctzll(hit) >> 3);
    #else
                break;
    #endif
            }
            i += 8;
        }
        while (i < n && s[i] != 10) { seen |= s[i]; i++; }
        *high = (seen & highs) != 0;
        return i;
    }
    """
    const signed char* gpuclass_hex
    Py_ssize_t gpuclass_line_end(const uint8_t* s, Py_ssize_t n, int* high) noexcept nogil


cdef inline int hexval(uint8_t c) noexcept nogil:
    return gpuclass_hex[c]


cdef inline bint is_white(uint8_t c) noexcept nogil:
    return c == 32 or c == 9


cdef inline int64_t parse_hex(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos, int width) noexcept nogil:
    """Value of width hex digits at pos, or a negative error code."""
    cdef int64_t value = 0
    cdef int d
    cdef Py_ssize_t i
    for i in range(pos, pos + width):
        if i >= n:
            return -E_WIDTH
        d = hexval(s[i])
        if d < 0:
            return -E_WIDTH if is_white(s[i]) else -E_BAD_HEX
        value = value * 16 + d
    return value


cdef inline int64_t id_then_white(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos, int width) noexcept nogil:
    """An ID that must be followed by whitespace: its value, or a negative error code."""
    cdef int64_t value = parse_hex(s, n, pos, width)
    if value < 0:
        return value
    if pos + width >= n:
        return -E_NO_NAME
    cdef uint8_t c = s[pos + width]
    if is_white(c):
        return value
    return -E_WIDTH if hexval(c) >= 0 else -E_BAD_HEX


cdef inline bint valid_utf8(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """Strict UTF-8 as Python decodes it: no overlongs, surrogates or values past U+10FFFF."""
    cdef Py_ssize_t i = 0
    cdef uint8_t c, c1
    cdef uint64_t word
    while i < n:
        # ASCII fast path, eight bytes at a time.
        while i + 8 <= n:
            memcpy(&word, s + i, 8)
            if word & <uint64_t> 0x8080808080808080ULL:
                break
            i += 8
        if i >= n:
            break
        c = s[i]
        if c < 0x80:
            i += 1
            continue
        if c >= 0xC2 and c <= 0xDF:
            if i + 1 >= n or (s[i + 1] & 0xC0) != 0x80:
                return False
            i += 2
            continue
        if c >= 0xE0 and c <= 0xEF:
            if i + 2 >= n:
                return False
            c1 = s[i + 1]
            if c == 0xE0 and (c1 < 0xA0 or c1 > 0xBF):
                return False
            if c == 0xED and (c1 < 0x80 or c1 > 0x9F):
                return False
            if (c1 & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80:
                return False
            i += 3
            continue
        if c >= 0xF0 and c <= 0xF4:
            if i + 3 >= n:
                return False
            c1 = s[i + 1]
            if c == 0xF0 and (c1 < 0x90 or c1 > 0xBF):
                return False
            if c == 0xF4 and (c1 < 0x80 or c1 > 0x8F):
                return False
            if (c1 & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80 or (s[i + 3] & 0xC0) != 0x80:
                return False
            i += 4
            continue
        return False
    return True


cdef inline int name_start(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos, Py_ssize_t* out,
                           bint check_utf8) noexcept nogil:
    while pos < n and is_white(s[pos]):
        pos += 1
    out[0] = pos
    if pos >= n:
        return E_NO_NAME
    if check_utf8 and not valid_utf8(s + pos, n - pos):
        return E_UTF8
    return 0


cdef void scan_kernel(const uint8_t* data, Py_ssize_t total, bint strict, ScanOut* o) noexcept nogil:
    cdef Py_ssize_t pos = 0, end, start, n, i, nest, name_at = 0
    cdef const uint8_t* nl
    cdef const uint8_t* s
    cdef uint32_t lineno = 0
    cdef int top = TOP_NONE, l1 = L1_NONE
    cdef uint64_t vendor = 0, device = 0, cls = 0, subclass = 0, gsvendor = 0
    cdef int64_t value, sv, sd
    cdef int kind, code, field
    cdef uint64_t key = 0
    cdef uint8_t* seen_vendor = <uint8_t*> calloc(65536, 1)
    # One vectorized pass each over the whole buffer spares a per-line search
    # in the usual file, which has neither carriage returns nor NUL bytes.
    cdef bint has_cr = memchr(data, 13, total) != NULL
    cdef bint has_nul = memchr(data, 0, total) != NULL
    cdef int high = 0
    cdef bint check_utf8 = False
    o.n_entries = 0
    o.n_errors = 0
    while pos < total:
        end = pos + gpuclass_line_end(data + pos, total - pos, &high)
        check_utf8 = high != 0
        lineno += 1
        start = pos
        pos = end + 1
        s = data + start
        n = end - start
        kind = -1
        code = 0
        field = F_NONE
        if n > 1022:
            code = E_TOO_LONG
        elif has_nul and n and memchr(s, 0, n) != NULL:
            code = E_NUL
        if code == 0:
            if has_cr:
                nl = <const uint8_t*> memchr(s, 13, n)
                if nl != NULL:
                    n = nl - s
            if n and is_white(s[n - 1]):
                n -= 1
            i = 0
            while i < n and is_white(s[i]):
                i += 1
            if i >= n or s[i] == 35:
                continue
            nest = 0
            while nest < n and s[nest] == 9:
                nest += 1
            if nest == 0:
                l1 = L1_NONE
                if n > 1 and s[0] == 67 and s[1] == 32:  # 'C '
                    field = F_CLASS
                    value = id_then_white(s, n, 2, 2)
                    if value < 0:
                        code = <int> -value
                    else:
                        code = name_start(s, n, 5, &name_at, check_utf8)
                    if code:
                        top = TOP_BAD
                    else:
                        top = TOP_CLASS
                        cls = <uint64_t> value
                        kind = K_CLASS
                        key = cls
                elif n > 1 and s[0] == 83 and s[1] == 32:  # 'S '
                    field = F_GSVENDOR
                    value = parse_hex(s, n, 2, 4)
                    if value < 0:
                        code = <int> -value
                    elif n != 6:
                        code = E_GENSUB_HEADER
                        field = F_NONE
                    elif not seen_vendor[value]:
                        code = E_GENSUB_VENDOR
                    if code:
                        top = TOP_BAD
                    else:
                        top = TOP_GENSUB
                        gsvendor = <uint64_t> value
                        continue
                elif n > 1 and s[0] >= 65 and s[0] <= 90 and s[1] == 32:
                    top = TOP_UNKNOWN
                    continue
                else:
                    field = F_VENDOR
                    value = id_then_white(s, n, 0, 4)
                    if value < 0:
                        code = <int> -value
                    else:
                        code = name_start(s, n, 5, &name_at, check_utf8)
                    if code:
                        top = TOP_BAD
                    else:
                        top = TOP_VENDOR
                        vendor = <uint64_t> value
                        seen_vendor[value] = 1
                        kind = K_VENDOR
                        key = vendor
            elif top == TOP_UNKNOWN:
                continue
            elif nest >= 3:
                code = E_TABS
            elif nest == 1:
                if top == TOP_NONE:
                    code = E_DEVICE_FIRST
                elif top == TOP_BAD:
                    code = E_IN_SKIPPED
                elif top == TOP_VENDOR:
                    field = F_DEVICE
                    value = id_then_white(s, n, 1, 4)
                    if value < 0:
                        code = <int> -value
                    else:
                        code = name_start(s, n, 6, &name_at, check_utf8)
                    if code:
                        l1 = L1_BAD
                    else:
                        l1 = L1_OK
                        device = <uint64_t> value
                        kind = K_DEVICE
                        key = (vendor << 16) | device
                elif top == TOP_CLASS:
                    field = F_SUBCLASS
                    value = id_then_white(s, n, 1, 2)
                    if value < 0:
                        code = <int> -value
                    else:
                        code = name_start(s, n, 4, &name_at, check_utf8)
                    if code:
                        l1 = L1_BAD
                    else:
                        l1 = L1_OK
                        subclass = <uint64_t> value
                        kind = K_SUBCLASS
                        key = (cls << 8) | subclass
                else:
                    field = F_GSDEVICE
                    value = id_then_white(s, n, 1, 4)
                    if value < 0:
                        code = <int> -value
                    else:
                        code = name_start(s, n, 6, &name_at, check_utf8)
                    if code == 0:
                        kind = K_GENSUB
                        key = (gsvendor << 16) | <uint64_t> value
            else:
                if top == TOP_NONE:
                    code = E_SUBSYS_FIRST
                elif top == TOP_BAD or l1 == L1_BAD:
                    code = E_IN_SKIPPED
                elif top == TOP_VENDOR:
                    if l1 == L1_NONE:
                        code = E_SUBSYS_FIRST
                    else:
                        field = F_SUBVENDOR
                        sv = id_then_white(s, n, 2, 4)
                        if sv < 0:
                            code = <int> -sv
                        else:
                            field = F_SUBDEVICE
                            sd = id_then_white(s, n, 7, 4)
                            if sd < 0:
                                code = <int> -sd
                            else:
                                code = name_start(s, n, 12, &name_at, check_utf8)
                        if code == 0:
                            kind = K_SUBSYS
                            key = (vendor << 48) | (device << 32) | (<uint64_t> sv << 16) | <uint64_t> sd
                elif top == TOP_CLASS:
                    if l1 == L1_NONE:
                        code = E_PROGIF_OUTSIDE
                    else:
                        field = F_PROGIF
                        value = id_then_white(s, n, 2, 2)
                        if value < 0:
                            code = <int> -value
                        else:
                            code = name_start(s, n, 5, &name_at, check_utf8)
                        if code == 0:
                            kind = K_PROGIF
                            key = (cls << 16) | (subclass << 8) | <uint64_t> value
                else:
                    code = E_GENSUB_NEST
        if code:
            o.err_line[o.n_errors] = lineno
            o.err_code[o.n_errors] = <uint8_t> code
            o.err_field[o.n_errors] = <uint8_t> field
            o.err_start[o.n_errors] = <uint64_t> start
            o.n_errors += 1
            if strict:
                break
            continue
        o.keys[kind][o.counts[kind]] = key
        o.entries[kind][o.counts[kind]] = <uint32_t> o.n_entries
        o.counts[kind] += 1
        o.lines[o.n_entries] = lineno
        # Names stay where they are in the input: (start, end) offsets, no copy.
        o.name_start[o.n_entries] = <uint32_t> (start + name_at)
        o.name_end[o.n_entries] = <uint32_t> (start + n)
        o.n_entries += 1
    free(seen_vendor)


def scan_pci_ids(data, strict=True):
    """Tokenize pci.ids text into a flat entry stream (see ``_pciids.finish_parse``)."""
    cdef const uint8_t[::1] buf = memoryview(bytes(data)).cast("B")
    cdef Py_ssize_t total = buf.shape[0]
    if total > 0xFFFFFFFF:
        raise P.too_large(total)
    cdef const uint8_t* p = &buf[0] if total else NULL
    # Upper bounds from the byte count, so that no line-counting pass is needed:
    # an entry line takes at least 7 bytes ("0000 x" and its newline), a
    # skipped line at least 2.  Pages are touched only as far as they are filled.
    cdef Py_ssize_t cap = total // 6 + 2
    cdef Py_ssize_t err_cap = 1 if strict else total // 2 + 2
    # One key buffer and one entry buffer per table, so that finishing needs no
    # regrouping pass.
    key_bufs = [np.empty(cap, dtype=np.uint64) for _ in range(7)]
    entry_bufs = [np.empty(cap, dtype=np.uint32) for _ in range(7)]
    lines = np.empty(cap, dtype=np.uint32)
    name_start = np.empty(cap, dtype=np.uint32)
    name_end = np.empty(cap, dtype=np.uint32)
    err_line = np.empty(err_cap, dtype=np.uint32)
    err_code = np.empty(err_cap, dtype=np.uint8)
    err_field = np.empty(err_cap, dtype=np.uint8)
    err_start = np.empty(err_cap, dtype=np.uint64)
    cdef uint64_t[::1] v_keys
    cdef uint32_t[::1] v_entries
    cdef uint32_t[::1] v_lines = lines
    cdef uint32_t[::1] v_name_start = name_start
    cdef uint32_t[::1] v_name_end = name_end
    cdef uint32_t[::1] v_err_line = err_line
    cdef uint8_t[::1] v_err_code = err_code
    cdef uint8_t[::1] v_err_field = err_field
    cdef uint64_t[::1] v_err_start = err_start
    cdef ScanOut o
    cdef int k
    for k in range(7):
        v_keys = key_bufs[k]
        v_entries = entry_bufs[k]
        o.keys[k] = &v_keys[0]
        o.entries[k] = &v_entries[0]
        o.counts[k] = 0
    cdef bint c_strict = bool(strict)
    o.lines = &v_lines[0]
    o.name_start = &v_name_start[0]
    o.name_end = &v_name_end[0]
    o.err_line = &v_err_line[0]
    o.err_code = &v_err_code[0]
    o.err_field = &v_err_field[0]
    o.err_start = &v_err_start[0]
    with nogil:
        if total:
            scan_kernel(p, total, c_strict, &o)
        else:
            o.n_entries = 0
            o.n_errors = 0
    n = o.n_entries
    errors = [
        (int(err_line[i]), int(err_code[i]), int(err_field[i]), int(err_start[i]))
        for i in range(o.n_errors)
    ]
    return (
        [key_bufs[k][: o.counts[k]] for k in range(7)],
        [entry_bufs[k][: o.counts[k]] for k in range(7)],
        lines[:n],
        name_start[:n],
        name_end[:n],
        errors,
    )


def parse_pci_ids(data, strict=True, filename="<pci.ids>"):
    """Parse pci.ids text into sorted key arrays and one name blob.

    Returns ``(tables, skipped)``: ``tables`` maps ``<table>_keys`` and
    ``<table>_name`` to arrays plus ``blob``, ``name_start`` and ``name_end``
    (names are slices of the input, which becomes the blob); ``skipped`` lists
    the lines lenient mode (``strict=False``) skipped.  Strict mode raises
    :class:`~gpuclass.errors.PciIdsError` at the first bad line.
    """
    data = bytes(data)
    return P.finish_parse(data, *scan_pci_ids(data, strict), strict, filename)


# ---------------------------------------------------------------------------
# Hashed exact-match index: open addressing with linear probing, sparse (see
# KeyIndex.__init__), the key stored in the slot so that a hit costs one cache
# line.  Keys that fit 32 bits use 8-byte slots, 64-bit keys (subsystems)
# 16-byte slots.  Lookups hash and prefetch a block of queries before probing
# it, so that the cache misses of independent queries overlap.

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define GPUCLASS_PREFETCH(p) __builtin_prefetch((const void *)(p), 0, 1)
    #else
    #define GPUCLASS_PREFETCH(p) ((void)(p))
    #endif
    """
    void GPUCLASS_PREFETCH(const void* p) noexcept nogil

cdef extern from *:
    """
    typedef struct { uint32_t key; int32_t pos; } gpuclass_slot32;

    /* Probe for k from its home slot h.  The first two slots are read without
       branching on their contents (a hit there is the common case at a load
       factor of 1/2), so independent queries overlap in the pipeline; longer
       runs fall back to the loop. */
    static inline int32_t gpuclass_probe32(const gpuclass_slot32 *t, uint64_t mask, uint64_t h, uint32_t k) {
        gpuclass_slot32 a = t[h], b = t[(h + 1) & mask];
        int32_t r = (b.key == k && b.pos >= 0) ? b.pos : -1;
        r = (a.key == k && a.pos >= 0) ? a.pos : r;
        if (r >= 0 || a.pos < 0 || b.pos < 0)
            return a.pos < 0 ? -1 : r;
        h = (h + 2) & mask;
        for (;;) {
            gpuclass_slot32 c = t[h];
            if (c.pos < 0) return -1;
            if (c.key == k) return c.pos;
            h = (h + 1) & mask;
        }
    }
    """
    ctypedef struct Slot32 "gpuclass_slot32":
        uint32_t key
        int32_t pos
    int32_t gpuclass_probe32(const Slot32* t, uint64_t mask, uint64_t h, uint32_t k) noexcept nogil


cdef extern from *:
    """
    /* 32-bit tables hash with a 32-bit multiply (one instruction on every
       target, and the top bits mix well for the clustered PCI ID keys). */
    static inline uint32_t gpuclass_mix32(uint32_t k, int shift32) {
        return (uint32_t)(k * 0x9E3779B1u) >> shift32;
    }

    """
    uint32_t mix32 "gpuclass_mix32"(uint32_t k, int shift32) noexcept nogil

cdef struct Slot64:
    uint64_t key
    int64_t pos


cdef inline uint64_t mix(uint64_t k, int shift) noexcept nogil:
    return (k * <uint64_t> 0x9E3779B97F4A7C15ULL) >> shift


ctypedef fused key_t:
    uint8_t
    uint16_t
    uint32_t
    uint64_t

cdef void lookup32(const Slot32* table, uint64_t mask, int shift32,
                   const key_t* q, Py_ssize_t n, int32_t* out) noexcept nogil:
    # Blocks of 16: hash and prefetch the whole block, then probe it, so that
    # the block's cache misses overlap and each hash is computed once.
    cdef Py_ssize_t base, j, m
    cdef uint64_t hh[16]
    cdef uint64_t k
    base = 0
    while base < n:
        m = n - base if n - base < 16 else 16
        for j in range(m):
            k = <uint64_t> q[base + j]
            hh[j] = mix32(<uint32_t> k, shift32)
            GPUCLASS_PREFETCH(&table[hh[j]])
        for j in range(m):
            k = <uint64_t> q[base + j]
            if key_t is uint64_t:
                if k > 0xFFFFFFFFULL:
                    out[base + j] = -1
                    continue
            out[base + j] = gpuclass_probe32(table, mask, hh[j], <uint32_t> k)
        base += m


cdef void lookup64(const Slot64* table, uint64_t mask, int shift,
                   const key_t* q, Py_ssize_t n, int32_t* out) noexcept nogil:
    cdef Py_ssize_t i
    cdef uint64_t k, h
    cdef Py_ssize_t ahead = 16
    for i in range(n):
        if i + ahead < n:
            GPUCLASS_PREFETCH(&table[mix(<uint64_t> q[i + ahead], shift)])
        k = <uint64_t> q[i]
        h = mix(k, shift)
        while True:
            if table[h].pos < 0:
                out[i] = -1
                break
            if table[h].key == k:
                out[i] = <int32_t> table[h].pos
                break
            h = (h + 1) & mask


cdef class KeyIndex:
    """Exact-match index over sorted, unique unsigned keys (``-1`` when absent)."""

    cdef public object keys
    cdef object _table
    cdef void* _slots
    cdef bint _wide
    cdef uint64_t _mask
    cdef int _shift
    cdef int _shift32

    def __init__(self, keys):
        self.keys = check_sorted_keys(keys)
        cdef Py_ssize_t n = len(self.keys)
        if n > 0x3FFFFFFF:
            raise ValueError("KeyIndex holds at most 2**30 keys")
        self._wide = n > 0 and int(self.keys[n - 1]) > 0xFFFFFFFF
        # Sparse tables: at a load factor of 1/8 (8-byte slots) or 1/4 (16-byte
        # slots) nearly every hit is in the home slot or the next one.  That
        # measured faster than denser tables that fit L2 better: the bundled
        # device table (2 MB of slots) answers in ~3.3 ns a query, against
        # ~4.5 ns at load 1/2 and ~7 ns at load 2/3.
        cdef int bits = 4
        cdef Py_ssize_t want = 4 * n if self._wide else 8 * n
        while (<Py_ssize_t> 1 << bits) < want:
            bits += 1
        cdef Py_ssize_t size = <Py_ssize_t> 1 << bits
        # A numpy buffer owns the slots: key then position, position -1 when empty.
        if self._wide:
            self._table = np.zeros(size * 2, dtype=np.int64)
        else:
            self._table = np.zeros(size * 2, dtype=np.int32)
        self._table[1::2] = -1
        self._mask = size - 1
        self._shift = 64 - bits
        self._shift32 = 32 - bits
        cdef const uint64_t[::1] k64 = np.ascontiguousarray(self.keys, dtype=np.uint64)
        cdef int64_t[::1] t64
        cdef int32_t[::1] t32
        if self._wide:
            t64 = self._table
            self._slots = <void*> &t64[0]
            with nogil:
                fill64(<Slot64*> self._slots, self._mask, self._shift, &k64[0], n)
        else:
            t32 = self._table
            self._slots = <void*> &t32[0]
            if n:
                with nogil:
                    fill32(<Slot32*> self._slots, self._mask, self._shift32, &k64[0], n)

    def __len__(self):
        return len(self.keys)

    def find(self, key):
        """Position of one key, or -1."""
        key = int(key)
        if key < 0 or key > 0xFFFFFFFFFFFFFFFF:
            return -1
        cdef uint64_t k = key
        cdef int32_t out = -1
        if self._wide:
            lookup64[uint64_t](<const Slot64*> self._slots, self._mask, self._shift, &k, 1, &out)
        else:
            lookup32[uint64_t](<const Slot32*> self._slots, self._mask, self._shift32, &k, 1, &out)
        return out

    def lookup(self, queries):
        """Positions of many keys as an int32 array, -1 where absent."""
        q = as_key_array(queries)
        if not q.flags.c_contiguous:
            q = np.ascontiguousarray(q)
        cdef Py_ssize_t n = q.shape[0]
        out = np.empty(n, dtype=np.int32)
        if n == 0:
            return out
        cdef int32_t[::1] ov = out
        cdef const uint8_t[::1] q8
        cdef const uint16_t[::1] q16
        cdef const uint32_t[::1] q32
        cdef const uint64_t[::1] q64
        if q.dtype == np.uint16:
            q16 = q
            self._run(&q16[0], n, &ov[0])
        elif q.dtype == np.uint32:
            q32 = q
            self._run(&q32[0], n, &ov[0])
        elif q.dtype == np.uint64:
            q64 = q
            self._run(&q64[0], n, &ov[0])
        else:
            q8 = q
            self._run(&q8[0], n, &ov[0])
        return out

    cdef void _run(self, const key_t* q, Py_ssize_t n, int32_t* out):
        with nogil:
            if self._wide:
                lookup64(<const Slot64*> self._slots, self._mask, self._shift, q, n, out)
            else:
                lookup32(<const Slot32*> self._slots, self._mask, self._shift32, q, n, out)


cdef void fill32(Slot32* t, uint64_t mask, int shift32, const uint64_t* keys, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef uint64_t h
    for i in range(n):
        h = mix32(<uint32_t> keys[i], shift32)
        while t[h].pos >= 0:
            h = (h + 1) & mask
        t[h].key = <uint32_t> keys[i]
        t[h].pos = <int32_t> i


cdef void fill64(Slot64* t, uint64_t mask, int shift, const uint64_t* keys, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef uint64_t h
    for i in range(n):
        h = mix(keys[i], shift)
        while t[h].pos >= 0:
            h = (h + 1) & mask
        t[h].key = keys[i]
        t[h].pos = i


# The allowlist matcher kernels live in their own include file (one module, one
# job per file); its twin is gpuclass._match_py.
include "_match.pxi"

# sysfs attribute reading helpers (twin: gpuclass._sysfs_py).
include "_sysfs.pxi"

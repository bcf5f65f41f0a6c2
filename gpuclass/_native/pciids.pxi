# The pci.ids tokenizer, included into gpuclass/_core.pyx (twin: pciids_py.py; contract:
# contract/pciids.py, whose finish_parse turns this entry stream into the tables).
#
# Two nogil passes over the bytes, the first counting and the second filling buffers of
# exactly that size (checked to agree): lines are found eight bytes at a time
# (gpuclass_line_end in include/gpuclass_pciids.h), and names are never copied: a name
# is a pair of offsets into the input.  IDs are exactly 2 or 4 hex digits at fixed
# columns, followed by a tab or space (pci.ids' own grammar, not the cell grammar of
# gpuclass.ids), their digits read through the one table (include/gpuclass_hex.h).

from gpuclass._native.contract import pciids as _PIDS

cdef enum:
    # the tokenizer's state: the kind of the last top-level and first-level line
    TOP_NONE = 0
    TOP_VENDOR = 1
    TOP_CLASS = 2
    TOP_GENSUB = 3
    TOP_UNKNOWN = 4
    TOP_BAD = 5
    L1_NONE = 0
    L1_OK = 1
    L1_BAD = 2


cdef struct ScanOut:
    bint count_only  # a first pass: count entries and errors, write nothing
    # the fill pass's room, from the count pass: it stops (overrun, at stop_line) rather
    # than write past it
    Py_ssize_t room_keys[7]
    Py_ssize_t room_entries
    Py_ssize_t room_errors
    bint overrun
    bint no_memory
    uint32_t stop_line
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
                           bint check_utf8, int* note) noexcept nogil:
    """Where the name starts, or E_NO_NAME; a name that is not UTF-8 is kept, with a note."""
    while pos < n and is_white(s[pos]):
        pos += 1
    out[0] = pos
    if pos >= n:
        return E_NO_NAME
    if check_utf8 and note[0] == 0 and not valid_utf8(s + pos, n - pos):
        note[0] = E_UTF8
    return 0


cdef void scan_kernel(const uint8_t* data, Py_ssize_t total, bint strict, ScanOut* o) noexcept nogil:
    cdef Py_ssize_t pos = 0, end, start, n, i, nest, name_at = 0
    cdef const uint8_t* nl
    cdef const uint8_t* s
    cdef uint32_t lineno = 0
    cdef int top = TOP_NONE, l1 = L1_NONE
    cdef uint64_t vendor = 0, device = 0, cls = 0, subclass = 0, gsvendor = 0
    cdef int64_t value, sv, sd
    cdef int kind, code, field, note
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
    if seen_vendor == NULL:
        o.no_memory = True
        return
    while pos < total:
        end = pos + gpuclass_line_end(data + pos, total - pos, &high)
        # libpci takes any byte in a name: only lenient mode looks, to flag names that are not UTF-8
        check_utf8 = high != 0 and not strict
        lineno += 1
        start = pos
        pos = end + 1
        s = data + start
        n = end - start
        kind = -1
        code = 0
        note = 0
        field = F_NONE
        if n > MAX_LINE:
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
                        code = name_start(s, n, 5, &name_at, check_utf8, &note)
                    if code:
                        top = TOP_BAD
                    else:
                        top = TOP_CLASS
                        cls = <uint64_t> value
                        subclass = 0  # a prog-if line straight under the class is subclass 00
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
                        code = name_start(s, n, 5, &name_at, check_utf8, &note)
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
                        code = name_start(s, n, 6, &name_at, check_utf8, &note)
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
                        code = name_start(s, n, 4, &name_at, check_utf8, &note)
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
                        code = name_start(s, n, 6, &name_at, check_utf8, &note)
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
                                code = name_start(s, n, 12, &name_at, check_utf8, &note)
                        if code == 0:
                            kind = K_SUBSYS
                            key = (vendor << 48) | (device << 32) | (<uint64_t> sv << 16) | <uint64_t> sd
                elif top == TOP_CLASS:
                    if l1 == L1_NONE:
                        note = E_PROGIF_IN_CLASS  # libpci reads it as a prog-if of subclass 00
                    field = F_PROGIF
                    value = id_then_white(s, n, 2, 2)
                    if value < 0:
                        code = <int> -value
                    else:
                        code = name_start(s, n, 5, &name_at, check_utf8, &note)
                    if code == 0:
                        kind = K_PROGIF
                        key = (cls << 16) | (subclass << 8) | <uint64_t> value
                else:
                    code = E_GENSUB_NEST
        if note and not code and not strict:
            # kept as libpci keeps it, and listed (lenient mode) as read but not as written
            if not o.count_only:
                if o.n_errors >= o.room_errors:
                    o.overrun = True
                    o.stop_line = lineno
                    break
                o.err_line[o.n_errors] = lineno
                o.err_code[o.n_errors] = <uint8_t> note
                o.err_field[o.n_errors] = <uint8_t> field
                o.err_start[o.n_errors] = <uint64_t> start
            o.n_errors += 1
        if code:
            if not o.count_only:
                if o.n_errors >= o.room_errors:
                    o.overrun = True
                    o.stop_line = lineno
                    break
                o.err_line[o.n_errors] = lineno
                o.err_code[o.n_errors] = <uint8_t> code
                o.err_field[o.n_errors] = <uint8_t> field
                o.err_start[o.n_errors] = <uint64_t> start
            o.n_errors += 1
            if strict:
                break
            continue
        if not o.count_only:
            if o.counts[kind] >= o.room_keys[kind] or o.n_entries >= o.room_entries:
                o.overrun = True
                o.stop_line = lineno
                break
            o.keys[kind][o.counts[kind]] = key
            o.entries[kind][o.counts[kind]] = <uint32_t> o.n_entries
            o.lines[o.n_entries] = lineno
            # Names stay where they are in the input: (start, end) offsets, no copy.
            o.name_start[o.n_entries] = <uint32_t> (start + name_at)
            o.name_end[o.n_entries] = <uint32_t> (start + n)
        o.counts[kind] += 1
        o.n_entries += 1
    free(seen_vendor)


cdef void run_pass(const uint8_t* p, Py_ssize_t total, bint strict, ScanOut* o) noexcept nogil:
    cdef int k
    for k in range(7):
        o.counts[k] = 0
    o.overrun = False
    o.no_memory = False
    o.stop_line = 0
    if total:
        scan_kernel(p, total, strict, o)
    else:
        o.n_entries = 0
        o.n_errors = 0


cdef tuple pass_counts(ScanOut* o):
    return tuple([o.counts[k] for k in range(7)]), o.n_entries, o.n_errors


def scan_pci_ids(data, strict=True):
    """Tokenize pci.ids text into a flat entry stream (see ``_pciids.finish_parse``)."""
    cdef const uint8_t[::1] buf = memoryview(bytes(data)).cast("B")
    cdef Py_ssize_t total = buf.shape[0]
    if total > 0xFFFFFFFF:
        raise _PIDS.too_large(total)
    cdef const uint8_t* p = &buf[0] if total else NULL
    cdef ScanOut o
    cdef int k
    cdef bint c_strict = bool(strict)
    # First pass: count the entries of each kind and the errors, so that every buffer
    # is made exactly as large as it will be filled: reserving from the byte count
    # cost 16 bytes of memory per byte of input.
    o.count_only = True
    with nogil:
        run_pass(p, total, c_strict, &o)
    if o.no_memory:
        raise MemoryError("scan_pci_ids: no memory")
    counted = pass_counts(&o)
    counts, n_entries, n_errors = counted
    key_bufs = [np.empty(max(c, 1), dtype=np.uint64) for c in counts]
    entry_bufs = [np.empty(max(c, 1), dtype=np.uint32) for c in counts]
    lines = np.empty(max(n_entries, 1), dtype=np.uint32)
    name_start = np.empty(max(n_entries, 1), dtype=np.uint32)
    name_end = np.empty(max(n_entries, 1), dtype=np.uint32)
    err_line = np.empty(max(n_errors, 1), dtype=np.uint32)
    err_code = np.empty(max(n_errors, 1), dtype=np.uint8)
    err_field = np.empty(max(n_errors, 1), dtype=np.uint8)
    err_start = np.empty(max(n_errors, 1), dtype=np.uint64)
    cdef uint64_t[::1] v_keys
    cdef uint32_t[::1] v_entries
    cdef uint32_t[::1] v_lines = lines
    cdef uint32_t[::1] v_name_start = name_start
    cdef uint32_t[::1] v_name_end = name_end
    cdef uint32_t[::1] v_err_line = err_line
    cdef uint8_t[::1] v_err_code = err_code
    cdef uint8_t[::1] v_err_field = err_field
    cdef uint64_t[::1] v_err_start = err_start
    cut = int(_PIDS.FILL_ROOM_CUT)  # 0 but in the test of this check
    for k in range(7):
        v_keys = key_bufs[k]
        v_entries = entry_bufs[k]
        o.keys[k] = &v_keys[0]
        o.entries[k] = &v_entries[0]
        o.room_keys[k] = max(counts[k] - cut, 0)
    o.room_entries = max(n_entries - cut, 0)
    o.room_errors = max(n_errors - cut, 0)
    o.count_only = False
    o.lines = &v_lines[0]
    o.name_start = &v_name_start[0]
    o.name_end = &v_name_end[0]
    o.err_line = &v_err_line[0]
    o.err_code = &v_err_code[0]
    o.err_field = &v_err_field[0]
    o.err_start = &v_err_start[0]
    # Second pass: the same scan, writing; it must find what the first counted.
    with nogil:
        run_pass(p, total, c_strict, &o)
    if o.no_memory:
        raise MemoryError("scan_pci_ids: no memory")
    filled = pass_counts(&o)
    if o.overrun or filled != counted:
        raise _PIDS.passes_disagree(counted, filled, o.stop_line if o.overrun else None)
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
    """Parse pci.ids text into sorted key arrays and one name blob (see the contract)."""
    return _PIDS.parse_pci_ids(scan_pci_ids, data, strict, filename)

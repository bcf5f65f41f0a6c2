# JSON syntax for the feed scanner (gpuclass/_feed.pyx, which includes this file): where
# each value, key and item ends, validated as strictly as json reads it and decoded not at
# all.  Every function takes the str's code units (one width per PEP 393 kind) and no GIL.


# the code units of a str, by its kind (PEP 393): each function comes in the three widths
ctypedef fused uchar_t:
    uint8_t
    uint16_t
    uint32_t


cdef inline Py_ssize_t skip_ws(const uchar_t* t, Py_ssize_t n, Py_ssize_t i) nogil:
    cdef Py_UCS4 c
    while i < n:
        c = t[i]
        if c != 0x20 and c != 0x0A and c != 0x0D and c != 0x09:
            return i
        i += 1
    return i


# The one table of hex digits (gpuclass/_native/include/gpuclass_hex.h); a backslash-u escape's
# grammar is JSON's own: exactly four digits.
cdef extern from "gpuclass_hex.h":
    int gpuclass_hex_digit(unsigned int c) nogil


cdef inline bint is_hex(Py_UCS4 c) nogil:
    return gpuclass_hex_digit(c) >= 0


# Eight one-byte code units at a time: whether any of them is a quote, a backslash or a
# control character (the only ones a string's scan stops at).
cdef extern from *:
    """
    #define GPUCLASS_LOW_BITS 0x0101010101010101ULL
    #define GPUCLASS_HIGH_BITS 0x8080808080808080ULL
    /* the place in its word of the first flagged byte (the lowest set high bit: exact, as a
       borrow only runs from a flagged byte to the ones after it); 0 where the first byte in
       memory is not the word's lowest (then the bytes are read one by one from there) */
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    #define GPUCLASS_FIRST_FLAGGED(m) (__builtin_ctzll(m) >> 3)
    #else
    #define GPUCLASS_FIRST_FLAGGED(m) 0
    #endif
    """
    const uint64_t LOW_BITS "GPUCLASS_LOW_BITS"
    const uint64_t HIGH_BITS "GPUCLASS_HIGH_BITS"
    int first_flagged "GPUCLASS_FIRST_FLAGGED"(uint64_t m) nogil


cdef inline uint64_t flagged_bytes(uint64_t w) nogil:
    """The high bit of each byte of ``w`` that may be a quote, a backslash or a control
    character: none where none is, and the first flagged one is one."""
    cdef uint64_t q = w ^ (LOW_BITS * 0x22), b = w ^ (LOW_BITS * 0x5C)
    # a byte equal to zero in q or b, or below 0x20 in w, sets its high bit: exact for the
    # word as a whole (a borrow only runs on from a byte that is itself zero or low)
    return (((q - LOW_BITS) & ~q) | ((b - LOW_BITS) & ~b) | ((w - LOW_BITS * 0x20) & ~w)) & HIGH_BITS


cdef Py_ssize_t string_end(const uchar_t* t, Py_ssize_t n, Py_ssize_t i, bint* escaped) nogil:
    """``i`` after an opening quote: the index after the closing one, V_BAD or V_END."""
    cdef Py_UCS4 c
    cdef int k
    cdef uint64_t w, m
    while i < n:
        if uchar_t is uint8_t:
            while i + 8 <= n:
                memcpy(&w, t + i, 8)
                m = flagged_bytes(w)
                if m:
                    i += first_flagged(m)
                    break
                i += 8
            if i >= n:
                break
        c = t[i]
        if c == 0x22:       # "
            return i + 1
        if c < 0x20:        # json (strict) takes no control character inside a string
            return V_BAD
        if c == 0x5C:       # backslash
            escaped[0] = True
            i += 1
            if i >= n:
                return V_END
            c = t[i]
            if c == 0x75:   # u: four hex digits
                for k in range(1, 5):
                    if i + k >= n:
                        return V_END
                    if not is_hex(t[i + k]):
                        return V_BAD
                i += 4
            elif not (c == 0x22 or c == 0x5C or c == 0x2F or c == 0x62 or c == 0x66
                      or c == 0x6E or c == 0x72 or c == 0x74):
                return V_BAD
        i += 1
    return V_END


cdef inline bint is_digit(Py_UCS4 c) nogil:
    return 0x30 <= c <= 0x39


# Python's limit on the digits of an integer it converts (sys.get_int_max_str_digits(),
# 0: none), read at each scan: json fails on a longer integer, so the scanner leaves one
# to it, wherever it stands in a record.
cdef Py_ssize_t int_digits_limit = 4300


cdef Py_ssize_t number_end(const uchar_t* t, Py_ssize_t n, Py_ssize_t i, bint* is_float) nogil:
    """The index after the number at ``i``, V_BAD or V_END (a number must be followed by
    a delimiter: json's own reading would stop early and then fail on what follows)."""
    cdef Py_ssize_t first
    cdef bint whole = True
    if i < n and t[i] == 0x2D:  # -
        i += 1
    if i >= n:
        return V_END
    first = i
    if t[i] == 0x30:
        i += 1
    elif is_digit(t[i]):
        while i < n and is_digit(t[i]):
            i += 1
    else:
        return V_BAD    # -Infinity, or not a number
    if i < n and t[i] == 0x2E:  # .
        is_float[0] = True
        whole = False
        i += 1
        if i < n and not is_digit(t[i]):
            return V_BAD
        while i < n and is_digit(t[i]):
            i += 1
    if i < n and (t[i] == 0x65 or t[i] == 0x45):  # e E
        is_float[0] = True
        whole = False
        i += 1
        if i < n and (t[i] == 0x2B or t[i] == 0x2D):
            i += 1
        if i < n and not is_digit(t[i]):
            return V_BAD
        while i < n and is_digit(t[i]):
            i += 1
    if i >= n:
        return V_END
    if whole and int_digits_limit > 0 and i - first > int_digits_limit:
        return V_BAD
    cdef Py_UCS4 c = t[i]
    if c == 0x20 or c == 0x0A or c == 0x0D or c == 0x09 or c == 0x2C or c == 0x5D or c == 0x7D:
        return i
    return V_BAD


cdef Py_ssize_t literal_end(const uchar_t* t, Py_ssize_t n, Py_ssize_t i) nogil:
    """The index after ``true``, ``false`` or ``null`` at ``i``, V_BAD or V_END."""
    cdef const char* word
    cdef Py_UCS4 c = t[i]
    if c == 0x74:
        word = b"true"
    elif c == 0x66:
        word = b"false"
    elif c == 0x6E:
        word = b"null"
    else:
        return V_BAD
    cdef Py_ssize_t k = 0
    while word[k] != 0:
        if i + k >= n:
            return V_END
        if t[i + k] != <Py_UCS4>word[k]:
            return V_BAD
        k += 1
    return i + k


cdef Py_ssize_t value_end(const uchar_t* t, Py_ssize_t n, Py_ssize_t i) nogil:
    """The index after the JSON value at ``i`` (validated, not decoded), V_BAD or V_END."""
    cdef char stack[MAX_DEPTH]
    cdef int depth = 0
    cdef Py_UCS4 c
    cdef bint dummy = False
    cdef Py_ssize_t key_end
    cdef bint want_value = True   # a value comes next (else a ',' or a closing bracket)
    while True:
        i = skip_ws(t, n, i)
        if i >= n:
            return V_END
        c = t[i]
        if want_value:
            if c == 0x7B or c == 0x5B:      # { [
                if depth == MAX_DEPTH:
                    return V_BAD
                stack[depth] = <char>c
                depth += 1
                i = skip_ws(t, n, i + 1)
                if i >= n:
                    return V_END
                if t[i] == (0x7D if c == 0x7B else 0x5D):  # empty
                    depth -= 1
                    i += 1
                    want_value = False
                elif c == 0x7B:
                    i = object_key(t, n, i, &key_end, &dummy)
                    if i < 0:
                        return i
                continue
            if c == 0x22:
                i = string_end(t, n, i + 1, &dummy)
            elif c == 0x2D or is_digit(c):
                i = number_end(t, n, i, &dummy)
            else:
                i = literal_end(t, n, i)
            if i < 0:
                return i
            want_value = False
        else:
            if depth == 0:
                return i
            if c == 0x2C:                   # ,
                i += 1
                if stack[depth - 1] == 0x7B:
                    i = object_key(t, n, skip_ws(t, n, i), &key_end, &dummy)
                    if i < 0:
                        return i
                want_value = True
            elif (c == 0x7D and stack[depth - 1] == 0x7B) or (c == 0x5D and stack[depth - 1] == 0x5B):
                depth -= 1
                i += 1
            else:
                return V_BAD
        if depth == 0 and not want_value:
            return i


cdef Py_ssize_t object_key(const uchar_t* t, Py_ssize_t n, Py_ssize_t i, Py_ssize_t* key_end,
                           bint* escaped) nogil:
    """``i`` at an object's key: the index after its ``:``, V_BAD or V_END; ``key_end[0]``
    is where the key's text ends (its closing quote), ``escaped[0]`` set where it has an
    escape."""
    if i >= n:
        return V_END
    if t[i] != 0x22:
        return V_BAD
    i = string_end(t, n, i + 1, escaped)
    if i < 0:
        return i
    key_end[0] = i - 1
    i = skip_ws(t, n, i)
    if i >= n:
        return V_END
    if t[i] != 0x3A:
        return V_BAD
    return i + 1


cdef Py_ssize_t first_item(const uchar_t* t, Py_ssize_t n, Py_ssize_t i, Py_UCS4 close,
                           bint* closed) nogil:
    """``i`` at a list's or an object's opening bracket: the index of its first item, or
    (``closed[0]`` set: it is empty) the index after its closing bracket."""
    i = skip_ws(t, n, i + 1)
    closed[0] = i < n and t[i] == close
    return i + 1 if closed[0] else i


cdef Py_ssize_t next_item(const uchar_t* t, Py_ssize_t n, Py_ssize_t i, Py_UCS4 close,
                          bint* closed) nogil:
    """After an item of a list or an object (``close``: its closing bracket): the index of
    the next item, or (``closed[0]`` set) the index after the bracket; V_BAD or V_END."""
    i = skip_ws(t, n, i)
    if i >= n:
        return V_END
    if t[i] == close:
        closed[0] = True
        return i + 1
    closed[0] = False
    if t[i] != 0x2C:
        return V_BAD
    return skip_ws(t, n, i + 1)

# KeyIndex, included into gpuclass/_core.pyx (twin: keyindex_py.py; contract:
# contract/args.py checks the keys and queries of both).
#
# Hashed exact-match index: open addressing with linear probing, sparse (see
# KeyIndex.__init__), the key stored in the slot so that a hit costs one cache
# line.  Keys that fit 32 bits use 8-byte slots, 64-bit keys (subsystems)
# 16-byte slots.  Lookups hash and prefetch a block of queries before probing
# it, so that the cache misses of independent queries overlap.


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

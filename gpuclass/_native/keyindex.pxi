# KeyIndex, included into gpuclass/_core.pyx (twin: keyindex_py.py; contract:
# contract/args.py checks the keys and queries of both).
#
# Hashed exact-match index: open addressing with linear probing, sparse (see
# KeyIndex.__init__), the key stored in the slot so that a hit costs one cache
# line.  Keys that fit 32 bits use 8-byte slots, 64-bit keys (subsystems)
# 16-byte slots.  Lookups hash and prefetch a block of queries before probing
# it, so that the cache misses of independent queries overlap.
#
# The keys come from a pci.ids anyone may write, so the hash is keyed with seeds
# drawn per index (include/gpuclass_keyindex.h): no one can choose keys that
# collide.  The build also checks the longest run of occupied slots, which
# bounds every probe, and draws new seeds when it is too long; after a few
# tries the index answers by binary search over the sorted keys instead.

from os import urandom as os_urandom


cdef struct Slot64:
    uint64_t key
    int64_t pos


ctypedef fused key_t:
    uint8_t
    uint16_t
    uint32_t
    uint64_t

cdef void lookup32(const Slot32* table, uint64_t mask, int shift, uint64_t s0, uint64_t s1,
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
            hh[j] = keyed_hash(k, s0, s1) >> shift
            GPUCLASS_PREFETCH(&table[hh[j]])
        for j in range(m):
            k = <uint64_t> q[base + j]
            if key_t is uint64_t:
                if k > 0xFFFFFFFFULL:
                    out[base + j] = -1
                    continue
            out[base + j] = gpuclass_probe32(table, mask, hh[j], <uint32_t> k)
        base += m


cdef void lookup64(const Slot64* table, uint64_t mask, int shift, uint64_t s0, uint64_t s1,
                   const key_t* q, Py_ssize_t n, int32_t* out) noexcept nogil:
    cdef Py_ssize_t base, j, m
    cdef uint64_t hh[16]
    cdef uint64_t k, h
    base = 0
    while base < n:
        m = n - base if n - base < 16 else 16
        for j in range(m):
            hh[j] = keyed_hash(<uint64_t> q[base + j], s0, s1) >> shift
            GPUCLASS_PREFETCH(&table[hh[j]])
        for j in range(m):
            k = <uint64_t> q[base + j]
            h = hh[j]
            while True:
                if table[h].pos < 0:
                    out[base + j] = -1
                    break
                if table[h].key == k:
                    out[base + j] = <int32_t> table[h].pos
                    break
                h = (h + 1) & mask
        base += m


cdef void lookup_sorted(const uint64_t* keys, Py_ssize_t nk, const key_t* q, Py_ssize_t n,
                        int32_t* out) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        out[i] = gpuclass_bsearch(keys, nk, <uint64_t> q[i])


cdef class KeyIndex:
    """Exact-match index over sorted, unique unsigned keys (``-1`` when absent).

    ``strategy`` is ``"hash"`` (a table keyed with random seeds) or ``"search"``
    (binary search, where no seeds gave short enough probe runs); ``max_run``
    bounds the longest run of occupied slots the table may have (for tests).
    """

    cdef public object keys
    cdef object _table
    cdef object _keys64
    cdef void* _slots
    cdef bint _wide
    cdef bint _search
    cdef uint64_t _mask
    cdef int _shift
    cdef uint64_t _s0
    cdef uint64_t _s1

    def __init__(self, keys, *, max_run=None):
        self.keys = check_sorted_keys(keys)
        cdef Py_ssize_t n = len(self.keys)
        if n > 0x3FFFFFFF:
            raise ValueError("KeyIndex holds at most 2**30 keys")
        cdef Py_ssize_t limit = MAX_RUN if max_run is None else int(max_run)
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
        self._table = np.zeros(size * 2, dtype=np.int64 if self._wide else np.int32)
        self._mask = size - 1
        self._shift = 64 - bits
        self._keys64 = np.ascontiguousarray(self.keys, dtype=np.uint64)
        cdef const uint64_t[::1] k64 = self._keys64
        cdef int64_t[::1] t64
        cdef int32_t[::1] t32
        if self._wide:
            t64 = self._table
            self._slots = <void*> &t64[0]
        else:
            t32 = self._table
            self._slots = <void*> &t32[0]
        cdef Py_ssize_t run = 0
        self._search = False
        for _ in range(4):
            seeds = os_urandom(16)
            self._s0 = int.from_bytes(seeds[:8], "little")
            self._s1 = int.from_bytes(seeds[8:], "little") | 1
            self._table[1::2] = -1
            if n == 0:
                return
            with nogil:
                if self._wide:
                    run = fill64(<Slot64*> self._slots, self._mask, self._shift, self._s0, self._s1,
                                 &k64[0], n, limit)
                else:
                    run = fill32(<Slot32*> self._slots, self._mask, self._shift, self._s0, self._s1,
                                 &k64[0], n, limit)
            if run <= limit:
                return
        # No seeds gave short runs: binary search is slower but bounded, whatever the keys.
        self._search = True
        self._table = None
        self._slots = NULL

    @property
    def strategy(self):
        """``"hash"`` or ``"search"`` (see the class docstring)."""
        return "search" if self._search else "hash"

    def __len__(self):
        return len(self.keys)

    def find(self, key):
        """Position of one key, or -1."""
        key = int(key)
        if key < 0 or key > 0xFFFFFFFFFFFFFFFF:
            return -1
        cdef uint64_t k = key
        cdef int32_t out = -1
        self._run(&k, 1, &out)
        return out

    def lookup(self, queries):
        """Positions of many keys as an int32 array, -1 where absent."""
        q = contiguous(as_key_array(queries))
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
        cdef Py_ssize_t nk = len(self.keys), i
        cdef const uint64_t[::1] k64
        cdef const uint64_t* kp = NULL
        if nk == 0:
            for i in range(n):
                out[i] = -1
            return
        if self._search:
            k64 = self._keys64
            kp = &k64[0]
            with nogil:
                lookup_sorted(kp, nk, q, n, out)
            return
        with nogil:
            if self._wide:
                lookup64(<const Slot64*> self._slots, self._mask, self._shift, self._s0, self._s1,
                         q, n, out)
            else:
                lookup32(<const Slot32*> self._slots, self._mask, self._shift, self._s0, self._s1,
                         q, n, out)


cdef Py_ssize_t longest_run(const int32_t* pos, Py_ssize_t stride, Py_ssize_t size) noexcept nogil:
    """The longest run of occupied slots, wrapping around the end (every probe stays within one)."""
    cdef Py_ssize_t i, start = 0, run = 0, best = 0
    while start < size and pos[start * stride] >= 0:
        start += 1
    if start == size:
        return size
    for i in range(1, size + 1):
        if pos[((start + i) % size) * stride] >= 0:
            run += 1
            if run > best:
                best = run
        else:
            run = 0
    return best


cdef Py_ssize_t fill32(Slot32* t, uint64_t mask, int shift, uint64_t s0, uint64_t s1,
                       const uint64_t* keys, Py_ssize_t n, Py_ssize_t limit) noexcept nogil:
    """Insert the keys; returns the longest run of occupied slots (past ``limit`` the
    fill stops early: the caller draws new seeds)."""
    cdef Py_ssize_t i, d
    cdef uint64_t h
    for i in range(n):
        h = keyed_hash(keys[i], s0, s1) >> shift
        d = 0
        while t[h].pos >= 0:
            h = (h + 1) & mask
            d += 1
            if d > limit:
                return d
        t[h].key = <uint32_t> keys[i]
        t[h].pos = <int32_t> i
    return longest_run(&t[0].pos, 2, <Py_ssize_t> mask + 1)


cdef Py_ssize_t fill64(Slot64* t, uint64_t mask, int shift, uint64_t s0, uint64_t s1,
                       const uint64_t* keys, Py_ssize_t n, Py_ssize_t limit) noexcept nogil:
    cdef Py_ssize_t i, d, best = 0, run = 0, start = 0
    cdef uint64_t h
    cdef Py_ssize_t size = <Py_ssize_t> mask + 1
    for i in range(n):
        h = keyed_hash(keys[i], s0, s1) >> shift
        d = 0
        while t[h].pos >= 0:
            h = (h + 1) & mask
            d += 1
            if d > limit:
                return d
        t[h].key = keys[i]
        t[h].pos = i
    while start < size and t[start].pos >= 0:
        start += 1
    if start == size:
        return size
    for i in range(1, size + 1):
        if t[(start + i) % size].pos >= 0:
            run += 1
            if run > best:
                best = run
        else:
            run = 0
    return best


# The allowlist matcher kernels live in their own include file (one module, one

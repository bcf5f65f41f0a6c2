# The allowlist matcher, included into gpuclass/_core.pyx through audit.pxi, which
# classifies with it (twin: match_py.py; contract: contract/match.py, whose checks both
# entry points call, so both reject the same inputs with the same errors).
#
# The def entry points check and convert their arguments through the contract,
# allocate the outputs, and run the C kernels of include/gpuclass_match.h with the
# GIL released.  Contiguous uint16/uint32 inputs reach the kernels without a copy.
#
# The per-row kernel is plain C.  Each variant is its own non-inlined function,
# so the compiler keeps the pointers in registers instead of spilling them
# around the Python wrapper's state, and the specializations (subsystem rules
# or not, a subsystem mask or not, flags or not, addresses or not) drop the work
# a call does not need.  All lookup tables live in one block ("layout" below,
# derived once per MatchTables), so one base register reaches every table at a
# constant offset.

from zlib import crc32 as zlib_crc32

from gpuclass._native.arrays cimport data_or_null
from gpuclass._native.contract import match as _MS


cdef enum:
    # Bits of the outcome index: the class and vendor LUT bits, then the row's facts.
    OI_CLASS = 0      # 2 bits: CL_GPU, CL_COMPANION
    OI_GPU_VENDOR = 2
    OI_HIT = 3
    OI_VF = 4
    OI_INVALID = 5
    KEEP_CARD = 0x80  # outcome bit: the status carries the matched card


def _outcome_table(bint guess_companions):
    """Status (plus KEEP_CARD) for each combination of the facts that decide it.

    The kernel indexes this table instead of branching, so a mix of devices in
    random order costs the same as a sorted one.
    """
    out = np.zeros(64, dtype=np.uint8)
    cdef int idx, cl, gv, hit, vf, inv, st
    for idx in range(64):
        cl = idx & 3
        gv = (idx >> OI_GPU_VENDOR) & 1
        hit = (idx >> OI_HIT) & 1
        vf = (idx >> OI_VF) & 1
        inv = (idx >> OI_INVALID) & 1
        if inv:
            st = ST_INVALID
        elif cl & CL_GPU:
            st = (ST_VIRTUAL_FUNCTION | KEEP_CARD) if vf else (ST_SUPPORTED | KEEP_CARD) if hit else (
                ST_UNSUPPORTED if gv else ST_NOT_GPU)
        elif guess_companions and (cl & CL_COMPANION) and gv and not vf:
            # No addresses: an audio/USB/UCSI function of a GPU vendor is taken for
            # a GPU card's companion, without knowing which card.
            st = ST_COMPANION
        else:
            st = ST_NOT_GPU
        out[idx] = st
    out.flags.writeable = False
    return out


def _layout(t):
    """The kernel's lookup block for MatchTables ``t`` (see the L_* offsets above).

    Derived from the checked tables; it holds the same facts rearranged so that
    a device costs two dependent loads and no branch.  One block of device entries
    per (block of dev_lut, GPU-vendor bit) that some vendor uses: the entry carries
    the vendor's GPU bit, so the kernel needs no second lookup.  The large parts are
    written by gpuclass_layout_fill (about a millisecond; numpy took ten in a new
    process).
    """
    n_cards = t.card_slices.shape[0]
    used = np.empty(65536, dtype=np.int64)
    remap = np.empty(65536, dtype=np.int32)
    cdef const uint16_t* p_vb = <const uint16_t*> data_or_null(t.vendor_block)
    cdef int64_t blocks = gpuclass_layout_pairs(p_vb, <int64_t*> data_or_null(used),
                                                <int32_t*> data_or_null(remap))
    out = np.zeros(L_DEV + 8 * 65536 * blocks, dtype=np.uint8)
    out[L_CLASS:L_CLASS + 65536] = t.class_lut & 3
    for guess, off in ((True, L_OUT_G), (False, L_OUT_S)):
        o = _outcome_table(guess)
        st = (o & 0x7F).astype(np.uint64)
        cm = np.where(o & KEEP_CARD, 0, 0xFFFF).astype(np.uint64)
        sm = np.where(st == ST_SUPPORTED, 0xFFFF, 0).astype(np.uint64)
        out[off:off + 512].view(np.uint64)[:] = st | (cm << np.uint64(16)) | (sm << np.uint64(32))
    f = np.arange(16)
    out[L_FB:L_FB + 16] = (((f & FLAG_VF) != 0) << OI_VF) | (((f & FLAG_INVALID) != 0) << OI_INVALID)
    out[L_SL:L_SL + 65536].view(np.uint16)[1:1 + n_cards] = t.card_slices
    gpuclass_layout_fill(p_vb, <const uint16_t*> data_or_null(t.dev_lut), <const int64_t*> data_or_null(used),
                         <const int32_t*> data_or_null(remap), blocks, <uint8_t*> data_or_null(out))
    out.flags.writeable = False
    return out


# The last few tables' layouts, by the tables' content (only for frozen tables, whose
# contents cannot change; see contract.match.check_tables), with a shortcut by identity:
# equal tables, however they were made or unpickled, share one layout.
_LAYOUTS = {}
_BY_ID = {}


cdef object layout_for(object t):
    """(layout, classes to look up without addresses, classes to look up with them,
    vendors whose rows may need the lookups: GPU vendors and the vendors rules name)."""
    hit = _BY_ID.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1]
    frozen = _MS.is_frozen(t)
    content = _MS.tables_content(t) if frozen else None
    key = zlib_crc32(content) if frozen else None
    hit = _LAYOUTS.get(key) if frozen else None
    if hit is not None and hit[0] == content:  # the whole content compared: never a wrong layout
        lay = hit[1]
    else:
        lay = (_layout(t), np.flatnonzero(t.class_lut & 3).tolist(),
               np.flatnonzero(t.class_lut & 1).tolist(), np.flatnonzero(t.vendor_lut).tolist())
    if frozen:
        for cache, k, v in ((_LAYOUTS, key, (content, lay)), (_BY_ID, id(t), (t, lay))):
            if len(cache) >= 8:
                cache.pop(next(iter(cache)))
            cache[k] = v
    return lay


gpuclass_match_init()


cdef Py_ssize_t count_gpus(Py_ssize_t n, const uint8_t* status) noexcept nogil:
    cdef Py_ssize_t i, k = 0
    for i in range(n):
        k += (status[i] == ST_SUPPORTED) | (status[i] == ST_UNSUPPORTED)
    return k


cdef struct SlotEntry:
    int64_t group
    uint64_t addr
    int32_t card
    int32_t used


cdef inline uint64_t slot_hash(int64_t g, uint64_t addr, int shift) noexcept nogil:
    return ((addr ^ (<uint64_t> g * <uint64_t> 0xC2B2AE3D27D4EB4FULL))
            * <uint64_t> 0x9E3779B97F4A7C15ULL) >> shift


cdef int link_companions(Py_ssize_t n, Py_ssize_t n_gpu, const int64_t* group,
                         const uint32_t* domain, const uint8_t* bus, const uint8_t* slot,
                         const uint32_t* flags, uint8_t* status, int16_t* card) noexcept nogil:
    """Mark the functions that share (group, domain, bus, slot) with a GPU; -1 when out of memory.

    The first GPU function of a slot (in row order) gives the slot its card.
    """
    cdef int bits = 3
    while (<Py_ssize_t> 1 << bits) < 2 * n_gpu:
        bits += 1
    cdef uint64_t size = <uint64_t> 1 << bits
    cdef uint64_t mask = size - 1, h, addr
    cdef int shift = 64 - bits
    cdef SlotEntry* table = <SlotEntry*> calloc(size, sizeof(SlotEntry))
    if table == NULL:
        return -1
    cdef Py_ssize_t i
    cdef int64_t g = 0
    cdef uint8_t st
    for i in range(n):
        st = status[i]
        if st != ST_SUPPORTED and st != ST_UNSUPPORTED:
            continue
        addr = (<uint64_t> domain[i] << 13) | (<uint64_t> bus[i] << 5) | slot[i]
        if group != NULL:
            g = group[i]
        h = slot_hash(g, addr, shift)
        while table[h].used and not (table[h].group == g and table[h].addr == addr):
            h = (h + 1) & mask
        if not table[h].used:
            table[h].used = 1
            table[h].group = g
            table[h].addr = addr
            table[h].card = card[i]
    for i in range(n):
        if status[i] != ST_NOT_GPU or (flags != NULL and (flags[i] & FLAG_VF)):
            continue
        addr = (<uint64_t> domain[i] << 13) | (<uint64_t> bus[i] << 5) | slot[i]
        if group != NULL:
            g = group[i]
        h = slot_hash(g, addr, shift)
        while table[h].used:
            if table[h].group == g and table[h].addr == addr:
                status[i] = ST_COMPANION
                card[i] = <int16_t> table[h].card
                break
            h = (h + 1) & mask
    free(table)
    return 0


cdef object fill_ctx(MatchCtx* ctx, object t, bint have_slots):
    """Point ``ctx`` at checked tables ``t`` and their layout; returns the layout (keep it)."""
    lay, guess_keys, slot_keys, vendor_keys = layout_for(t)
    ctx.layout = <const uint8_t*> data_or_null(lay)
    # The classes whose rows need the lookups (the kernel screens the others out
    # eight rows at a time); more than eight: every row is looked up.
    keys = slot_keys if have_slots else guess_keys
    ctx.n_keys = len(keys) if len(keys) <= 8 else -1
    cdef int j
    for j in range(min(len(keys), 8)):
        ctx.keys[j] = keys[j]
    # Likewise the vendors (a row of any other vendor is NOT_GPU unless flagged a VF);
    # more than eight: no screen by vendor.
    ctx.n_vendor_keys = len(vendor_keys) if len(vendor_keys) <= 8 else -1
    for j in range(min(len(vendor_keys), 8)):
        ctx.vendor_keys[j] = vendor_keys[j]
    ctx.dev_keys = <const uint32_t*> data_or_null(t.dev_keys)
    ctx.n_dev = t.dev_keys.shape[0]
    ctx.sub_offsets = <const int32_t*> data_or_null(t.sub_offsets)
    ctx.sub_keys = <const uint32_t*> data_or_null(t.sub_keys)
    ctx.sub_card = <const int16_t*> data_or_null(t.sub_card)
    return lay


# -- the outputs' memory, kept for the next call ----------------------------------------
#
# A large call's three outputs are new memory each time: glibc maps blocks of this size
# afresh, and the system zeroes every page at its first touch (5 of the 13 ms a 10M-row
# call took on one thread).  So the blocks of outputs that their user has let go are kept
# (up to KEPT_SLOTS blocks, KEPT_BYTES in all) for the next call to write into; a call that
# finds none of the right size lets the kept ones go before it asks for new memory, so it
# never holds them beside new outputs of its own.  Between calls the kept memory stays
# resident (at most KEPT_BYTES).  The arrays are plain, writeable numpy
# arrays over a _KeptBlock; the block goes back with the last array (or view) over it.
# Blocks are kept and taken with the GIL held (a dealloc, or match_devices itself).

from cpython.buffer cimport PyBuffer_FillInfo
from libc.stdlib cimport free as c_free

cdef enum:
    KEPT_SLOTS = 6
_KEPT_FROM_ROWS = 1 << 17  # a call with fewer rows takes numpy's memory as usual
cdef Py_ssize_t KEPT_BYTES = 128 << 20
cdef void* _kept_ptr[KEPT_SLOTS]
cdef Py_ssize_t _kept_size[KEPT_SLOTS]
cdef int _n_kept = 0
cdef Py_ssize_t _kept_total = 0


cdef void _keep(void* p, Py_ssize_t size) noexcept:
    global _n_kept, _kept_total
    if _n_kept < KEPT_SLOTS and _kept_total + size <= KEPT_BYTES:
        _kept_ptr[_n_kept] = p
        _kept_size[_n_kept] = size
        _n_kept += 1
        _kept_total += size
    else:
        c_free(p)


cdef void _let_go() noexcept:
    global _n_kept, _kept_total
    while _n_kept > 0:
        _n_kept -= 1
        c_free(_kept_ptr[_n_kept])
    _kept_total = 0


cdef class _KeptBlock:
    """The memory under one of ``match_devices``' outputs: kept for a later call when the
    last array over it goes."""
    cdef void* ptr
    cdef Py_ssize_t size

    def __getbuffer__(self, Py_buffer* view, int flags):
        PyBuffer_FillInfo(view, self, self.ptr, self.size, 0, flags)

    def __releasebuffer__(self, Py_buffer* view):
        pass

    def __dealloc__(self):
        if self.ptr != NULL:
            _keep(self.ptr, self.size)
            self.ptr = NULL


cdef object _kept_empty(Py_ssize_t n, object dtype):
    """An uninitialised array of ``n`` items of ``dtype``: a kept block of between its size
    and twice it (the smallest), else new memory once the kept blocks are let go."""
    global _n_kept, _kept_total
    cdef Py_ssize_t size = n * dtype.itemsize, got = 0
    cdef int i, best = -1
    cdef void* p = NULL
    for i in range(_n_kept):
        if size <= _kept_size[i] <= 2 * size and (best < 0 or _kept_size[i] < _kept_size[best]):
            best = i
    if best >= 0:
        p, got = _kept_ptr[best], _kept_size[best]
        _n_kept -= 1
        _kept_total -= got
        _kept_ptr[best], _kept_size[best] = _kept_ptr[_n_kept], _kept_size[_n_kept]
    else:
        _let_go()
        p = gpuclass_match_out_alloc(<size_t> size)
        got = size
        if p == NULL:
            raise MemoryError(f"match_devices: no memory for an output of {size} bytes")
    block = _KeptBlock.__new__(_KeptBlock)
    (<_KeptBlock> block).ptr = p
    (<_KeptBlock> block).size = got
    return np.frombuffer(block, dtype, n)


def _kept_blocks():
    """The sizes of the blocks kept now (for tests)."""
    return [_kept_size[i] for i in range(_n_kept)]


def match_devices(tables, vendor, device, subvendor, subdevice, class_code,
                  has_subsystem=None, flags=None, group=None, domain=None, bus=None, slot=None,
                  out=None, threads=None):
    """Status, card index and slices of each device under compiled policy ``tables``.

    Returns ``(status uint8, card int16, slices uint16)``, written into ``out`` where
    given (three arrays: threads that each classify a slice into slices of the same three
    arrays need no copy to join their answers; after an error their contents are not
    specified).  ``subvendor`` and
    ``subdevice`` may be None (no subsystem IDs); ``has_subsystem`` masks rows
    whose subsystem is unknown.  With ``domain``/``bus``/``slot`` (and
    ``group`` when the rows span several machines) a function sharing a GPU's
    slot is that card's companion; without them, audio/USB/UCSI functions of a
    GPU vendor are.  ``threads`` (None: the usable CPUs, at most four) share the rows
    out, each at least a quarter of a million (``contract.match.match_threads``); the answers
    do not depend on it.  Without ``out``, a call of 131,072 rows or more writes into
    memory kept from earlier calls' outputs once their user let go of them (plain,
    writeable numpy arrays over it, ``owndata`` False; at most 128 MiB is kept, and the next
    call of another size lets it go first), so that repeated calls do not pay for new
    pages each time.
    """
    t, a = _MS.prepare_match_args(tables, vendor, device, subvendor, subdevice, class_code,
                                  has_subsystem, flags, group, domain, bus, slot)
    cdef Py_ssize_t n = a.n
    if out is None and n >= _KEPT_FROM_ROWS:
        status, card, slices = [_kept_empty(n, d) for d in _MS.OUT_DTYPES]
    else:
        status, card, slices = _MS.prepare_match_out(out, a)
    cdef int parts = _MS.match_threads(threads, n)
    if n == 0:
        return status, card, slices
    cdef bint have_slots = a.domain is not None
    cdef MatchCtx ctx
    keep = fill_ctx(&ctx, t, have_slots)  # keeps the layout alive while the kernel runs
    cdef int sub_rules = t.sub_keys.shape[0] > 0
    cdef MatchIO io
    io.n = n
    io.vendor = <const uint16_t*> data_or_null(a.vendor)
    io.device = <const uint16_t*> data_or_null(a.device)
    io.subvendor = <const uint16_t*> data_or_null(a.subvendor)
    io.subdevice = <const uint16_t*> data_or_null(a.subdevice)
    io.has_sub = <const uint8_t*> data_or_null(a.has_subsystem)
    io.class_code = <const uint32_t*> data_or_null(a.class_code)
    io.flags = <const uint32_t*> data_or_null(a.flags)
    io.status = <uint8_t*> data_or_null(status)
    io.card = <int16_t*> data_or_null(card)
    io.slices = <uint16_t*> data_or_null(slices)
    cdef const int64_t* p_group = NULL
    cdef const uint32_t* p_domain = NULL
    cdef const uint8_t* p_bus = NULL
    cdef const uint8_t* p_slot = NULL
    if have_slots:
        p_group = <const int64_t*> data_or_null(a.group)
        p_domain = <const uint32_t*> data_or_null(a.domain)
        p_bus = <const uint8_t*> data_or_null(a.bus)
        p_slot = <const uint8_t*> data_or_null(a.slot)
    cdef Py_ssize_t bad, n_gpu = 0
    cdef int rc = 0
    with nogil:
        bad = gpuclass_match_parts(&ctx, &io, sub_rules, have_slots, parts)
        if bad < 0 and have_slots:
            n_gpu = count_gpus(n, io.status)
        if n_gpu > 0:
            rc = link_companions(n, n_gpu, p_group, p_domain, p_bus, p_slot, io.flags,
                                 io.status, io.card)
    if bad >= 0:
        raise _MS.class_range_error(a.class_code, bad)
    if rc != 0:
        raise MemoryError("match_devices: no memory for the slot table")
    return status, card, slices

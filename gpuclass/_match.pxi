# Allowlist matcher kernels, included into _core.pyx (see gpuclass._match_py for the twin).
#
# The def entry points check and convert their arguments in gpuclass._matchspec
# (shared with the twin, so both reject the same inputs with the same errors),
# allocate the outputs, and run the cdef kernels below with the GIL released.
# Contiguous uint16/uint32 inputs reach the kernels without a copy.

from libc.stdint cimport int16_t

from . import _matchspec as _MS
from ._matchspec import MatchTables, build_match_tables

cdef enum:
    ST_NOT_GPU = 0
    ST_SUPPORTED = 1
    ST_UNSUPPORTED = 2
    ST_COMPANION = 3
    ST_VF = 4
    ST_INVALID = 5
    DF_VF = 1
    DF_INVALID = 8
    LV_GPU_VENDOR = 1
    LV_RULES = 2
    LC_GPU = 1
    LC_COMPANION = 2
    RC_CARDS = 0
    RC_SLICES = 1
    RC_UNSUPPORTED = 2
    RC_COMPANIONS = 3
    RC_VFS = 4
    RC_INVALID = 5
    RC_MODEL = 6
    RC_MIXED = 7
    RC_N = 8
    MX_UNSUPPORTED = 1
    MX_MODELS = 2

assert (_MS.NOT_GPU, _MS.SUPPORTED, _MS.UNSUPPORTED, _MS.COMPANION,
        _MS.VIRTUAL_FUNCTION, _MS.INVALID) == (0, 1, 2, 3, 4, 5)
assert (_MS.FLAG_VF, _MS.FLAG_INVALID, _MS.VL_GPU_VENDOR, _MS.VL_RULES,
        _MS.CL_GPU, _MS.CL_COMPANION) == (1, 8, 1, 2, 1, 2)
assert (_MS.R_CARDS, _MS.R_SLICES, _MS.R_UNSUPPORTED, _MS.R_COMPANIONS, _MS.R_VFS,
        _MS.R_INVALID, _MS.R_MODEL, _MS.R_MIXED, _MS.ROLLUP_COLUMNS) == (0, 1, 2, 3, 4, 5, 6, 7, 8)
assert (_MS.MIXED_UNSUPPORTED, _MS.MIXED_MODELS) == (1, 2)


cdef struct MatchCtx:
    const uint8_t* class_lut
    const uint16_t* vendor_block  # bit 15: GPU vendor; bits 0-14: block of dev_lut
    const uint16_t* dev_lut       # bit 15: subsystem rules exist; bits 0-14: 1 + device card
    const uint32_t* dev_keys
    Py_ssize_t n_dev
    const int32_t* sub_offsets
    const uint32_t* sub_keys
    const int16_t* sub_card
    const uint16_t* slices        # index 0: 0, then card_slices (so card -1 reads 0)
    const uint8_t* outcome        # 64 entries: status | KEEP_CARD, see _outcome_table()


cdef int16_t sub_rule_card(const MatchCtx* t, uint32_t key, uint32_t skey, int16_t cd) noexcept nogil:
    """The subsystem rule's card for a device that has some, else the device-level ``cd``."""
    cdef Py_ssize_t lo = 0, hi = t.n_dev, mid
    cdef int32_t j, end
    while lo < hi:
        mid = (lo + hi) >> 1
        if t.dev_keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    if lo >= t.n_dev or t.dev_keys[lo] != key:
        return cd
    j = t.sub_offsets[lo]
    end = t.sub_offsets[lo + 1]
    while j < end:
        if t.sub_keys[j] == skey:
            return t.sub_card[j]
        j += 1
    return cd


cdef enum:
    # Bits of the outcome index: the class and vendor LUT bits, then the row's facts.
    OI_CLASS = 0      # 2 bits: LC_GPU, LC_COMPANION
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
        elif cl & LC_GPU:
            st = (ST_VF | KEEP_CARD) if vf else (ST_SUPPORTED | KEEP_CARD) if hit else (
                ST_UNSUPPORTED if gv else ST_NOT_GPU)
        elif guess_companions and (cl & LC_COMPANION) and gv and not vf:
            # No addresses: an audio/USB/UCSI function of a GPU vendor is taken for
            # a GPU card's companion, without knowing which card.
            st = ST_COMPANION
        else:
            st = ST_NOT_GPU
        out[idx] = st
    return out


cdef Py_ssize_t match_kernel(const MatchCtx* t, Py_ssize_t n,
                             const uint16_t* vendor, const uint16_t* device,
                             const uint16_t* subvendor, const uint16_t* subdevice,
                             const uint8_t* has_sub, const uint32_t* class_code,
                             const uint32_t* flags,
                             uint8_t* status, int16_t* card, uint16_t* slices,
                             Py_ssize_t* n_gpu) noexcept nogil:
    """One pass over the devices; the index of the first class code over 24 bits, else -1."""
    # Locals, not t->field: the uint8 stores below may alias anything, and would
    # otherwise make the compiler reload every table pointer on every row.
    cdef const uint8_t* class_lut = t.class_lut
    cdef const uint16_t* vendor_block = t.vendor_block
    cdef const uint16_t* dev_lut = t.dev_lut
    cdef const uint16_t* card_slices = t.slices
    cdef const uint8_t* outcome = t.outcome
    cdef Py_ssize_t i, gpus = 0
    cdef uint32_t c, f = 0, b
    cdef uint16_t v, d, e, sx
    cdef uint8_t o, st
    cdef int16_t cd
    cdef unsigned int idx
    for i in range(n):
        c = class_code[i]
        if c > 0xFFFFFF:
            n_gpu[0] = gpus
            return i
        v = vendor[i]
        d = device[i]
        b = vendor_block[v]
        e = dev_lut[((b & 0x7FFF) << 16) | d]
        cd = <int16_t> (e & 0x7FFF) - 1
        # Subsystem rules are rare: this branch is almost never taken.
        if (e & 0x8000) and subvendor != NULL and (has_sub == NULL or has_sub[i] != 0):
            cd = sub_rule_card(t, (<uint32_t> v << 16) | d,
                               (<uint32_t> subvendor[i] << 16) | subdevice[i], cd)
        if flags != NULL:
            f = flags[i]
        idx = (class_lut[c >> 8] & 3) | ((b >> 15) << OI_GPU_VENDOR)
        idx |= (<unsigned int> (cd >= 0) << OI_HIT) | (<unsigned int> ((f & DF_VF) != 0) << OI_VF)
        idx |= <unsigned int> ((f & DF_INVALID) != 0) << OI_INVALID
        # The matched card's slices are read before the outcome is known (index 0
        # holds 0 for "no card") and masked after: the load is off the critical path.
        sx = card_slices[cd + 1]
        o = outcome[idx]
        st = o & 0x7F
        status[i] = st
        # KEEP_CARD: the matched card; otherwise -1 (cd | -1 == -1).
        card[i] = cd | <int16_t> ((o >> 7) - 1)
        slices[i] = sx & <uint16_t> (-(<int> (st == ST_SUPPORTED)))
        gpus += (st == ST_SUPPORTED) | (st == ST_UNSUPPORTED)
    n_gpu[0] = gpus
    return -1


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
        if status[i] != ST_NOT_GPU or (flags != NULL and (flags[i] & DF_VF)):
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


cdef inline const void* ptr_or_null(object arr):
    # Arrays handed here are contiguous (checked in _matchspec); an empty one has no data.
    cdef const uint8_t[::1] view
    if arr is None or arr.shape[0] == 0:
        return NULL
    view = arr.view(np.uint8)
    return <const void*> &view[0]


def match_devices(tables, vendor, device, subvendor, subdevice, class_code,
                  has_subsystem=None, flags=None, group=None, domain=None, bus=None, slot=None):
    """Status, card index and slices of each device under compiled policy ``tables``.

    Returns ``(status uint8, card int16, slices uint16)``.  ``subvendor`` and
    ``subdevice`` may be None (no subsystem IDs); ``has_subsystem`` masks rows
    whose subsystem is unknown.  With ``domain``/``bus``/``slot`` (and
    ``group`` when the rows span several machines) a function sharing a GPU's
    slot is that card's companion; without them, audio/USB/UCSI functions of a
    GPU vendor are.
    """
    t, a = _MS.prepare_match_args(tables, vendor, device, subvendor, subdevice, class_code,
                                  has_subsystem, flags, group, domain, bus, slot)
    cdef Py_ssize_t n = a.n
    status = np.empty(n, dtype=np.uint8)
    card = np.empty(n, dtype=np.int16)
    slices = np.empty(n, dtype=np.uint16)
    if n == 0:
        return status, card, slices
    have_slots = a.domain is not None
    slices_x = np.concatenate((np.zeros(1, dtype=np.uint16), t.card_slices))
    outcome = _outcome_table(not have_slots)
    cdef MatchCtx ctx
    ctx.class_lut = <const uint8_t*> ptr_or_null(t.class_lut)
    ctx.vendor_block = <const uint16_t*> ptr_or_null(t.vendor_block)
    ctx.dev_lut = <const uint16_t*> ptr_or_null(t.dev_lut)
    ctx.dev_keys = <const uint32_t*> ptr_or_null(t.dev_keys)
    ctx.n_dev = t.dev_keys.shape[0]
    ctx.sub_offsets = <const int32_t*> ptr_or_null(t.sub_offsets)
    ctx.sub_keys = <const uint32_t*> ptr_or_null(t.sub_keys)
    ctx.sub_card = <const int16_t*> ptr_or_null(t.sub_card)
    ctx.slices = <const uint16_t*> ptr_or_null(slices_x)
    ctx.outcome = <const uint8_t*> ptr_or_null(outcome)
    cdef const uint16_t* p_vendor = <const uint16_t*> ptr_or_null(a.vendor)
    cdef const uint16_t* p_device = <const uint16_t*> ptr_or_null(a.device)
    cdef const uint16_t* p_subvendor = <const uint16_t*> ptr_or_null(a.subvendor)
    cdef const uint16_t* p_subdevice = <const uint16_t*> ptr_or_null(a.subdevice)
    cdef const uint8_t* p_has_sub = <const uint8_t*> ptr_or_null(a.has_subsystem)
    cdef const uint32_t* p_class = <const uint32_t*> ptr_or_null(a.class_code)
    cdef const uint32_t* p_flags = <const uint32_t*> ptr_or_null(a.flags)
    cdef const int64_t* p_group = <const int64_t*> ptr_or_null(a.group)
    cdef const uint32_t* p_domain = <const uint32_t*> ptr_or_null(a.domain)
    cdef const uint8_t* p_bus = <const uint8_t*> ptr_or_null(a.bus)
    cdef const uint8_t* p_slot = <const uint8_t*> ptr_or_null(a.slot)
    cdef uint8_t* p_status = <uint8_t*> ptr_or_null(status)
    cdef int16_t* p_card = <int16_t*> ptr_or_null(card)
    cdef uint16_t* p_slices = <uint16_t*> ptr_or_null(slices)
    cdef bint c_have_slots = have_slots
    cdef Py_ssize_t bad, n_gpu = 0
    cdef int rc = 0
    with nogil:
        bad = match_kernel(&ctx, n, p_vendor, p_device, p_subvendor, p_subdevice, p_has_sub,
                           p_class, p_flags, p_status, p_card, p_slices, &n_gpu)
        if bad < 0 and c_have_slots and n_gpu > 0:
            rc = link_companions(n, n_gpu, p_group, p_domain, p_bus, p_slot, p_flags,
                                 p_status, p_card)
    if bad >= 0:
        raise _MS.class_range_error(a.class_code, bad)
    if rc != 0:
        raise MemoryError("match_devices: no memory for the slot table")
    return status, card, slices


cdef Py_ssize_t rollup_kernel(Py_ssize_t n, const uint8_t* status, const int16_t* card,
                              const uint16_t* slices, const int64_t* group, int64_t n_groups,
                              int64_t* out, int* what) noexcept nogil:
    """Accumulate devices into per-group rows of RC_N int64; first bad index, else -1."""
    # Status -> the column it counts in; NOT_GPU adds 0 to the cards column.
    cdef int64_t column[6]
    cdef int64_t step[6]
    column[:] = [RC_CARDS, RC_CARDS, RC_UNSUPPORTED, RC_COMPANIONS, RC_VFS, RC_INVALID]
    step[:] = [0, 1, 1, 1, 1, 1]
    cdef Py_ssize_t i
    cdef int64_t g = 0, m, c
    cdef int64_t* row
    cdef uint8_t st
    cdef bint sup
    for i in range(n):
        st = status[i]
        if st > ST_INVALID:
            what[0] = 0
            return i
        if group != NULL:
            g = group[i]
            if g < 0 or g >= n_groups:
                what[0] = 1
                return i
        # One group's counters share a cache line, so a random group costs one miss;
        # no branch on the status, so a random mix costs no mispredictions.
        row = out + g * RC_N
        row[column[st]] += step[st]
        sup = st == ST_SUPPORTED
        row[RC_SLICES] += slices[i] * sup
        m = row[RC_MODEL]
        c = card[i]
        row[RC_MIXED] |= MX_MODELS * (sup & (m != -1) & (m != c))
        row[RC_MODEL] = c if (sup and m == -1) else m
    for g in range(n_groups):
        row = out + g * RC_N
        if row[RC_CARDS] > 0 and row[RC_UNSUPPORTED] > 0:
            row[RC_MIXED] |= MX_UNSUPPORTED
    return -1


def rollup(status, card, slices, group=None, n_groups=1):
    """Per-group totals of a classification as an ``(n_groups, 8)`` int64 matrix.

    Columns (``gpuclass._matchspec.R_*``): supported cards, slices, unsupported
    GPUs, companion functions, virtual functions, invalid records, the first
    supported card's index (-1: none) and the mixed-node bits.  Without
    ``group`` every row belongs to group 0.
    """
    n_, st, cd, sc, g, ng = _MS.prepare_rollup_args(status, card, slices, group, n_groups)
    cdef Py_ssize_t n = n_
    cdef int64_t c_ng = ng
    out = np.zeros((ng, _MS.ROLLUP_COLUMNS), dtype=np.int64)
    out[:, _MS.R_MODEL] = -1
    if ng == 0 and n == 0:
        return out
    cdef const uint8_t* p_status = <const uint8_t*> ptr_or_null(st)
    cdef const int16_t* p_card = <const int16_t*> ptr_or_null(cd)
    cdef const uint16_t* p_slices = <const uint16_t*> ptr_or_null(sc)
    cdef const int64_t* p_group = <const int64_t*> ptr_or_null(g)
    cdef int64_t* p_out = <int64_t*> ptr_or_null(out.reshape(-1))
    cdef int what = 0
    cdef Py_ssize_t bad
    with nogil:
        bad = rollup_kernel(n, p_status, p_card, p_slices, p_group, c_ng, p_out, &what)
    if bad >= 0:
        if what == 0:
            raise _MS.status_range_error(st, bad)
        raise _MS.group_range_error(g, bad, ng)
    return out

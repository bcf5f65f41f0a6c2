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


# The per-row kernel is plain C.  Each variant is its own non-inlined function,
# so the compiler keeps the pointers in registers instead of spilling them
# around the Python wrapper's state, and the specializations (subsystem rules
# or not, a subsystem mask or not, flags or not, addresses or not) drop the work
# a call does not need.  All lookup tables live in one block ("layout" below,
# derived once per MatchTables), so one base register reaches every table at a
# constant offset.
cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define GPUCLASS_NOINLINE __attribute__((noinline))
    #define GPUCLASS_ALWAYS_INLINE inline __attribute__((always_inline))
    #define GPUCLASS_UNLIKELY(x) __builtin_expect(!!(x), 0)
    #define GPUCLASS_RESTRICT __restrict__
    #else
    #define GPUCLASS_NOINLINE
    #define GPUCLASS_ALWAYS_INLINE inline
    #define GPUCLASS_UNLIKELY(x) (x)
    #define GPUCLASS_RESTRICT
    #endif

    /* Byte offsets in the layout block.
       VB    uint32[65536]  vendor -> its block of DEV, shifted left by 16
       CLASS uint8[65536]   class >> 8 -> CL_GPU | CL_COMPANION (outcome index bits 0-1)
       OUT_G uint64[64]     outcome index -> bits 0-7 status, 16-31 card mask (0: the
                            status keeps the matched card, 0xffff: card -1), 32-47 slices
                            mask (0xffff: the status keeps the card's slices); companions
                            guessed (no addresses)
       OUT_S uint64[64]     the same with addresses (companions found by slot later)
       FB    uint8[16]      flags & 15 -> outcome index bits 4 (VF) and 5 (invalid)
       SL    uint16[32768]  1 + card -> slices (entry 0: 0)
       DEV   uint64[blocks * 65536]  (VB[vendor] | device) -> entry:
             bit 2 GPU vendor, bit 3 a card matched, bit 4 subsystem rules exist,
             bits 16-31: the device-level card as int16 (-1: none or deny), 32-47: its slices */
    #define GPUCLASS_L_VB 0
    #define GPUCLASS_L_CLASS 262144
    #define GPUCLASS_L_OUT_G 327680
    #define GPUCLASS_L_OUT_S 328192
    #define GPUCLASS_L_FB 328704
    #define GPUCLASS_L_SL 328768
    #define GPUCLASS_L_DEV 394304
    #define GPUCLASS_E_GPU 4u
    #define GPUCLASS_E_HIT 8u
    #define GPUCLASS_E_SUB 16u

    typedef struct {
        const uint8_t *layout;
        const uint32_t *dev_keys;
        Py_ssize_t n_dev;
        const int32_t *sub_offsets;
        const uint32_t *sub_keys;
        const int16_t *sub_card;
        int n_keys;                   /* classes >> 8 that need the lookup; -1: too many */
        uint16_t keys[8];
    } gpuclass_match_ctx;

    typedef struct {
        Py_ssize_t n;
        const uint16_t *vendor, *device, *subvendor, *subdevice;
        const uint8_t *has_sub;       /* NULL: every row's subsystem is known */
        const uint32_t *class_code, *flags;
        uint8_t *status;
        int16_t *card;
        uint16_t *slices;
    } gpuclass_match_io;

    /* A device entry with its card replaced by the subsystem rule's, where one
       matches (rare: kept out of the loop). */
    static GPUCLASS_NOINLINE uint64_t gpuclass_sub_rule_entry(
            const gpuclass_match_ctx *t, uint32_t key, uint32_t skey, uint64_t e) {
        Py_ssize_t lo = 0, hi = t->n_dev;
        while (lo < hi) {
            Py_ssize_t mid = (lo + hi) >> 1;
            if (t->dev_keys[mid] < key) lo = mid + 1; else hi = mid;
        }
        if (lo >= t->n_dev || t->dev_keys[lo] != key) return e;
        for (int32_t j = t->sub_offsets[lo], end = t->sub_offsets[lo + 1]; j < end; j++) {
            if (t->sub_keys[j] == skey) {
                int32_t cd = t->sub_card[j];
                const uint16_t *sl = (const uint16_t *)(t->layout + GPUCLASS_L_SL);
                return (e & (GPUCLASS_E_GPU | GPUCLASS_E_SUB)) | ((uint64_t)sl[cd + 1] << 32)
                       | ((uint64_t)(uint16_t)cd << 16) | (cd >= 0 ? GPUCLASS_E_HIT : 0u);
            }
        }
        return e;
    }

    /* The status, card and slices of row i. */
    static GPUCLASS_ALWAYS_INLINE void gpuclass_match_row(
            const gpuclass_match_ctx *t, const gpuclass_match_io *io, Py_ssize_t i,
            const int sub, const int mask, const int flags, const int slots) {
        const uint8_t *L = t->layout;
        const uint32_t *vb = (const uint32_t *)(L + GPUCLASS_L_VB);
        const uint64_t *dev = (const uint64_t *)(L + GPUCLASS_L_DEV);
        const uint64_t *out = (const uint64_t *)(L + (slots ? GPUCLASS_L_OUT_S : GPUCLASS_L_OUT_G));
        uint32_t c = io->class_code[i];
        uint32_t v = io->vendor[i], d = io->device[i];
        uint64_t e = dev[vb[v] | d];
        if (sub && GPUCLASS_UNLIKELY(e & GPUCLASS_E_SUB) && (!mask || io->has_sub[i]))
            e = gpuclass_sub_rule_entry(t, v << 16 | d,
                                        (uint32_t)io->subvendor[i] << 16 | io->subdevice[i], e);
        /* the lookup reads only bits 8-23 of the class, so it stays in the table */
        uint32_t idx = L[GPUCLASS_L_CLASS + ((c >> 8) & 0xFFFFu)]
                       | ((uint32_t)e & (GPUCLASS_E_GPU | GPUCLASS_E_HIT));
        if (flags) idx |= L[GPUCLASS_L_FB + (io->flags[i] & 15u)];
        /* One load gives the status and the masks for the card (bits 16-31, or'ed:
           0xffff makes it -1) and its slices (bits 32-47, and'ed), which sit at
           the same bits of the device entry. */
        uint64_t o = out[idx];
        io->status[i] = (uint8_t)o;
        io->card[i] = (int16_t)(uint16_t)((e | o) >> 16);
        io->slices[i] = (uint16_t)((e & o) >> 32);
    }

    #if defined(__SSE2__)
    #include <emmintrin.h>
    /* For each 8-bit mask: the positions of its set bits, then their count. */
    static uint8_t gpuclass_pos8[256][8];
    static uint8_t gpuclass_cnt8[256];
    static void gpuclass_match_init(void) {
        for (int m = 0; m < 256; m++) {
            int k = 0;
            for (int r = 0; r < 8; r++)
                if ((m >> r) & 1) gpuclass_pos8[m][k++] = (uint8_t)r;
            gpuclass_cnt8[m] = (uint8_t)k;
            for (; k < 8; k++) gpuclass_pos8[m][k] = 0;
        }
    }

    /* Most rows are not of a GPU (or, without addresses, companion) class: they
       are NOT_GPU (INVALID when flagged), card -1, no slices, whatever their IDs.
       Eight rows at a time, SSE2 compares their classes with the few that
       matter, writes those default results, and gathers the other rows without
       a branch; then only those go through the lookups.  Runs per chunk of
       2048 rows, so the second pass finds the rows still in cache. */
    static GPUCLASS_ALWAYS_INLINE uint32_t gpuclass_match_screened(
            const gpuclass_match_ctx *t, const gpuclass_match_io *io,
            const int sub, const int mask, const int flags, const int slots) {
        const Py_ssize_t n = io->n;
        const uint32_t *class_code = io->class_code;
        uint16_t pick[2048 + 8];
        __m128i keys[8];
        const __m128i bias = _mm_set1_epi32(0x8000), zero = _mm_setzero_si128();
        const __m128i ones = _mm_set1_epi32(-1), one = _mm_set1_epi32(1);
        __m128i vover = zero;
        uint32_t over = 0;
        int nk = t->n_keys;
        for (int j = 0; j < 8; j++)  /* unused keys repeat the first (or match nothing) */
            keys[j] = _mm_set1_epi16((short)(nk ? (int)t->keys[j < nk ? j : 0] - 0x8000 : 0x7FFF));
        if (nk == 0) nk = 1;
        for (Py_ssize_t lo = 0; lo < n; lo += 2048) {
            const Py_ssize_t hi = n - lo < 2048 ? n : lo + 2048;
            const Py_ssize_t end8 = lo + ((hi - lo) & ~(Py_ssize_t)7);
            int k = 0;
            for (Py_ssize_t i = lo; i < end8; i += 8) {
                __m128i c0 = _mm_loadu_si128((const __m128i *)(class_code + i));
                __m128i c1 = _mm_loadu_si128((const __m128i *)(class_code + i + 4));
                vover = _mm_or_si128(vover, _mm_or_si128(c0, c1));
                /* class >> 8 less 0x8000 fits int16 exactly (when the class has 24
                   bits; otherwise the call fails anyway) */
                __m128i h = _mm_packs_epi32(_mm_sub_epi32(_mm_srli_epi32(c0, 8), bias),
                                            _mm_sub_epi32(_mm_srli_epi32(c1, 8), bias));
                __m128i m = _mm_cmpeq_epi16(h, keys[0]);
                for (int j = 1; j < nk; j++) m = _mm_or_si128(m, _mm_cmpeq_epi16(h, keys[j]));
                unsigned bits = (unsigned)_mm_movemask_epi8(_mm_packs_epi16(m, zero));
                if (flags) {
                    __m128i f0 = _mm_loadu_si128((const __m128i *)(io->flags + i));
                    __m128i f1 = _mm_loadu_si128((const __m128i *)(io->flags + i + 4));
                    __m128i inv = _mm_packs_epi32(_mm_and_si128(_mm_srli_epi32(f0, 3), one),
                                                  _mm_and_si128(_mm_srli_epi32(f1, 3), one));
                    inv = _mm_packus_epi16(inv, zero);
                    /* INVALID (5) = 4 + 1 */
                    _mm_storel_epi64((__m128i *)(io->status + i),
                                     _mm_or_si128(_mm_slli_epi16(inv, 2), inv));
                } else {
                    _mm_storel_epi64((__m128i *)(io->status + i), zero);
                }
                _mm_storeu_si128((__m128i *)(io->card + i), ones);
                _mm_storeu_si128((__m128i *)(io->slices + i), zero);
                __m128i pos = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)gpuclass_pos8[bits]), zero);
                _mm_storeu_si128((__m128i *)(pick + k),
                                 _mm_add_epi16(pos, _mm_set1_epi16((short)(i - lo))));
                k += gpuclass_cnt8[bits];
            }
            for (int q = 0; q < k; q++)
                gpuclass_match_row(t, io, lo + pick[q], sub, mask, flags, slots);
            for (Py_ssize_t i = end8; i < hi; i++) {
                over |= class_code[i];
                gpuclass_match_row(t, io, i, sub, mask, flags, slots);
            }
        }
        vover = _mm_or_si128(vover, _mm_srli_si128(vover, 8));
        vover = _mm_or_si128(vover, _mm_srli_si128(vover, 4));
        return over | (uint32_t)_mm_cvtsi128_si32(vover);
    }
    #define GPUCLASS_MATCH_SIMD 1
    #else
    static void gpuclass_match_init(void) {}
    #define GPUCLASS_MATCH_SIMD 0
    #endif

    /* One pass over the rows; -1, or the index of the first class code over 24 bits.
       sub/mask/flags/slots are constants in each variant below. */
    static GPUCLASS_ALWAYS_INLINE Py_ssize_t gpuclass_match_body(
            const gpuclass_match_ctx *t, const gpuclass_match_io *io,
            const int sub, const int mask, const int flags, const int slots) {
        const uint32_t *class_code = io->class_code;
        const Py_ssize_t n = io->n;
        uint32_t over = 0;
    #if GPUCLASS_MATCH_SIMD
        if (t->n_keys >= 0) {
            over = gpuclass_match_screened(t, io, sub, mask, flags, slots);
        } else
    #endif
        {
            for (Py_ssize_t i = 0; i < n; i++) {
                /* no branch on the class range: it is checked once, after the loop */
                over |= class_code[i];
                gpuclass_match_row(t, io, i, sub, mask, flags, slots);
            }
        }
        if (over > 0xFFFFFFu) {
            for (Py_ssize_t i = 0; i < n; i++)
                if (class_code[i] > 0xFFFFFFu) return i;
        }
        return -1;
    }

    #define GPUCLASS_MATCH_VARIANT(name, sub, mask, flags, slots) \\
        static GPUCLASS_NOINLINE Py_ssize_t name(const gpuclass_match_ctx *t, \\
                                                 const gpuclass_match_io *io) { \\
            return gpuclass_match_body(t, io, sub, mask, flags, slots); }
    GPUCLASS_MATCH_VARIANT(gpuclass_match_g, 0, 0, 0, 0)
    GPUCLASS_MATCH_VARIANT(gpuclass_match_g_f, 0, 0, 1, 0)
    GPUCLASS_MATCH_VARIANT(gpuclass_match_g_s, 1, 0, 0, 0)
    GPUCLASS_MATCH_VARIANT(gpuclass_match_g_sf, 1, 0, 1, 0)
    GPUCLASS_MATCH_VARIANT(gpuclass_match_g_sm, 1, 1, 0, 0)
    GPUCLASS_MATCH_VARIANT(gpuclass_match_g_smf, 1, 1, 1, 0)
    GPUCLASS_MATCH_VARIANT(gpuclass_match_a, 0, 0, 0, 1)
    GPUCLASS_MATCH_VARIANT(gpuclass_match_a_f, 0, 0, 1, 1)
    GPUCLASS_MATCH_VARIANT(gpuclass_match_a_s, 1, 0, 0, 1)
    GPUCLASS_MATCH_VARIANT(gpuclass_match_a_sf, 1, 0, 1, 1)
    GPUCLASS_MATCH_VARIANT(gpuclass_match_a_sm, 1, 1, 0, 1)
    GPUCLASS_MATCH_VARIANT(gpuclass_match_a_smf, 1, 1, 1, 1)

    typedef Py_ssize_t (*gpuclass_match_fn)(const gpuclass_match_ctx *, const gpuclass_match_io *);

    /* The variant for a call: subsystem work only when the policy has subsystem
       rules and the rows carry subsystem IDs; "a" when addresses are given. */
    static Py_ssize_t gpuclass_match(const gpuclass_match_ctx *t, const gpuclass_match_io *io,
                                     int sub_rules, int slots) {
        static const gpuclass_match_fn fns[2][6] = {
            {gpuclass_match_g, gpuclass_match_g_f, gpuclass_match_g_s, gpuclass_match_g_sf,
             gpuclass_match_g_sm, gpuclass_match_g_smf},
            {gpuclass_match_a, gpuclass_match_a_f, gpuclass_match_a_s, gpuclass_match_a_sf,
             gpuclass_match_a_sm, gpuclass_match_a_smf}};
        int sub = sub_rules && io->subvendor != NULL;
        int which = (io->flags != NULL) + (sub ? (io->has_sub != NULL ? 4 : 2) : 0);
        return fns[slots != 0][which](t, io);
    }
    """
    ctypedef struct MatchCtx "gpuclass_match_ctx":
        const uint8_t* layout
        int n_keys
        uint16_t keys[8]
        const uint32_t* dev_keys
        Py_ssize_t n_dev
        const int32_t* sub_offsets
        const uint32_t* sub_keys
        const int16_t* sub_card
    ctypedef struct MatchIO "gpuclass_match_io":
        Py_ssize_t n
        const uint16_t* vendor
        const uint16_t* device
        const uint16_t* subvendor
        const uint16_t* subdevice
        const uint8_t* has_sub
        const uint32_t* class_code
        const uint32_t* flags
        uint8_t* status
        int16_t* card
        uint16_t* slices
    Py_ssize_t gpuclass_match(const MatchCtx* t, const MatchIO* io, int sub_rules,
                              int slots) noexcept nogil
    void gpuclass_match_init() noexcept nogil
    enum:
        L_VB "GPUCLASS_L_VB"
        L_CLASS "GPUCLASS_L_CLASS"
        L_OUT_G "GPUCLASS_L_OUT_G"
        L_OUT_S "GPUCLASS_L_OUT_S"
        L_FB "GPUCLASS_L_FB"
        L_SL "GPUCLASS_L_SL"
        L_DEV "GPUCLASS_L_DEV"


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
    out.flags.writeable = False
    return out


def _layout(t):
    """The kernel's lookup block for MatchTables ``t`` (see the L_* offsets above).

    Derived from the checked tables; it holds the same facts rearranged so that
    a device costs two dependent loads and no branch.
    """
    n_cards = t.card_slices.shape[0]
    # One block per (block of dev_lut, GPU-vendor bit) that some vendor uses: the
    # entry carries the vendor's GPU bit, so the kernel needs no second lookup.
    pair = (t.vendor_block & 0x7FFF).astype(np.int64) * 2 + (t.vendor_block >> 15)
    used, new_block = np.unique(pair, return_inverse=True)
    blocks = used.shape[0]
    out = np.zeros(L_DEV + 8 * 65536 * blocks, dtype=np.uint8)
    vb = out[L_VB:L_CLASS].view(np.uint32)
    vb[:] = new_block.astype(np.uint32) << 16
    out[L_CLASS:L_CLASS + 65536] = t.class_lut & 3
    for guess, off in ((True, L_OUT_G), (False, L_OUT_S)):
        o = _outcome_table(guess)
        st = (o & 0x7F).astype(np.uint64)
        cm = np.where(o & KEEP_CARD, 0, 0xFFFF).astype(np.uint64)
        sm = np.where(st == ST_SUPPORTED, 0xFFFF, 0).astype(np.uint64)
        out[off:off + 512].view(np.uint64)[:] = st | (cm << np.uint64(16)) | (sm << np.uint64(32))
    f = np.arange(16)
    out[L_FB:L_FB + 16] = (((f & DF_VF) != 0) << OI_VF) | (((f & DF_INVALID) != 0) << OI_INVALID)
    sl = out[L_SL:L_SL + 65536].view(np.uint16)
    sl[1:1 + n_cards] = t.card_slices
    dev = out[L_DEV:].view(np.uint64).reshape(blocks, 65536)
    for nb, p in enumerate(used.tolist()):
        ob, g = p >> 1, p & 1
        e = t.dev_lut[ob * 65536:(ob + 1) * 65536].astype(np.uint64)
        k = e & np.uint64(0x7FFF)
        card = (k.astype(np.int64) - 1).astype(np.uint16).astype(np.uint64)  # -1: none
        dev[nb] = ((sl[k].astype(np.uint64) << np.uint64(32)) | (card << np.uint64(16))
                   | ((k != 0).astype(np.uint64) << np.uint64(3))
                   | ((e >> np.uint64(15)) << np.uint64(4)) | np.uint64(g << 2))
    out.flags.writeable = False
    return out


# The last few tables' layouts, by identity (only for frozen tables, whose
# contents cannot change; see _matchspec._check_tables).
_LAYOUTS = {}


cdef object layout_for(object t):
    """(layout, classes to look up without addresses, classes to look up with them)."""
    hit = _LAYOUTS.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1]
    lay = (_layout(t), np.flatnonzero(t.class_lut & 3).tolist(),
           np.flatnonzero(t.class_lut & 1).tolist())
    if _MS.is_frozen(t):
        if len(_LAYOUTS) >= 8:
            _LAYOUTS.pop(next(iter(_LAYOUTS)))
        _LAYOUTS[id(t)] = (t, lay)
    return lay


gpuclass_match_init()


cdef inline const void* data_or_null(object arr):
    # Arrays handed here are contiguous (checked in _matchspec); an empty one has no data.
    if arr is None or cnp.PyArray_SIZE(<cnp.ndarray> arr) == 0:
        return NULL
    return <const void*> cnp.PyArray_DATA(<cnp.ndarray> arr)


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
    cdef bint have_slots = a.domain is not None
    lay, guess_keys, slot_keys = layout_for(t)
    cdef MatchCtx ctx
    ctx.layout = <const uint8_t*> data_or_null(lay)
    # The classes whose rows need the lookups (the kernel screens the others out
    # eight rows at a time); more than eight: every row is looked up.
    keys = slot_keys if have_slots else guess_keys
    ctx.n_keys = len(keys) if len(keys) <= 8 else -1
    cdef int j
    for j in range(min(len(keys), 8)):
        ctx.keys[j] = keys[j]
    ctx.dev_keys = <const uint32_t*> data_or_null(t.dev_keys)
    ctx.n_dev = t.dev_keys.shape[0]
    ctx.sub_offsets = <const int32_t*> data_or_null(t.sub_offsets)
    ctx.sub_keys = <const uint32_t*> data_or_null(t.sub_keys)
    ctx.sub_card = <const int16_t*> data_or_null(t.sub_card)
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
        bad = gpuclass_match(&ctx, &io, sub_rules, have_slots)
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


cdef extern from *:
    """
    /* Per-group totals in one pass over the rows, a chunk at a time.  Most
       rows are not GPU functions (NOT_GPU adds nothing to any column), so a
       chunk is first checked (status and group ranges) and its other rows
       gathered without a branch; then only those rows are added to their
       group's row of `out`, with no branch on the status either. */
    #define GPUCLASS_RC_N 8
    #define GPUCLASS_ROLLUP_CHUNK 4096

    static GPUCLASS_ALWAYS_INLINE Py_ssize_t gpuclass_rollup_body(
            Py_ssize_t n, const uint8_t *GPUCLASS_RESTRICT status,
            const int16_t *GPUCLASS_RESTRICT card, const uint16_t *GPUCLASS_RESTRICT slices,
            const int64_t *GPUCLASS_RESTRICT group, int64_t n_groups,
            int64_t *GPUCLASS_RESTRICT out, int *what, const int grouped) {
        /* status -> the column it counts in (NOT_GPU never gets here) */
        static const uint8_t column[8] = {0, 0, 2, 3, 4, 5, 0, 0};
        int32_t pick[GPUCLASS_ROLLUP_CHUNK];
        for (int64_t g = 0; g < n_groups; g++) {
            int64_t *row = out + g * GPUCLASS_RC_N;
            row[0] = row[1] = row[2] = row[3] = row[4] = row[5] = row[7] = 0;
            row[6] = -1;
        }
        for (Py_ssize_t base = 0; base < n; base += GPUCLASS_ROLLUP_CHUNK) {
            Py_ssize_t m = n - base < GPUCLASS_ROLLUP_CHUNK ? n - base : GPUCLASS_ROLLUP_CHUNK;
            const uint8_t *st_c = status + base;
            const int64_t *g_c = grouped ? group + base : NULL;
            uint32_t smax = 0;
            uint64_t gmax = 0;
            Py_ssize_t k = 0;
            for (Py_ssize_t j = 0; j < m; j++) {
                uint32_t st = st_c[j];
                smax = st > smax ? st : smax;
                if (grouped) {
                    uint64_t g = (uint64_t)g_c[j];  /* a negative id is huge here */
                    gmax = g > gmax ? g : gmax;
                }
                pick[k] = (int32_t)j;
                k += st != 0;
            }
            if (GPUCLASS_UNLIKELY(smax > 5 || (grouped && gmax >= (uint64_t)n_groups))) {
                for (Py_ssize_t j = 0; j < m; j++) {
                    if (st_c[j] > 5) { *what = 0; return base + j; }
                    if (grouped && (uint64_t)g_c[j] >= (uint64_t)n_groups) { *what = 1; return base + j; }
                }
            }
            for (Py_ssize_t q = 0; q < k; q++) {
                Py_ssize_t i = base + pick[q];
                uint32_t st = status[i];
                int64_t *row = out + (grouped ? group[i] : 0) * GPUCLASS_RC_N;
                int64_t sup = st == 1, c = card[i];
                row[column[st]] += 1;
                row[1] += (int64_t)slices[i] & -sup;
                int64_t mdl = row[6];
                int64_t mixed = 2 & -(sup & (mdl != -1) & (mdl != c));  /* MIXED_MODELS */
                mixed |= (row[0] > 0) & (row[2] > 0);                   /* MIXED_UNSUPPORTED */
                row[7] |= mixed;
                row[6] = (sup & (mdl == -1)) ? c : mdl;
            }
        }
        return -1;
    }

    /* -1, or the first bad row (what: 0 a status out of range, 1 a group out of range). */
    static GPUCLASS_NOINLINE Py_ssize_t gpuclass_rollup(
            Py_ssize_t n, const uint8_t *status, const int16_t *card, const uint16_t *slices,
            const int64_t *group, int64_t n_groups, int64_t *out, int *what) {
        if (group != NULL)
            return gpuclass_rollup_body(n, status, card, slices, group, n_groups, out, what, 1);
        return gpuclass_rollup_body(n, status, card, slices, NULL, n_groups, out, what, 0);
    }
    """
    Py_ssize_t gpuclass_rollup(Py_ssize_t n, const uint8_t* status, const int16_t* card,
                               const uint16_t* slices, const int64_t* group, int64_t n_groups,
                               int64_t* out, int* what) noexcept nogil


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
    # The kernel writes every row (zeros, and -1 for the model): no np.zeros pass.
    out = np.empty((ng, _MS.ROLLUP_COLUMNS), dtype=np.int64)
    if ng == 0 and n == 0:
        return out
    cdef const uint8_t* p_status = <const uint8_t*> data_or_null(st)
    cdef const int16_t* p_card = <const int16_t*> data_or_null(cd)
    cdef const uint16_t* p_slices = <const uint16_t*> data_or_null(sc)
    cdef const int64_t* p_group = <const int64_t*> data_or_null(g)
    cdef int64_t* p_out = <int64_t*> data_or_null(out)
    cdef int what = 0
    cdef Py_ssize_t bad
    with nogil:
        bad = gpuclass_rollup(n, p_status, p_card, p_slices, p_group, c_ng, p_out, &what)
    if bad >= 0:
        if what == 0:
            raise _MS.status_range_error(st, bad)
        raise _MS.group_range_error(g, bad, ng)
    return out

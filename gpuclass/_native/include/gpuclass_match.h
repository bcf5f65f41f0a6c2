/* The allowlist matcher: plain C over one block of lookup tables.

   match.pxi derives the block from a policy's MatchTables once and calls gpuclass_match
   with the GIL released (the rollup of its results: gpuclass_rollup.h). */
#ifndef GPUCLASS_MATCH_H
#define GPUCLASS_MATCH_H

#include "gpuclass_common.h"
#include "gpuclass_codes.h"

/* The SSE2 screen writes INVALID as (flag bit 3) * 5 and everything else as 0, and
   reads the VF flag as bit 0. */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(GPUCLASS_ST_INVALID == 5 && GPUCLASS_FLAG_INVALID == 8 && GPUCLASS_ST_NOT_GPU == 0
               && GPUCLASS_FLAG_VF == 1,
               "the SIMD screen encodes these codes");
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
    int n_vendor_keys;            /* vendors that may need it (GPU vendors, vendors of
                                     rules); 0 or -1: every vendor */
    uint16_t vendor_keys[8];
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

/* The status, card and slices of row i.  t_sub is the context for the out-of-line
   subsystem lookup (t itself is a register-held local copy, see gpuclass_match_body). */
static GPUCLASS_ALWAYS_INLINE void gpuclass_match_row(
        const gpuclass_match_ctx *t, const gpuclass_match_ctx *t_sub,
        const gpuclass_match_io *io, Py_ssize_t i,
        const int sub, const int mask, const int flags, const int slots) {
    const uint8_t *L = t->layout;
    const uint32_t *vb = (const uint32_t *)(L + GPUCLASS_L_VB);
    const uint64_t *dev = (const uint64_t *)(L + GPUCLASS_L_DEV);
    const uint64_t *out = (const uint64_t *)(L + (slots ? GPUCLASS_L_OUT_S : GPUCLASS_L_OUT_G));
    uint32_t c = io->class_code[i];
    uint32_t v = io->vendor[i], d = io->device[i];
    uint64_t e = dev[vb[v] | d];
    if (sub && GPUCLASS_UNLIKELY(e & GPUCLASS_E_SUB) && (!mask || io->has_sub[i]))
        e = gpuclass_sub_rule_entry(t_sub, v << 16 | d,
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
   Neither are the rows of a vendor that is no GPU vendor and that no rule
   names, unless flagged a VF (a GPU-class VF is VIRTUAL_FUNCTION whoever made
   it).  Eight rows at a time, SSE2 compares their classes and vendors with the
   few that matter, writes those default results, and gathers the other rows
   without a branch; then only those go through the lookups.  Runs per chunk of
   2048 rows, so the second pass finds the rows still in cache. */
static GPUCLASS_ALWAYS_INLINE uint32_t gpuclass_match_screened(
        const gpuclass_match_ctx *t, const gpuclass_match_ctx *t_sub, const gpuclass_match_io *io,
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
    __m128i vkeys[8];
    const int nvk = t->n_vendor_keys;
    for (int j = 0; j < 8; j++)
        vkeys[j] = _mm_set1_epi16((short)t->vendor_keys[nvk > 0 && j < nvk ? j : 0]);
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
            __m128i f0, f1;
            if (flags) {
                f0 = _mm_loadu_si128((const __m128i *)(io->flags + i));
                f1 = _mm_loadu_si128((const __m128i *)(io->flags + i + 4));
            }
            if (nvk > 0) {
                __m128i vv = _mm_loadu_si128((const __m128i *)(io->vendor + i));
                __m128i vm = _mm_cmpeq_epi16(vv, vkeys[0]);
                for (int j = 1; j < nvk; j++) vm = _mm_or_si128(vm, _mm_cmpeq_epi16(vv, vkeys[j]));
                if (flags) {  /* a VF row: -1 in its 16 bits */
                    __m128i vf = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_and_si128(f0, one), one),
                                                 _mm_cmpeq_epi32(_mm_and_si128(f1, one), one));
                    vm = _mm_or_si128(vm, vf);
                }
                m = _mm_and_si128(m, vm);
            }
            unsigned bits = (unsigned)_mm_movemask_epi8(_mm_packs_epi16(m, zero));
#if defined(__GNUC__) || defined(__clang__)
            /* The picked rows' device IDs are read after this chunk's screen, a few
               rows per cache line: ask for their line now (without a branch: an
               unpicked group asks for its class line, already in cache). */
            __builtin_prefetch(bits ? (const void *)(io->device + i) : (const void *)(class_code + i), 0, 3);
#endif
            if (flags) {
                __m128i inv = _mm_packs_epi32(_mm_and_si128(_mm_srli_epi32(f0, 3), one),
                                              _mm_and_si128(_mm_srli_epi32(f1, 3), one));
                inv = _mm_packus_epi16(inv, zero);
                /* status INVALID (5) = 4 + 1, from the INVALID flag's bit (3) */
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
            gpuclass_match_row(t, t_sub, io, lo + pick[q], sub, mask, flags, slots);
        for (Py_ssize_t i = end8; i < hi; i++) {
            over |= class_code[i];
            gpuclass_match_row(t, t_sub, io, i, sub, mask, flags, slots);
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
        const gpuclass_match_ctx *t_arg, const gpuclass_match_io *io_arg,
        const int sub, const int mask, const int flags, const int slots) {
    /* Local copies of the context and the pointers: the status is written through a
       uint8_t pointer, which may alias anything the caller passed, so reading the
       pointers through t_arg and io_arg would reload every one of them after every
       row's stores.  Nothing takes these copies' addresses beyond the inlined code
       (the subsystem lookup, out of line, gets t_arg as t_sub), so the compiler keeps them in
       registers. */
    const gpuclass_match_ctx t_local = *t_arg;
    const gpuclass_match_io io_local = *io_arg;
    const gpuclass_match_ctx *t = &t_local, *t_sub = t_arg;
    const gpuclass_match_io *io = &io_local;
    const uint32_t *class_code = io->class_code;
    const Py_ssize_t n = io->n;
    uint32_t over = 0;
#if GPUCLASS_MATCH_SIMD
    if (t->n_keys >= 0) {
        over = gpuclass_match_screened(t, t_sub, io, sub, mask, flags, slots);
    } else
#endif
    {
        for (Py_ssize_t i = 0; i < n; i++) {
            /* no branch on the class range: it is checked once, after the loop */
            over |= class_code[i];
            gpuclass_match_row(t, t_sub, io, i, sub, mask, flags, slots);
        }
    }
    if (over > 0xFFFFFFu) {
        for (Py_ssize_t i = 0; i < n; i++)
            if (class_code[i] > 0xFFFFFFu) return i;
    }
    return -1;
}

#define GPUCLASS_MATCH_VARIANT(name, sub, mask, flags, slots) \
    static GPUCLASS_NOINLINE Py_ssize_t name(const gpuclass_match_ctx *t, \
                                             const gpuclass_match_io *io) { \
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

/* The rows shared out to `parts` threads (the calling thread one of them), each a
   contiguous run of whole 2048-row chunks; -1, or the index of the first class code
   over 24 bits, as gpuclass_match.  Rows are independent (the companion pass that
   links rows runs after, on one thread), so the answers are those of one call. */
#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#define GPUCLASS_MATCH_THREADS 1
typedef struct {
    const gpuclass_match_ctx *t;
    gpuclass_match_io io;
    int sub_rules, slots;
    Py_ssize_t bad;
} gpuclass_match_part;

static void *gpuclass_match_part_run(void *arg) {
    gpuclass_match_part *p = (gpuclass_match_part *)arg;
    p->bad = gpuclass_match(p->t, &p->io, p->sub_rules, p->slots);
    return NULL;
}

static Py_ssize_t gpuclass_match_parts(const gpuclass_match_ctx *t, const gpuclass_match_io *io,
                                       int sub_rules, int slots, int parts) {
    enum { MAX_PARTS = 16 };
    gpuclass_match_part part[MAX_PARTS];
    pthread_t tid[MAX_PARTS];
    int started[MAX_PARTS];
    const Py_ssize_t n = io->n;
    if (parts > MAX_PARTS) parts = MAX_PARTS;
    if (parts < 2 || n < 2 * 2048) return gpuclass_match(t, io, sub_rules, slots);
    const Py_ssize_t chunks = (n + 2047) / 2048;
    for (int k = 0; k < parts; k++) {
        const Py_ssize_t lo = chunks * k / parts * 2048, hi0 = chunks * (k + 1) / parts * 2048;
        const Py_ssize_t hi = hi0 < n ? hi0 : n;
        gpuclass_match_io *q = &part[k].io;
        *q = *io;
        q->n = hi - lo;
        q->vendor += lo; q->device += lo; q->class_code += lo;
        if (q->subvendor) q->subvendor += lo;
        if (q->subdevice) q->subdevice += lo;
        if (q->has_sub) q->has_sub += lo;
        if (q->flags) q->flags += lo;
        q->status += lo; q->card += lo; q->slices += lo;
        part[k].t = t; part[k].sub_rules = sub_rules; part[k].slots = slots; part[k].bad = -1;
    }
    for (int k = 1; k < parts; k++)  /* a part whose thread does not start runs here */
        started[k] = pthread_create(&tid[k], NULL, gpuclass_match_part_run, &part[k]) == 0;
    gpuclass_match_part_run(&part[0]);
    for (int k = 1; k < parts; k++) {
        if (started[k]) pthread_join(tid[k], NULL);
        else gpuclass_match_part_run(&part[k]);
    }
    for (int k = 0; k < parts; k++)
        if (part[k].bad >= 0) return (part[k].io.vendor - io->vendor) + part[k].bad;
    return -1;
}
#else
#define GPUCLASS_MATCH_THREADS 0
static Py_ssize_t gpuclass_match_parts(const gpuclass_match_ctx *t, const gpuclass_match_io *io,
                                       int sub_rules, int slots, int parts) {
    (void)parts;
    return gpuclass_match(t, io, sub_rules, slots);
}
#endif

/* The layout's vendor and device parts (match.pxi's _layout makes the rest).

   gpuclass_layout_pairs lists in `used` (65536 entries) the (dev_lut block, GPU-vendor bit)
   pairs, block * 2 + bit, that some vendor uses, in increasing order, and returns how
   many; `remap` (65536 entries) receives each pair's place in that list.
   gpuclass_layout_fill then writes the vendor entries (the vendor's block of the
   layout, in the high 16 bits) and one block of 65536 device entries per pair: the
   card's slices (from the layout's slice table, filled before), the card (0xffff:
   none), the rule hit, the subsystem-rules bit and the GPU-vendor bit. */
static int64_t gpuclass_layout_pairs(const uint16_t *vendor_block, int64_t *used, int32_t *remap) {
    for (int64_t p = 0; p < 65536; p++) remap[p] = -1;
    for (int64_t v = 0; v < 65536; v++) {
        uint32_t b = vendor_block[v];
        remap[(b & 0x7FFFu) * 2 + (b >> 15)] = 0;
    }
    int64_t n = 0;
    for (int64_t p = 0; p < 65536; p++)
        if (remap[p] == 0 || remap[p] > 0) { used[n] = p; remap[p] = (int32_t)n; n++; }
    return n;
}

static void gpuclass_layout_fill(const uint16_t *vendor_block, const uint16_t *dev_lut,
                                 const int64_t *used, const int32_t *remap, int64_t blocks,
                                 uint8_t *L) {
    uint32_t *vb = (uint32_t *)(L + GPUCLASS_L_VB);
    for (int64_t v = 0; v < 65536; v++) {
        uint32_t b = vendor_block[v];
        vb[v] = (uint32_t)remap[(b & 0x7FFFu) * 2 + (b >> 15)] << 16;
    }
    const uint16_t *sl = (const uint16_t *)(L + GPUCLASS_L_SL);
    uint64_t *dev = (uint64_t *)(L + GPUCLASS_L_DEV);
    for (int64_t nb = 0; nb < blocks; nb++) {
        const uint16_t *e = dev_lut + (used[nb] >> 1) * 65536;
        uint64_t g = (uint64_t)(used[nb] & 1) << 2;
        uint64_t *d = dev + nb * 65536;
        for (int64_t i = 0; i < 65536; i++) {
            uint64_t k = e[i] & 0x7FFFu;
            uint64_t card = (uint16_t)(k - 1);  /* 0xffff: no card */
            d[i] = ((uint64_t)sl[k] << 32) | (card << 16) | ((uint64_t)(k != 0) << 3)
                   | ((uint64_t)(e[i] >> 15) << 4) | g;
        }
    }
}

/* Memory for the matcher's large outputs (match.pxi keeps it between calls): malloc'd,
   with Transparent Huge Pages asked for where the system has them, as numpy asks for its
   own arrays of 4 MiB or more. */
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
static void *gpuclass_match_out_alloc(size_t n) {
    void *p = malloc(n);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p != NULL && n >= ((size_t)4 << 20)) {
        uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
        uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)4095;
        if (e > a)
            (void)madvise((void *)a, (size_t)(e - a), MADV_HUGEPAGE);
    }
#endif
    return p;
}

#endif

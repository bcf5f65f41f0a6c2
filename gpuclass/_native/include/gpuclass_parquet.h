/* Parquet page encodings for an audit's output (gpuclass/_native/parquet.pxi; twin:
   parquet_py.py, which writes the same bytes): dictionary indices of small integer
   columns, the RLE / bit-packed hybrid of those indices, DELTA_BINARY_PACKED integers,
   and the least and greatest of a column's texts (its statistics).  Bits are packed
   least significant first, as the format has them. */
#ifndef GPUCLASS_PARQUET_H
#define GPUCLASS_PARQUET_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuclass_common.h"

#define GPUCLASS_PQ_DICT_SPAN 65536  /* the widest range of integers looked at for a dictionary */
#define GPUCLASS_PQ_DICT_MAX 256     /* distinct values a dictionary at most */

static int64_t gpuclass_pq_uvarint(uint8_t *out, uint64_t v) {
    int64_t at = 0;
    while (v > 0x7F) {
        out[at++] = (uint8_t)((v & 0x7F) | 0x80);
        v >>= 7;
    }
    out[at++] = (uint8_t)v;
    return at;
}

static inline uint64_t gpuclass_pq_zigzag(int64_t v) {
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* A writer of bit fields, least significant bit first. */
typedef struct { uint8_t *out; int64_t at; uint64_t acc; int nbits; } gpuclass_pq_bits;

static GPUCLASS_ALWAYS_INLINE void gpuclass_pq_put(gpuclass_pq_bits *b, uint64_t v, int width) {
    while (width > 0) {
        int k = width < 56 ? width : 56;  /* under 8 bits are held between fields: 63 at most */
        b->acc |= (v & ((1ULL << k) - 1)) << b->nbits;
        b->nbits += k;
        v = k < width ? v >> k : 0;
        width -= k;
        while (b->nbits >= 8) {
            b->out[b->at++] = (uint8_t)b->acc;
            b->acc >>= 8;
            b->nbits -= 8;
        }
    }
}

/* The room gpuclass_pq_hybrid needs for n indices of `width` bits. */
static inline int64_t gpuclass_pq_hybrid_room(int64_t n, int width) {
    return 10 + (n + 7) / 8 * width + 8;
}

/* n indices (each below 2**width, width 1 to 8) in the hybrid encoding: one RLE run where
   they are all the same, else one bit-packed run of groups of 8 (the last padded with
   zeros).  Returns the bytes written. */
static int64_t gpuclass_pq_hybrid(const uint8_t *idx, int64_t n, int width, uint8_t *out) {
    int64_t i, g, groups = (n + 7) / 8, at;
    int same = n > 0;
    for (i = 1; i < n && same; i++) same = idx[i] == idx[0];
    if (same) {
        at = gpuclass_pq_uvarint(out, (uint64_t)n << 1);
        out[at++] = idx[0];
        return at;
    }
    at = gpuclass_pq_uvarint(out, (uint64_t)groups << 1 | 1);
    for (g = 0; g < groups; g++) {
        uint64_t acc = 0;
        int64_t base = g * 8;
        int k, m = n - base < 8 ? (int)(n - base) : 8;
        for (k = 0; k < m; k++) acc |= (uint64_t)idx[base + k] << (k * width);
        for (k = 0; k < width; k++) out[at++] = (uint8_t)(acc >> (8 * k));
    }
    return at;
}

/* The least delta of m int64 values (m >= 2; wrapping) and the width of the widest
   delta less it: what gpuclass_pq_delta packs them with. */
static void gpuclass_pq_delta_plan(const int64_t *v, int64_t m, int64_t *least_out, int *width_out) {
    int64_t i, least = (int64_t)((uint64_t)v[1] - (uint64_t)v[0]);
    uint64_t widest = 0;
    int width = 0;
    for (i = 1; i < m - 1; i++) {
        int64_t d = (int64_t)((uint64_t)v[i + 1] - (uint64_t)v[i]);
        if (d < least) least = d;
    }
    for (i = 0; i < m - 1; i++) {
        uint64_t u = (uint64_t)v[i + 1] - (uint64_t)v[i] - (uint64_t)least;
        if (u > widest) widest = u;
    }
    while (width < 64 && (widest >> width) != 0) width++;
    *least_out = least;
    *width_out = width;
}

/* The bytes gpuclass_pq_delta writes for m values packed `width` bits a delta. */
static inline int64_t gpuclass_pq_delta_room(int64_t m, int width) {
    int64_t nd = m > 0 ? m - 1 : 0;
    return 40 + (nd / 128 + 1) * (14 + 16 * (int64_t)width);
}

/* m int64 values as DELTA_BINARY_PACKED: blocks of 128 deltas in 4 miniblocks of 32, every
   block with the least delta of all and the width of the widest (gpuclass_pq_delta_plan's:
   the same header each); the last block only as many miniblocks as its deltas fill (the
   widths of the others 0).  Deltas wrap as the format's arithmetic does.  Returns the
   bytes written. */
static int64_t gpuclass_pq_delta(const int64_t *v, int64_t m, int64_t least, int width, uint8_t *out) {
    int64_t at = 0, i, nd = m > 0 ? m - 1 : 0, full, rest, blk;
    int minis, k;
    uint8_t head[16];
    int64_t head_n;
    gpuclass_pq_bits b;
    at += gpuclass_pq_uvarint(out + at, 128);
    at += gpuclass_pq_uvarint(out + at, 4);
    at += gpuclass_pq_uvarint(out + at, (uint64_t)m);
    at += gpuclass_pq_uvarint(out + at, gpuclass_pq_zigzag(m > 0 ? v[0] : 0));
    if (m < 2) return at;
    head_n = gpuclass_pq_uvarint(head, gpuclass_pq_zigzag(least));
    full = nd / 128;
    rest = nd % 128;
    minis = (int)((rest + 31) / 32);
    b.out = out;
    b.acc = 0;
    b.nbits = 0;
    for (blk = 0; blk <= full; blk++) {
        int64_t lo = blk * 128, count = blk < full ? 128 : (int64_t)minis * 32;
        int used = blk < full ? 4 : minis;
        if (count == 0) break;
        memcpy(out + at, head, (size_t)head_n);
        at += head_n;
        for (k = 0; k < 4; k++) out[at++] = (uint8_t)(k < used ? width : 0);
        b.at = at;
        for (i = lo; i < lo + count; i++) {
            uint64_t u = i < nd ? (uint64_t)v[i + 1] - (uint64_t)v[i] - (uint64_t)least : 0;
            gpuclass_pq_put(&b, u, width);
        }
        at = b.at;  /* 32 values of any width end on a byte */
    }
    return at;
}

/* The dictionary of n integers (ints32 or int64): 0 with its distinct values (rising) in
   `distinct`, their count in *n_distinct and each value's index in `index`; 1 where the
   values span GPUCLASS_PQ_DICT_SPAN or more, or are more than GPUCLASS_PQ_DICT_MAX
   distinct; -1 where out of memory. */
#define GPUCLASS_PQ_DICTIONARY(NAME, T)                                                        \
    static int NAME(const T *v, int64_t n, int64_t *distinct, int *n_distinct, uint8_t *index) { \
        int64_t i, lo, hi, span;                                                               \
        uint16_t *code;                                                                        \
        int count = 0;                                                                         \
        if (n == 0) { *n_distinct = 0; return 0; }                                             \
        lo = hi = v[0];                                                                        \
        for (i = 1; i < n; i++) {                                                              \
            if (v[i] < lo) lo = v[i];                                                          \
            if (v[i] > hi) hi = v[i];                                                          \
        }                                                                                      \
        if ((uint64_t)hi - (uint64_t)lo >= GPUCLASS_PQ_DICT_SPAN) return 1;                    \
        span = hi - lo + 1;                                                                    \
        code = (uint16_t *)calloc((size_t)span, sizeof(uint16_t));                             \
        if (code == NULL) return -1;                                                           \
        for (i = 0; i < n; i++) code[v[i] - lo] = 1;                                           \
        for (i = 0; i < span; i++) {                                                           \
            if (!code[i]) continue;                                                            \
            if (count == GPUCLASS_PQ_DICT_MAX) { free(code); return 1; }                       \
            distinct[count] = lo + i;                                                          \
            code[i] = (uint16_t)++count;                                                       \
        }                                                                                      \
        for (i = 0; i < n; i++) index[i] = (uint8_t)(code[v[i] - lo] - 1);                     \
        free(code);                                                                            \
        *n_distinct = count;                                                                   \
        return 0;                                                                              \
    }

GPUCLASS_PQ_DICTIONARY(gpuclass_pq_dictionary64, int64_t)
GPUCLASS_PQ_DICTIONARY(gpuclass_pq_dictionary32, int32_t)

/* The least (*lo) and greatest (*hi) of n texts, the i-th data[starts[i]:starts[i + 1]],
   compared byte by byte (a prefix first); the first of equal ones. */
static int gpuclass_pq_text_cmp(const uint8_t *data, const int64_t *s, int64_t a, int64_t b) {
    int64_t la = s[a + 1] - s[a], lb = s[b + 1] - s[b], m = la < lb ? la : lb;
    int c = m > 0 ? memcmp(data + s[a], data + s[b], (size_t)m) : 0;
    if (c) return c;
    return (la > lb) - (la < lb);
}

static void gpuclass_pq_text_bounds(const uint8_t *data, const int64_t *starts, int64_t n, int64_t *lo,
                                    int64_t *hi) {
    int64_t i;
    *lo = *hi = 0;
    for (i = 1; i < n; i++) {
        if (gpuclass_pq_text_cmp(data, starts, i, *lo) < 0) *lo = i;
        else if (gpuclass_pq_text_cmp(data, starts, i, *hi) > 0) *hi = i;
    }
}

#endif

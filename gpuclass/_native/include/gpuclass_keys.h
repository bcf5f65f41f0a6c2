/* Server keys: which rows name no server, which neighbours name the same one, their
   64-bit hashes, and a growing set of hashes seen (for telling keys met before).

   A key cell is text or an integer, read where it is (gpuclass_column.h); a dictionary
   cell is its entry's key. */
#ifndef GPUCLASS_KEYS_H
#define GPUCLASS_KEYS_H

#include <stdlib.h>

#include "gpuclass_column.h"
#include "gpuclass_space.h"

/* Is a key's text empty or only whitespace (str.isspace's, gpuclass_space.h)?  Such a
   server cell names no server. */
static GPUCLASS_NOINLINE int gpuclass_blank_key(const uint8_t *s, int64_t n) {
    int64_t k = 0;
    int w;
    while (k < n && (w = gpuclass_space_head(s + k, n - k)) != 0) k += w;
    return k == n;  /* stopped at the first other byte, or at the end */
}

/* Does row i name no server (a missing cell, or a blank text)? */
static GPUCLASS_ALWAYS_INLINE int gpuclass_nameless(const gpuclass_col *c, int64_t i) {
    c = gpuclass_cell(c, i, &i);
    if (c == NULL || gpuclass_col_null(c, i)) return 1;
    if (c->kind == GPUCLASS_INT) return 0;
    int64_t len;
    const uint8_t *s = gpuclass_col_bytes(c, i, &len);
    return gpuclass_blank_key(s, len);
}

/* Whether the first and the last sizeof(T) bytes of x and y are the same (n >= sizeof(T)):
   the two loads from each end overlap, reading no byte outside either key. */
#define GPUCLASS_ENDS_EQUAL(T)                                        \
    do {                                                              \
        T x0, y0, x1, y1;                                             \
        memcpy(&x0, x, sizeof(T));                                    \
        memcpy(&y0, y, sizeof(T));                                    \
        memcpy(&x1, x + n - (int64_t)sizeof(T), sizeof(T));           \
        memcpy(&y1, y + n - (int64_t)sizeof(T), sizeof(T));           \
        return ((x0 ^ y0) | (x1 ^ y1)) == 0;                          \
    } while (0)

/* Are the n bytes at x and y the same?  Keys of up to 16 bytes (most server names) are
   compared in place, from both ends at once (GPUCLASS_ENDS_EQUAL); longer ones by memcmp. */
static GPUCLASS_ALWAYS_INLINE int gpuclass_same_bytes(const uint8_t *x, const uint8_t *y, int64_t n) {
    if (n >= 8 && n <= 16) GPUCLASS_ENDS_EQUAL(uint64_t);
    if (n >= 4 && n < 8) GPUCLASS_ENDS_EQUAL(uint32_t);
    if (n < 4) {
        for (int64_t k = 0; k < n; k++)
            if (x[k] != y[k]) return 0;
        return 1;
    }
    return memcmp(x, y, (size_t)n) == 0;
}

/* Do rows i and j (j = i - 1) have equal, present server keys? */
static GPUCLASS_ALWAYS_INLINE int gpuclass_same_server(const gpuclass_col *c, int64_t i, int64_t j) {
    if (c->kind == GPUCLASS_DICT) {  /* the entries' keys: one entry is one key */
        const gpuclass_col *d = gpuclass_cell(c, i, &i), *e = gpuclass_cell(c, j, &j);
        if (d == NULL || e == NULL) return 0;
        if (i == j) return !gpuclass_col_null(d, i);
        c = d;
    }
    if (gpuclass_col_null(c, i) || gpuclass_col_null(c, j)) return 0;
    if (c->kind == GPUCLASS_INT) return gpuclass_ld64(c->ints, i) == gpuclass_ld64(c->ints, j);
    int64_t a, b;
    const uint8_t *x = gpuclass_col_bytes(c, i, &a), *y = gpuclass_col_bytes(c, j, &b);
    return a == b && gpuclass_same_bytes(x, y, a);
}

/* SplitMix64's finalizer: every input bit moves about half the output bits. */
static GPUCLASS_ALWAYS_INLINE uint64_t gpuclass_mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* 64-bit hashes of a key column's n cells (0 for a missing cell), seeded: an integer cell
   is its value mixed; a text cell its length, then each 8 bytes read little-endian (the
   last block zero-padded), mixed in turn.  Equal keys hash equal; callers confirm a
   match by comparing the keys. */
static void gpuclass_key_hashes(const gpuclass_col *col, int64_t n, uint64_t seed, uint64_t *out) {
    for (int64_t row = 0; row < n; row++) {
        int64_t i;
        const gpuclass_col *c = gpuclass_cell(col, row, &i);  /* a dictionary cell: its entry's */
        if (c == NULL || gpuclass_col_null(c, i)) { out[row] = 0; continue; }
        if (c->kind == GPUCLASS_INT) {
            out[row] = gpuclass_mix64(seed ^ (uint64_t)gpuclass_ld64(c->ints, i));
            continue;
        }
        int64_t len;
        const uint8_t *s = gpuclass_col_bytes(c, i, &len);
        uint64_t h = seed ^ ((uint64_t)len * 0x9e3779b97f4a7c15ULL);
        for (int64_t k = 0; k < len; k += 8) {
            uint64_t w = 0;
            int64_t m = len - k < 8 ? len - k : 8;
            for (int64_t b = m - 1; b >= 0; b--) w = (w << 8) | s[k + b];
            h = gpuclass_mix64(h ^ w);
        }
        out[row] = h;
    }
}

/* A growing set of 64-bit key hashes, each with the position of the first key that had
   it: open addressing, linear probing, at most half full.  The hashes come seeded and
   mixed (gpuclass_key_hashes), so their low bits spread evenly. */
typedef struct { uint64_t *hash; int64_t *pos; int64_t cap, n; } gpuclass_keyset;

static int gpuclass_keyset_grow(gpuclass_keyset *k) {
    int64_t cap = k->cap ? k->cap * 2 : 1024;
    uint64_t *hash = (uint64_t *)malloc((size_t)cap * sizeof(uint64_t));
    int64_t *pos = (int64_t *)malloc((size_t)cap * sizeof(int64_t));
    if (hash == NULL || pos == NULL) { free(hash); free(pos); return -1; }
    for (int64_t i = 0; i < cap; i++) pos[i] = -1;
    for (int64_t i = 0; i < k->cap; i++) {
        if (k->pos[i] < 0) continue;
        int64_t j = (int64_t)(k->hash[i] & (uint64_t)(cap - 1));
        while (pos[j] >= 0) j = (j + 1) & (cap - 1);
        hash[j] = k->hash[i];
        pos[j] = k->pos[i];
    }
    free(k->hash);
    free(k->pos);
    k->hash = hash;
    k->pos = pos;
    k->cap = cap;
    return 0;
}

/* Add the n hashes h (keys at positions base, base + 1, ...): a new hash is inserted; one
   already there puts its index into found[] and the earlier position into prior[].
   Returns how many were found, or -1 when out of memory (the set is left as it was
   for the hashes not yet added). */
static int64_t gpuclass_keyset_add(gpuclass_keyset *k, const uint64_t *h, int64_t n, int64_t base,
                                   int64_t *found, int64_t *prior) {
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        if (2 * (k->n + 1) > k->cap && gpuclass_keyset_grow(k)) return -1;
        int64_t mask = k->cap - 1, j = (int64_t)(h[i] & (uint64_t)mask);
        while (k->pos[j] >= 0 && k->hash[j] != h[i]) j = (j + 1) & mask;
        if (k->pos[j] >= 0) {
            found[m] = i;
            prior[m] = k->pos[j];
            m++;
        } else {
            k->hash[j] = h[i];
            k->pos[j] = base + i;
            k->n++;
        }
    }
    return m;
}

/* Does every cell of the text column c (STR32 or STR64, none missing: contract.audit
   checks) come after the one before in Arrow's order of binary values: bytes compared
   as unsigned, a prefix before what extends it?  Keys that rise so are distinct. */
static int gpuclass_text_rising(const gpuclass_col *c, int64_t n) {
    for (int64_t i = 1; i < n; i++) {
        int64_t a, b;
        const uint8_t *x = gpuclass_col_bytes(c, i - 1, &a), *y = gpuclass_col_bytes(c, i, &b);
        int64_t m = a < b ? a : b;
        int r = m ? memcmp(x, y, (size_t)m) : 0;  /* (no text at all: no buffer, x NULL) */
        if (r > 0 || (r == 0 && a >= b)) return 0;
    }
    return 1;
}

/* The bytes of the text cells idx[0..m) of c (STR32 or STR64; an index < 0 names none;
   every other one is below c's cells: contract.audit checks). */
static int64_t gpuclass_take_bytes(const gpuclass_col *c, const int64_t *idx, int64_t m) {
    int64_t total = 0, len;
    for (int64_t k = 0; k < m; k++) {
        if (idx[k] < 0) continue;
        gpuclass_col_bytes(c, idx[k], &len);
        total += len;
    }
    return total;
}

/* The text cells idx[0..m) of c packed as Arrow's: m + 1 offsets into data (which holds
   gpuclass_take_bytes of them); an index < 0 is an empty cell (the caller marks it
   missing). */
static void gpuclass_take_text(const gpuclass_col *c, const int64_t *idx, int64_t m, int64_t *off,
                               uint8_t *data) {
    int64_t at = 0, len;
    off[0] = 0;
    for (int64_t k = 0; k < m; k++) {
        if (idx[k] >= 0) {
            const uint8_t *s = gpuclass_col_bytes(c, idx[k], &len);
            if (len) memcpy(data + at, s, (size_t)len);  /* (empty texts may have no buffer) */
            at += len;
        }
        off[k + 1] = at;
    }
}

#endif

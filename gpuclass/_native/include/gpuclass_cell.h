/* Hex cells read from a column: the cell grammar, the class-digit rule, the memo of
   recent cells, and whole chunks of a column parsed at once.

   The grammar is gpuclass.ids.cell_parts (the Python form; tests/native/test_cell_grammar.py
   holds the two equal): whitespace as str.isspace defines it (gpuclass_space.h) stripped,
   then an optional [ ] pair, an optional 0x or 0X, then 1..maxdigits hex digits
   (gpuclass_hex.h).  A missing cell, or one of whitespace only, is GPUCLASS_CELL_MISSING;
   anything else that is not that is GPUCLASS_CELL_BAD.  Integer cells are their value
   (digits -1), GPUCLASS_CELL_BAD outside [0, 16**maxdigits).

   The usual cell is its digits alone: it is parsed without a branch per digit, and short
   cells are remembered by their bytes, so that most cost one 8-byte load and a compare.
   Only a cell that is not all digits takes the slow path, where whitespace is looked for. */
#ifndef GPUCLASS_CELL_H
#define GPUCLASS_CELL_H

#include <stdlib.h>

#include "gpuclass_column.h"
#include "gpuclass_space.h"

#define GPUCLASS_CELL_CHUNK 2048  /* rows parsed (and classified) at a time */

/* A cell that is not just its digits: whitespace, brackets, 0x, or not an ID at all. */
static GPUCLASS_NOINLINE int gpuclass_id_text(const uint8_t *s, int64_t n, int maxdigits,
                                              uint32_t *value, int *ndigits) {
    *value = 0;  /* the value of anything but a good cell */
    s = gpuclass_strip(s, &n);
    if (n == 0) return GPUCLASS_CELL_MISSING;
    if (n >= 2 && s[0] == '[' && s[n - 1] == ']') { s++; n -= 2; }  /* lspci's "[10de]" */
    if (n >= 2 && s[0] == '0' && (s[1] | 0x20) == 'x') { s += 2; n -= 2; }
    if (n == 0 || n > maxdigits) return GPUCLASS_CELL_BAD;
    uint32_t v = 0;
    for (int64_t k = 0; k < n; k++) {
        int h = gpuclass_hex[s[k]];
        if (h < 0) return GPUCLASS_CELL_BAD;
        v = (v << 4) | (uint32_t)h;
    }
    *value = v;
    *ndigits = (int)n;
    return GPUCLASS_CELL_OK;
}

/* Parse one cell's bytes: the usual cell, its digits alone, without a branch per digit;
   any other through gpuclass_id_text. */
static GPUCLASS_ALWAYS_INLINE int gpuclass_id_bytes(const uint8_t *s, int64_t n, int maxdigits,
                                                    uint32_t *value, int *ndigits) {
    if (n > 0 && n <= maxdigits) {
        uint32_t v = 0;
        int bad = 0;
        for (int64_t k = 0; k < n; k++) {
            int h = gpuclass_hex[s[k]];
            bad |= h;  /* -1 for a byte that is no hex digit */
            v = (v << 4) | (uint32_t)(h & 15);
        }
        if (bad >= 0) {
            *value = v;
            *ndigits = (int)n;
            return GPUCLASS_CELL_OK;
        }
    }
    return gpuclass_id_text(s, n, maxdigits, value, ndigits);
}

/* The 24-bit class of a good class cell (gpuclass.ids.class_value): up to 4 digits, or an
   integer cell (digits -1) up to 0xFFFF, are base class and subclass; 6 include the prog-if. */
static GPUCLASS_ALWAYS_INLINE uint32_t gpuclass_class_code(uint32_t value, int digits) {
    int base_and_sub = digits < 0 ? value <= 0xFFFFu : digits <= 4;
    return base_and_sub ? value << 8 : value;
}

/* The last answers for short cells, by their bytes: device tables repeat a few IDs in
   every column. */
typedef struct { uint64_t word; uint32_t value; uint8_t n, state; int8_t ndigits; } gpuclass_memo_entry;
typedef struct { gpuclass_memo_entry e[256]; } gpuclass_memo;

static const uint64_t gpuclass_low_bytes[9] = {
    0, 0xFFULL, 0xFFFFULL, 0xFFFFFFULL, 0xFFFFFFFFULL, 0xFFFFFFFFFFULL, 0xFFFFFFFFFFFFULL,
    0xFFFFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFFFULL};

/* One text cell s[0:n] whose buffer holds at least 8 bytes from s when n <= 8. */
static GPUCLASS_ALWAYS_INLINE int gpuclass_text_cell(const uint8_t *s, int64_t n, int readable8,
                                                     int maxdigits, gpuclass_memo *memo,
                                                     uint32_t *value, int *ndigits) {
    if (n < 1 || n > 8 || !readable8)
        return gpuclass_id_bytes(s, n, maxdigits, value, ndigits);
    uint64_t w;
    memcpy(&w, s, 8);
    w &= gpuclass_low_bytes[n];
    gpuclass_memo_entry *e = &memo->e[(w * 0x9E3779B97F4A7C15ULL) >> 56];
    if (e->word == w && e->n == n) {
        *value = e->value;  /* 0 unless the cell is good */
        *ndigits = e->ndigits;
        return e->state;
    }
    int st = gpuclass_id_bytes(s, n, maxdigits, value, ndigits);
    e->word = w;
    e->n = (uint8_t)n;
    e->state = (uint8_t)st;
    e->value = st == GPUCLASS_CELL_OK ? *value : 0;
    e->ndigits = (int8_t)(st == GPUCLASS_CELL_OK ? *ndigits : 0);
    return st;
}

/* The text cells of rows [lo, lo + m) of a string column (its offsets read by LOAD). */
#define GPUCLASS_PARSE_TEXT(LOAD, offs)                                                         \
    do {                                                                                        \
        const uint8_t *data = c->data;                                                          \
        const int64_t limit = c->data_len - 8;                                                  \
        for (int64_t j = 0; j < m; j++) {                                                       \
            int64_t a = (int64_t)LOAD(offs, lo + j), n = (int64_t)LOAD(offs, lo + j + 1) - a;   \
            int d = 0;                                                                          \
            if (c->valid != NULL && gpuclass_col_null(c, lo + j)) {                             \
                st[j] = GPUCLASS_CELL_MISSING;                                                  \
                val[j] = 0;                                                                     \
                nd[j] = 0;                                                                      \
                continue;                                                                       \
            }                                                                                   \
            st[j] = (uint8_t)gpuclass_text_cell(data + a, n, a <= limit, maxdigits, memo,       \
                                                &val[j], &d);                                   \
            nd[j] = (int8_t)d;                                                                  \
        }                                                                                       \
    } while (0)

/* A dictionary's entries parsed once (gpuclass_parse_entries): each cell of a DICT column
   takes its entry's state, value and digits. */
typedef struct { uint32_t *val; uint8_t *st; int8_t *nd; } gpuclass_parsed;

/* A DICT column's cells j in [0, m) as their entries' (pre), entry INDEX (an expression of
   j): the dictionary's loop where no cell is missing. */
#define GPUCLASS_GATHER_ENTRIES(INDEX)                      \
    for (int64_t j = 0; j < m; j++) {                       \
        int64_t e = (INDEX);                                \
        st[j] = pre->st[e];                                 \
        val[j] = pre->val[e];                               \
        nd[j] = pre->nd[e];                                 \
    }

/* Parse rows [lo, lo + m) of one ID column: state (GPUCLASS_CELL_*), value and digits (-1
   for an integer cell) of each cell; a DICT column's cells are their entries' (pre: the
   dictionary parsed). */
static GPUCLASS_ALWAYS_INLINE void gpuclass_parse_column(const gpuclass_col *c, int64_t lo, int64_t m,
                                                         int maxdigits, gpuclass_memo *memo,
                                                         const gpuclass_parsed *pre, uint32_t *val,
                                                         uint8_t *st, int8_t *nd) {
    if (c->kind == GPUCLASS_DICT && c->valid == NULL) {
        /* no cell missing: one loop per index width, without a test a row */
        switch (c->index_size) {
        case 1: GPUCLASS_GATHER_ENTRIES(((const int8_t *)c->index)[lo + j]); break;
        case 2: GPUCLASS_GATHER_ENTRIES(gpuclass_ld16(c->index, lo + j)); break;
        case 4: GPUCLASS_GATHER_ENTRIES(gpuclass_ld32(c->index, lo + j)); break;
        default: GPUCLASS_GATHER_ENTRIES(gpuclass_ld64(c->index, lo + j)); break;
        }
    } else if (c->kind == GPUCLASS_DICT) {
        for (int64_t j = 0; j < m; j++) {
            if (c->valid != NULL && gpuclass_col_null(c, lo + j)) {
                st[j] = GPUCLASS_CELL_MISSING;
                val[j] = 0;
                nd[j] = 0;
                continue;
            }
            int64_t e = gpuclass_dict_index(c, lo + j);
            st[j] = pre->st[e];
            val[j] = pre->val[e];
            nd[j] = pre->nd[e];
        }
    } else if (c->kind == GPUCLASS_ABSENT) {
        for (int64_t j = 0; j < m; j++) { st[j] = GPUCLASS_CELL_MISSING; val[j] = 0; nd[j] = 0; }
    } else if (c->kind == GPUCLASS_INT) {
        const int64_t top = (int64_t)1 << (4 * maxdigits);
        for (int64_t j = 0; j < m; j++) {
            int64_t v = gpuclass_ld64(c->ints, lo + j);
            int ok = v >= 0 && v < top;
            st[j] = ok ? GPUCLASS_CELL_OK : GPUCLASS_CELL_BAD;
            val[j] = ok ? (uint32_t)v : 0;
            nd[j] = -1;
            if (c->valid != NULL && gpuclass_col_null(c, lo + j)) { st[j] = GPUCLASS_CELL_MISSING; val[j] = 0; }
        }
    } else {
        if (c->kind == GPUCLASS_STR32)
            GPUCLASS_PARSE_TEXT(gpuclass_ld32, c->off32);
        else
            GPUCLASS_PARSE_TEXT(gpuclass_ld64, c->off64);
    }
}

static void gpuclass_parsed_free(gpuclass_parsed *pre) {
    free(pre->val);
    free(pre->st);
    free(pre->nd);
    pre->val = NULL;
    pre->st = NULL;
    pre->nd = NULL;
}

/* Parse the entries of a DICT column's dictionary into *pre (malloc'd, freed by
   gpuclass_parsed_free, also after a failure): 0, or -1 when out of memory. */
static int gpuclass_parse_entries(const gpuclass_col *c, int maxdigits, gpuclass_memo *memo,
                                  gpuclass_parsed *pre) {
    int64_t k = c->dictionary_len > 0 ? c->dictionary_len : 1;
    pre->val = (uint32_t *)malloc((size_t)k * sizeof(uint32_t));
    pre->st = (uint8_t *)malloc((size_t)k);
    pre->nd = (int8_t *)malloc((size_t)k);
    if (pre->val == NULL || pre->st == NULL || pre->nd == NULL) return -1;
    for (int64_t lo = 0; lo < c->dictionary_len; lo += GPUCLASS_CELL_CHUNK) {
        int64_t left = c->dictionary_len - lo;
        int64_t m = left < GPUCLASS_CELL_CHUNK ? left : GPUCLASS_CELL_CHUNK;
        gpuclass_parse_column(c->dictionary, lo, m, maxdigits, memo, NULL, pre->val + lo, pre->st + lo,
                              pre->nd + lo);
    }
    return 0;
}

/* The cells [0, n) of one ID column: st[] (GPUCLASS_CELL_*) and val[] (0 unless good; a
   class column's through gpuclass_class_code when is_class).  0, or -1 when out of memory. */
static int gpuclass_parse_cells(const gpuclass_col *c, int64_t n, int maxdigits, int is_class,
                                uint8_t *st, uint32_t *val) {
    int8_t nd[GPUCLASS_CELL_CHUNK];
    gpuclass_parsed pre = {NULL, NULL, NULL};
    gpuclass_memo *memo = (gpuclass_memo *)calloc(1, sizeof(gpuclass_memo));
    int rc = memo == NULL ? -1 : 0;
    if (rc == 0 && c->kind == GPUCLASS_DICT) rc = gpuclass_parse_entries(c, maxdigits, memo, &pre);
    for (int64_t lo = 0; rc == 0 && lo < n; lo += GPUCLASS_CELL_CHUNK) {
        int64_t m = n - lo < GPUCLASS_CELL_CHUNK ? n - lo : GPUCLASS_CELL_CHUNK;
        gpuclass_parse_column(c, lo, m, maxdigits, memo, &pre, val + lo, st + lo, nd);
        if (is_class)
            for (int64_t j = 0; j < m; j++)
                if (st[lo + j] == GPUCLASS_CELL_OK) val[lo + j] = gpuclass_class_code(val[lo + j], nd[j]);
    }
    gpuclass_parsed_free(&pre);
    free(memo);
    return rc;
}

#endif

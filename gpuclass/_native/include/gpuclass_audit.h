/* Device tables audited straight from their columns: hex cells parsed from Arrow string
   buffers (or integer columns taken as they are), classified by the matcher and rolled
   up per run of equal server keys, a chunk of rows at a time, in one pass.

   audit.pxi hands in the columns (gpuclass_col) and the matcher's context, and reads
   back the runs (first row, totals, per-card counts), the rows with a problem (first
   problem of each, coded) and the rows of unsupported GPUs. */
#ifndef GPUCLASS_AUDIT_H
#define GPUCLASS_AUDIT_H

#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "gpuclass_common.h"
#include "gpuclass_codes.h"
#include "gpuclass_match.h"

#define GPUCLASS_AUDIT_CHUNK 2048  /* rows parsed and classified at a time */

/* The most hex digits of each ID column: vendor, device, class, subvendor, subdevice
   (contract.audit.WIDTHS). */
static const int gpuclass_audit_width[5] = {4, 4, 6, 4, 4};

/* Arrow's buffers may start at any byte (those that came through pickle or IPC: a Dask
   worker's partitions), so the typed arrays of a column (offsets, integer cells, indices)
   are read through these loads, defined at any alignment (one plain load where the CPU
   allows unaligned ones). */
static GPUCLASS_ALWAYS_INLINE int64_t gpuclass_ld64(const void *p, int64_t i) {
    int64_t v;
    memcpy(&v, (const char *)p + i * (int64_t)sizeof v, sizeof v);
    return v;
}

static GPUCLASS_ALWAYS_INLINE int32_t gpuclass_ld32(const void *p, int64_t i) {
    int32_t v;
    memcpy(&v, (const char *)p + i * (int64_t)sizeof v, sizeof v);
    return v;
}

static GPUCLASS_ALWAYS_INLINE int16_t gpuclass_ld16(const void *p, int64_t i) {
    int16_t v;
    memcpy(&v, (const char *)p + i * (int64_t)sizeof v, sizeof v);
    return v;
}

typedef struct gpuclass_col {
    int kind;
    const uint8_t *data;      /* string bytes (STR32, STR64) */
    int64_t data_len;         /* bytes in data */
    const void *off32;        /* n + 1 int32 offsets into data (STR32), any alignment */
    const void *off64;        /* n + 1 int64 (STR64) */
    const void *ints;         /* n int64 cells (INT) */
    const uint8_t *valid;     /* Arrow validity bitmap, LSB first; NULL: every cell is valid */
    int64_t voff;             /* bit of row 0 in valid */
    const void *index;        /* DICT: each cell's entry (signed, index_size bytes each; a
                                 present cell's within [0, dictionary_len): contract.audit checks) */
    int index_size;           /* 1, 2, 4 or 8 */
    const struct gpuclass_col *dictionary;  /* DICT: the entries, a STR32, STR64 or INT column */
    int64_t dictionary_len;   /* its cells */
} gpuclass_col;

static GPUCLASS_ALWAYS_INLINE int gpuclass_col_null(const gpuclass_col *c, int64_t i) {
    int64_t b = c->voff + i;
    return c->valid != NULL && !((c->valid[b >> 3] >> (b & 7)) & 1);
}

static GPUCLASS_ALWAYS_INLINE int64_t gpuclass_dict_index(const gpuclass_col *c, int64_t i) {
    switch (c->index_size) {
    case 1: return ((const int8_t *)c->index)[i];
    case 2: return gpuclass_ld16(c->index, i);
    case 4: return gpuclass_ld32(c->index, i);
    default: return gpuclass_ld64(c->index, i);
    }
}

/* The column and row that hold cell i's value: for a DICT column its entry in the
   dictionary (NULL where the index is missing), else the cell itself. */
static GPUCLASS_ALWAYS_INLINE const gpuclass_col *gpuclass_cell(const gpuclass_col *c, int64_t i,
                                                               int64_t *at) {
    if (c->kind != GPUCLASS_DICT) {
        *at = i;
        return c;
    }
    if (gpuclass_col_null(c, i)) return NULL;
    *at = gpuclass_dict_index(c, i);
    return c->dictionary;
}

static GPUCLASS_ALWAYS_INLINE const uint8_t *gpuclass_col_bytes(const gpuclass_col *c, int64_t i,
                                                               int64_t *len) {
    if (c->kind == GPUCLASS_STR32) {
        int64_t a = gpuclass_ld32(c->off32, i);
        *len = (int64_t)gpuclass_ld32(c->off32, i + 1) - a;
        return c->data + a;
    }
    int64_t a = gpuclass_ld64(c->off64, i);
    *len = gpuclass_ld64(c->off64, i + 1) - a;
    return c->data + a;
}

static GPUCLASS_ALWAYS_INLINE int gpuclass_blank(uint8_t c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* A cell that is not just its digits: blanks, brackets, 0x, or not an ID at all. */
static GPUCLASS_NOINLINE int gpuclass_id_text(const uint8_t *s, int64_t n, int maxdigits,
                                              uint32_t *value, int *ndigits) {
    *value = 0;  /* the value of anything but a good cell */
    while (n > 0 && gpuclass_blank(s[0])) { s++; n--; }
    while (n > 0 && gpuclass_blank(s[n - 1])) n--;
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

/* Parse one cell's bytes (see gpuclass_id_cell); the usual cell, its digits alone, without a
   branch per digit. */
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

/* The last answers for short cells, by their bytes: device tables repeat a few IDs in
   every column, so most cells cost one 8-byte load and one compare. */
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

/* Parse rows [lo, lo + m) of one ID column: state (GPUCLASS_CELL_*), value and digits (-1
   for an integer cell) of each cell.  Text is ASCII blanks around an optional [ ] around
   an optional 0x and 1..maxdigits hex digits; a DICT column's cells are their entries'
   (pre: the dictionary parsed). */
static GPUCLASS_ALWAYS_INLINE void gpuclass_parse_column(const gpuclass_col *c, int64_t lo, int64_t m,
                                                         int maxdigits, gpuclass_memo *memo,
                                                         const gpuclass_parsed *pre, uint32_t *val,
                                                         uint8_t *st, int8_t *nd) {
    if (c->kind == GPUCLASS_DICT) {
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

/* Parse the entries of a DICT column's dictionary into *pre (malloc'd, freed by
   gpuclass_parsed_free): 0, or -1 when out of memory. */
static int gpuclass_parse_entries(const gpuclass_col *c, int maxdigits, gpuclass_memo *memo,
                                  gpuclass_parsed *pre) {
    int64_t k = c->dictionary_len > 0 ? c->dictionary_len : 1;
    pre->val = (uint32_t *)malloc((size_t)k * sizeof(uint32_t));
    pre->st = (uint8_t *)malloc((size_t)k);
    pre->nd = (int8_t *)malloc((size_t)k);
    if (pre->val == NULL || pre->st == NULL || pre->nd == NULL) return -1;
    for (int64_t lo = 0; lo < c->dictionary_len; lo += GPUCLASS_AUDIT_CHUNK) {
        int64_t left = c->dictionary_len - lo;
        int64_t m = left < GPUCLASS_AUDIT_CHUNK ? left : GPUCLASS_AUDIT_CHUNK;
        gpuclass_parse_column(c->dictionary, lo, m, maxdigits, memo, NULL, pre->val + lo, pre->st + lo,
                              pre->nd + lo);
    }
    return 0;
}

static void gpuclass_parsed_free(gpuclass_parsed *pre) {
    free(pre->val);
    free(pre->st);
    free(pre->nd);
}

/* Is a key's text empty or only whitespace (what Python's str.isspace calls so: ASCII
   blanks and 0x1c-0x1f, U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F,
   U+205F, U+3000, UTF-8 encoded)?  Such a server cell names no server. */
static GPUCLASS_NOINLINE int gpuclass_blank_key(const uint8_t *s, int64_t n) {
    int64_t k = 0;
    while (k < n) {
        uint8_t c = s[k];
        if (c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f)) { k += 1; continue; }
        if (k + 1 < n && c == 0xc2 && (s[k + 1] == 0x85 || s[k + 1] == 0xa0)) { k += 2; continue; }
        if (k + 2 < n) {
            uint32_t cp = ((uint32_t)c << 16) | ((uint32_t)s[k + 1] << 8) | s[k + 2];
            if (cp == 0xe19a80 || (cp >= 0xe28080 && cp <= 0xe2808a) || cp == 0xe280a8
                    || cp == 0xe280a9 || cp == 0xe280af || cp == 0xe2819f || cp == 0xe38080) {
                k += 3;
                continue;
            }
        }
        return 0;
    }
    return 1;
}

/* Does row i name no server (a missing cell, or a blank text)? */
static GPUCLASS_ALWAYS_INLINE int gpuclass_nameless(const gpuclass_col *c, int64_t i) {
    c = gpuclass_cell(c, i, &i);
    if (c == NULL || gpuclass_col_null(c, i)) return 1;
    if (c->kind == GPUCLASS_INT) return 0;
    int64_t len;
    const uint8_t *s = gpuclass_col_bytes(c, i, &len);
    return gpuclass_blank_key(s, len);  /* stops at the first other byte */
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
    return a == b && memcmp(x, y, (size_t)a) == 0;
}

/* A growable array of fixed-size items (malloc'd; the caller frees `p`). */
typedef struct { void *p; int64_t n, cap; size_t item; } gpuclass_vec;

static GPUCLASS_NOINLINE void *gpuclass_vec_grow(gpuclass_vec *v) {
    int64_t cap = v->cap ? v->cap * 2 : 256;
    void *p = realloc(v->p, (size_t)cap * v->item);
    if (p == NULL) return NULL;
    v->p = p;
    v->cap = cap;
    return p;
}

/* Transparent huge pages for a large block, where the system offers them on request (as
   numpy asks for its large arrays): one fault per 2 MiB instead of one per 4 KiB.  A
   worker process whose allocator maps every large block afresh (Dask's nanny sets
   MALLOC_TRIM_THRESHOLD_) otherwise pays a fault per page of its output, every call. */
static void gpuclass_huge(void *p, size_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)1 << 21;
    if (size < 2 * huge) return;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + size) & ~(huge - 1);
    if (hi > lo) (void)madvise((void *)lo, (size_t)(hi - lo), MADV_HUGEPAGE);
#else
    (void)p; (void)size;
#endif
}

/* Room for cap items at once (a large block is mapped lazily: untouched room costs nothing).
   A block of huge pages' size or more starts on a huge page boundary, so that its first
   megabytes (all a short output touches) are huge pages too; it is realloc'd and freed
   as any other. */
static int gpuclass_vec_reserve(gpuclass_vec *v, int64_t cap) {
    if (cap <= v->cap || v->item == 0) return 0;
    size_t size = (size_t)cap * v->item;
    void *p = NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (size >= ((size_t)2 << 21)) {
        if (posix_memalign(&p, (size_t)1 << 21, size) != 0) return -1;
        if (v->n) memcpy(p, v->p, (size_t)v->n * v->item);
        free(v->p);
    }
#endif
    if (p == NULL) {
        p = realloc(v->p, size);
        if (p == NULL) return -1;
    }
    v->p = p;
    v->cap = cap;
    gpuclass_huge(p, size);
    return 0;
}

static GPUCLASS_ALWAYS_INLINE void *gpuclass_vec_push(gpuclass_vec *v) {
    if (v->n == v->cap && gpuclass_vec_grow(v) == NULL) return NULL;
    return (char *)v->p + (size_t)(v->n++) * v->item;
}

typedef struct {
    gpuclass_vec starts;       /* int64: the first row of each run */
    gpuclass_vec totals;       /* int32[ROLLUP_COLUMNS] per run */
    gpuclass_vec counts;       /* int32[n_cards] per run */
    gpuclass_vec problems;     /* int64 row, int64 code (field * 4 + CELL_* or PAIR) */
    gpuclass_vec unsupported;  /* int64 row, int64 vendor << 16 | device of each unsupported GPU */
    gpuclass_vec nameless;     /* uint8 per run: its rows name no server (each such row is a run) */
} gpuclass_audit_out;

/* The first problem of a row as field * 4 + kind (0: none); fields in the order
   vendor, device, class, subvendor, subdevice; a lone subvendor or subdevice is the
   subvendor's GPUCLASS_CELL_PAIR. */
static GPUCLASS_ALWAYS_INLINE int gpuclass_audit_problem(int st[5]) {
    for (int f = 0; f < 3; f++)
        if (st[f] != GPUCLASS_CELL_OK) return f * 4 + st[f];
    for (int f = 3; f < 5; f++)
        if (st[f] == GPUCLASS_CELL_BAD) return f * 4 + GPUCLASS_CELL_BAD;
    if ((st[3] == GPUCLASS_CELL_OK) != (st[4] == GPUCLASS_CELL_OK)) return 3 * 4 + GPUCLASS_CELL_PAIR;
    return 0;
}

/* gpuclass_audit's pass over the rows (memo: one per ID column; pre: the dictionaries'
   entries parsed). */
static int gpuclass_audit_rows(const gpuclass_match_ctx *t, int sub_rules, const gpuclass_col cols[6],
                               int64_t n, int n_cards, gpuclass_audit_out *o, int64_t *bad,
                               gpuclass_memo *memo, const gpuclass_parsed pre[5]) {
    uint32_t cval[5][GPUCLASS_AUDIT_CHUNK];
    uint8_t cst[5][GPUCLASS_AUDIT_CHUNK];
    int8_t cnd[5][GPUCLASS_AUDIT_CHUNK];
    uint16_t vendor[GPUCLASS_AUDIT_CHUNK], device[GPUCLASS_AUDIT_CHUNK];
    uint16_t subvendor[GPUCLASS_AUDIT_CHUNK], subdevice[GPUCLASS_AUDIT_CHUNK];
    uint32_t class_code[GPUCLASS_AUDIT_CHUNK], flags[GPUCLASS_AUDIT_CHUNK];
    uint8_t has_sub[GPUCLASS_AUDIT_CHUNK], status[GPUCLASS_AUDIT_CHUNK];
    int16_t card[GPUCLASS_AUDIT_CHUNK];
    uint16_t slices[GPUCLASS_AUDIT_CHUNK];
    const gpuclass_col *server = &cols[0];
    int64_t run = -1;
    int nameless = 0;  /* the current run's */
    for (int64_t lo = 0; lo < n; lo += GPUCLASS_AUDIT_CHUNK) {
        int64_t m = n - lo < GPUCLASS_AUDIT_CHUNK ? n - lo : GPUCLASS_AUDIT_CHUNK;
        for (int f = 0; f < 5; f++)
            gpuclass_parse_column(&cols[f + 1], lo, m, gpuclass_audit_width[f], &memo[f], &pre[f],
                                  cval[f], cst[f], cnd[f]);
        for (int64_t j = 0; j < m; j++) {
            int st[5] = {cst[0][j], cst[1][j], cst[2][j], cst[3][j], cst[4][j]};
            uint32_t cls = cval[2][j];
            /* a class of up to 4 digits (or an integer up to 0xffff) is base and subclass */
            if (st[2] == GPUCLASS_CELL_OK && (cnd[2][j] == -1 ? cls <= 0xFFFF : cnd[2][j] <= 4))
                cls <<= 8;
            int problem = gpuclass_audit_problem(st);
            int pair = st[3] == GPUCLASS_CELL_OK && st[4] == GPUCLASS_CELL_OK;
            vendor[j] = (uint16_t)cval[0][j];
            device[j] = (uint16_t)cval[1][j];
            class_code[j] = cls;
            subvendor[j] = pair ? (uint16_t)cval[3][j] : 0;
            subdevice[j] = pair ? (uint16_t)cval[4][j] : 0;
            has_sub[j] = (uint8_t)pair;
            flags[j] = problem ? GPUCLASS_FLAG_INVALID : 0;
            if (GPUCLASS_UNLIKELY(problem)) {
                int64_t *p = (int64_t *)gpuclass_vec_push(&o->problems);
                if (p == NULL) return -1;
                p[0] = lo + j;
                p[1] = problem;
            }
        }
        gpuclass_match_io io;
        io.n = m;
        io.vendor = vendor;
        io.device = device;
        io.subvendor = subvendor;
        io.subdevice = subdevice;
        io.has_sub = has_sub;
        io.class_code = class_code;
        io.flags = flags;
        io.status = status;
        io.card = card;
        io.slices = slices;
        gpuclass_match(t, &io, sub_rules, 0);
        for (int64_t j = 0; j < m; j++) {
            int64_t i = lo + j;
            /* a nameless row is a run of its own: the run before it ends, and so does its own */
            if (run < 0 || nameless || !gpuclass_same_server(server, i, i - 1)) {
                int64_t *s = (int64_t *)gpuclass_vec_push(&o->starts);
                int32_t *row = (int32_t *)gpuclass_vec_push(&o->totals);
                int32_t *cnt = n_cards ? (int32_t *)gpuclass_vec_push(&o->counts) : NULL;
                uint8_t *nl = (uint8_t *)gpuclass_vec_push(&o->nameless);
                if (s == NULL || row == NULL || (n_cards && cnt == NULL) || nl == NULL) return -1;
                *s = i;
                nameless = gpuclass_nameless(server, i);
                *nl = (uint8_t)nameless;
                gpuclass_rollup_clear(row, cnt, n_cards, 1);
                run++;
            }
            if (status[j] == GPUCLASS_ST_NOT_GPU) continue;
            int32_t *row = (int32_t *)o->totals.p + run * GPUCLASS_ROLLUP_COLUMNS;
            int32_t *cnt = n_cards ? (int32_t *)o->counts.p + run * n_cards : NULL;
            if (gpuclass_rollup_add(row, cnt, status[j], card[j], slices[j])) {
                *bad = i;
                return -2;
            }
            if (status[j] == GPUCLASS_ST_UNSUPPORTED) {
                int64_t *u = (int64_t *)gpuclass_vec_push(&o->unsupported);
                if (u == NULL) return -1;
                u[0] = i;
                u[1] = (int64_t)vendor[j] << 16 | device[j];
            }
        }
    }
    return 0;
}

/* Audit n rows: cols[0] the server, 1..5 vendor, device, class, subvendor, subdevice.
   0; -1 when out of memory; -2 when a run's slices pass the int32 range (*bad: the row).
   Either error leaves the output incomplete. */
static int gpuclass_audit(const gpuclass_match_ctx *t, int sub_rules, const gpuclass_col cols[6],
                          int64_t n, int n_cards, gpuclass_audit_out *o, int64_t *bad) {
    gpuclass_memo *memo = (gpuclass_memo *)calloc(5, sizeof(gpuclass_memo));
    gpuclass_parsed pre[5];
    memset(pre, 0, sizeof(pre));
    int rc = 0;
    if (memo == NULL) return -1;
    for (int f = 0; f < 5; f++)  /* each dictionary's entries parsed once */
        if (cols[f + 1].kind == GPUCLASS_DICT
                && gpuclass_parse_entries(&cols[f + 1], gpuclass_audit_width[f], &memo[f], &pre[f]))
            rc = -1;
    /* at most one run per row: reserved once, so no run ever moves the vectors */
    if (rc || gpuclass_vec_reserve(&o->starts, n) || gpuclass_vec_reserve(&o->totals, n)
            || gpuclass_vec_reserve(&o->counts, n) || gpuclass_vec_reserve(&o->nameless, n))
        rc = -1;
    if (rc == 0) rc = gpuclass_audit_rows(t, sub_rules, cols, n, n_cards, o, bad, memo, pre);
    for (int f = 0; f < 5; f++) gpuclass_parsed_free(&pre[f]);
    free(memo);
    return rc;
}

/* Combine runs into groups (group[r] in [0, n_groups), runs in row order) with the
   rollup's rules: sums, the first supported model in row order, the mixed bits.  -1, or
   the first run whose group's slices would pass the int32 range. */
static int64_t gpuclass_merge_runs(int64_t n_runs, const int64_t *group, const int32_t *totals,
                                   const int32_t *counts, int n_cards, int64_t n_groups,
                                   int32_t *out, int32_t *out_counts) {
    gpuclass_rollup_clear(out, out_counts, n_cards, n_groups);
    for (int64_t r = 0; r < n_runs; r++) {
        const int32_t *t = totals + r * GPUCLASS_ROLLUP_COLUMNS;
        int32_t *row = out + group[r] * GPUCLASS_ROLLUP_COLUMNS;
        if (row[GPUCLASS_R_SLICES] > INT32_MAX - t[GPUCLASS_R_SLICES]) return r;
        for (int c = 0; c < GPUCLASS_ROLLUP_COLUMNS; c++)
            if (c != GPUCLASS_R_MODEL && c != GPUCLASS_R_MIXED) row[c] += t[c];
        if (row[GPUCLASS_R_MODEL] == -1) row[GPUCLASS_R_MODEL] = t[GPUCLASS_R_MODEL];
        else if (t[GPUCLASS_R_MODEL] != -1 && t[GPUCLASS_R_MODEL] != row[GPUCLASS_R_MODEL])
            row[GPUCLASS_R_MIXED] |= GPUCLASS_MIXED_MODELS;
        row[GPUCLASS_R_MIXED] |= t[GPUCLASS_R_MIXED] & GPUCLASS_MIXED_MODELS;
        if (row[GPUCLASS_R_CARDS] > 0 && row[GPUCLASS_R_UNSUPPORTED] > 0)
            row[GPUCLASS_R_MIXED] |= GPUCLASS_MIXED_UNSUPPORTED;
        if (n_cards) {
            int32_t *oc = out_counts + group[r] * n_cards;
            const int32_t *rc = counts + r * n_cards;
            for (int c = 0; c < n_cards; c++) oc[c] += rc[c];
        }
    }
    return -1;
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

#endif

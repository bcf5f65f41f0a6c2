/* A column of cells as the kernels read it: Arrow's buffers where they are.

   audit.pxi fills a gpuclass_col from a contract.audit.Column (whose checks make every
   read here stay inside its buffers): string cells by offsets into one byte buffer (32-
   or 64-bit offsets), integer cells as int64, a validity bitmap, and dictionary columns
   as indices into a column of their entries. */
#ifndef GPUCLASS_COLUMN_H
#define GPUCLASS_COLUMN_H

#include "gpuclass_common.h"
#include "gpuclass_codes.h"

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
    int kind;                 /* GPUCLASS_ABSENT, _STR32, _STR64, _INT, _DICT */
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

/* The bytes of text cell i (STR32 or STR64) and their count. */
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

#endif

/* The rollup: per-group totals of classified rows (gpuclass.constants' R_* columns), and
   groups of such totals merged.  One set of rules for every path that adds to a group's
   row (rollup.pxi's rollup, the audit row pass, merge_runs; the twin's are
   contract/rollup.py's, tested equal):

   - each column sums (supported cards and their slices, unsupported GPUs, companions,
     virtual functions, invalid records); the slices stay in the int32 range or the
     addition is refused;
   - the row's model is the first supported card in row order (-1: none yet), and a
     second model sets MIXED_MODELS (gpuclass_rollup_model);
   - supported cards beside unsupported GPUs set MIXED_UNSUPPORTED (gpuclass_rollup_mixed). */
#ifndef GPUCLASS_ROLLUP_H
#define GPUCLASS_ROLLUP_H

#include "gpuclass_common.h"
#include "gpuclass_codes.h"

/* A group's row meets card model `model` (-1: none): the first is kept, another sets
   MIXED_MODELS.  Without a branch: the row pass calls it for every GPU row. */
static GPUCLASS_ALWAYS_INLINE void gpuclass_rollup_model(int32_t *row, int32_t model) {
    int32_t mdl = row[GPUCLASS_R_MODEL];
    row[GPUCLASS_R_MIXED] |= GPUCLASS_MIXED_MODELS & -(int32_t)((model != -1) & (mdl != -1) & (mdl != model));
    row[GPUCLASS_R_MODEL] = mdl == -1 ? model : mdl;
}

/* Supported cards beside unsupported GPUs: MIXED_UNSUPPORTED (once the sums are in). */
static GPUCLASS_ALWAYS_INLINE void gpuclass_rollup_mixed(int32_t *row) {
    row[GPUCLASS_R_MIXED] |= GPUCLASS_MIXED_UNSUPPORTED
                             & -(int32_t)((row[GPUCLASS_R_CARDS] > 0) & (row[GPUCLASS_R_UNSUPPORTED] > 0));
}

/* Add one checked row (status <= INVALID, a supported row's card in [0, n_cards) when
   counts is given) to its group's totals (int32 columns) and, with counts, to its per-card
   count.  0, or GPUCLASS_RU_OVERFLOW + 1 when the group's slices would pass the int32 range. */
static GPUCLASS_ALWAYS_INLINE int gpuclass_rollup_add(
        int32_t *GPUCLASS_RESTRICT row, int32_t *GPUCLASS_RESTRICT counts,
        uint32_t st, int16_t card, uint16_t slices) {
    /* status -> the column it counts in (NOT_GPU never gets here) */
    static const uint8_t column[8] = {0, GPUCLASS_R_CARDS, GPUCLASS_R_UNSUPPORTED, GPUCLASS_R_COMPANIONS,
                                      GPUCLASS_R_VFS, GPUCLASS_R_INVALID, 0, 0};
    int32_t sup = st == GPUCLASS_ST_SUPPORTED, c = card;
    if (sup) {
        if (GPUCLASS_UNLIKELY(row[GPUCLASS_R_SLICES] > INT32_MAX - (int32_t)slices))
            return GPUCLASS_RU_OVERFLOW + 1;
        if (counts != NULL)
            counts[c] += 1;
    }
    row[column[st]] += 1;
    row[GPUCLASS_R_SLICES] += (int32_t)slices & -sup;
    gpuclass_rollup_model(row, sup ? c : -1);
    gpuclass_rollup_mixed(row);
    return 0;
}

/* n_groups empty rows (zeros, model -1) and, with counts, their zero per-card counts. */
static GPUCLASS_ALWAYS_INLINE void gpuclass_rollup_clear(int32_t *out, int32_t *counts, int n_cards,
                                                        int64_t n_groups) {
    for (int64_t g = 0; g < n_groups; g++) {
        int32_t *row = out + g * GPUCLASS_ROLLUP_COLUMNS;
        for (int c = 0; c < GPUCLASS_ROLLUP_COLUMNS; c++) row[c] = 0;
        row[GPUCLASS_R_MODEL] = -1;
    }
    if (counts != NULL && n_groups > 0 && n_cards > 0)
        memset(counts, 0, (size_t)n_groups * (size_t)n_cards * sizeof(int32_t));
}

/* Merge one group's totals t into row (the same rules as adding t's rows one by one):
   0, or GPUCLASS_RU_OVERFLOW + 1 when the slices would pass the int32 range. */
static GPUCLASS_ALWAYS_INLINE int gpuclass_rollup_merge(int32_t *row, const int32_t *t) {
    if (row[GPUCLASS_R_SLICES] > INT32_MAX - t[GPUCLASS_R_SLICES]) return GPUCLASS_RU_OVERFLOW + 1;
    for (int c = 0; c < GPUCLASS_ROLLUP_COLUMNS; c++)
        if (c != GPUCLASS_R_MODEL && c != GPUCLASS_R_MIXED) row[c] += t[c];
    gpuclass_rollup_model(row, t[GPUCLASS_R_MODEL]);
    row[GPUCLASS_R_MIXED] |= t[GPUCLASS_R_MIXED] & GPUCLASS_MIXED_MODELS;
    gpuclass_rollup_mixed(row);
    return 0;
}

/* Per-group totals in one pass over the rows, a chunk at a time.  Most rows are not
   GPU functions (NOT_GPU adds nothing to any column), so a chunk is first checked
   (status, group and card ranges) and its other rows gathered without a branch; then
   only those rows are added to their group's row of `out`.  `gw` is the width of a
   group id (4 or 8 bytes; 0: no groups, everything in group 0).  The first bad row of
   the first chunk that has one is reported (the twin checks chunk by chunk too). */
static GPUCLASS_ALWAYS_INLINE Py_ssize_t gpuclass_rollup_body(
        Py_ssize_t n, const uint8_t *GPUCLASS_RESTRICT status,
        const int16_t *GPUCLASS_RESTRICT card, const uint16_t *GPUCLASS_RESTRICT slices,
        const void *group, const int gw, int64_t n_groups,
        int32_t *GPUCLASS_RESTRICT out, int32_t *GPUCLASS_RESTRICT counts, int n_cards, int *what) {
    int32_t pick[GPUCLASS_ROLLUP_CHUNK];
    const int32_t *g32 = (const int32_t *)group;
    const int64_t *g64 = (const int64_t *)group;
    gpuclass_rollup_clear(out, counts, n_cards, n_groups);
    for (Py_ssize_t base = 0; base < n; base += GPUCLASS_ROLLUP_CHUNK) {
        Py_ssize_t m = n - base < GPUCLASS_ROLLUP_CHUNK ? n - base : GPUCLASS_ROLLUP_CHUNK;
        const uint8_t *st_c = status + base;
        uint32_t smax = 0, cbad = 0;
        uint64_t gmax = 0;
        Py_ssize_t k = 0;
        for (Py_ssize_t j = 0; j < m; j++) {
            uint32_t st = st_c[j];
            smax = st > smax ? st : smax;
            if (gw) {
                /* a negative id is huge here */
                uint64_t g = gw == 4 ? (uint64_t)(int64_t)g32[base + j] : (uint64_t)g64[base + j];
                gmax = g > gmax ? g : gmax;
            }
            if (counts != NULL)  /* a card outside [0, n_cards) on a supported row */
                cbad |= (st == GPUCLASS_ST_SUPPORTED)
                        & ((uint32_t)(int32_t)card[base + j] >= (uint32_t)n_cards);
            pick[k] = (int32_t)j;
            k += st != 0;
        }
        if (GPUCLASS_UNLIKELY(smax > GPUCLASS_ST_INVALID || cbad || (gw && gmax >= (uint64_t)n_groups))) {
            for (Py_ssize_t j = 0; j < m; j++) {
                uint64_t g = gw == 4 ? (uint64_t)(int64_t)g32[base + j]
                                     : gw ? (uint64_t)g64[base + j] : 0;
                if (st_c[j] > GPUCLASS_ST_INVALID) { *what = GPUCLASS_RU_STATUS; return base + j; }
                if (gw && g >= (uint64_t)n_groups) { *what = GPUCLASS_RU_GROUP; return base + j; }
                if (counts != NULL && st_c[j] == GPUCLASS_ST_SUPPORTED
                        && (uint32_t)(int32_t)card[base + j] >= (uint32_t)n_cards) {
                    *what = GPUCLASS_RU_CARD;
                    return base + j;
                }
            }
        }
        for (Py_ssize_t q = 0; q < k; q++) {
            Py_ssize_t i = base + pick[q];
            int64_t g = gw == 4 ? g32[i] : gw ? g64[i] : 0;
            int bad = gpuclass_rollup_add(out + g * GPUCLASS_ROLLUP_COLUMNS,
                                          counts != NULL ? counts + g * n_cards : NULL,
                                          status[i], card[i], slices[i]);
            if (GPUCLASS_UNLIKELY(bad)) { *what = bad - 1; return i; }
        }
    }
    return -1;
}

/* -1, or the first bad row (`what`: a GPUCLASS_RU_* code). */
static GPUCLASS_NOINLINE Py_ssize_t gpuclass_rollup(
        Py_ssize_t n, const uint8_t *status, const int16_t *card, const uint16_t *slices,
        const void *group, int gw, int64_t n_groups, int32_t *out, int32_t *counts, int n_cards,
        int *what) {
    if (gw == 8)
        return gpuclass_rollup_body(n, status, card, slices, group, 8, n_groups, out, counts, n_cards, what);
    if (gw == 4)
        return gpuclass_rollup_body(n, status, card, slices, group, 4, n_groups, out, counts, n_cards, what);
    return gpuclass_rollup_body(n, status, card, slices, NULL, 0, n_groups, out, counts, n_cards, what);
}

/* Combine runs into groups (group[r] in [0, n_groups), runs in row order) with the
   rollup's rules.  -1, or the first run whose group's slices would pass the int32 range. */
static int64_t gpuclass_merge_runs(int64_t n_runs, const int64_t *group, const int32_t *totals,
                                   const int32_t *counts, int n_cards, int64_t n_groups,
                                   int32_t *out, int32_t *out_counts) {
    gpuclass_rollup_clear(out, out_counts, n_cards, n_groups);
    for (int64_t r = 0; r < n_runs; r++) {
        if (gpuclass_rollup_merge(out + group[r] * GPUCLASS_ROLLUP_COLUMNS,
                                  totals + r * GPUCLASS_ROLLUP_COLUMNS))
            return r;
        if (n_cards) {
            int32_t *oc = out_counts + group[r] * n_cards;
            const int32_t *rc = counts + r * n_cards;
            for (int c = 0; c < n_cards; c++) oc[c] += rc[c];
        }
    }
    return -1;
}

#endif

/* The audit row pass: device tables audited straight from their columns.  Hex cells are
   parsed from Arrow string buffers (or integer columns taken as they are; gpuclass_cell.h),
   classified by the matcher (gpuclass_match.h) and rolled up per run of equal server keys
   (gpuclass_keys.h, gpuclass_rollup.h), a chunk of rows at a time, in one pass.

   audit.pxi hands in the columns (gpuclass_col) and the matcher's context, and reads
   back the runs (first row, totals, per-card counts), the rows with a problem (first
   problem of each, coded) and the rows of unsupported GPUs (gpuclass_vec.h vectors). */
#ifndef GPUCLASS_AUDIT_H
#define GPUCLASS_AUDIT_H

#include <stdlib.h>

#include "gpuclass_common.h"
#include "gpuclass_codes.h"
#include "gpuclass_cell.h"
#include "gpuclass_keys.h"
#include "gpuclass_match.h"
#include "gpuclass_rollup.h"
#include "gpuclass_vec.h"

/* The most hex digits of each ID column: vendor, device, class, subvendor, subdevice. */
static const int gpuclass_audit_width[5] = {GPUCLASS_WIDTH_VENDOR, GPUCLASS_WIDTH_DEVICE, GPUCLASS_WIDTH_CLASS,
                                            GPUCLASS_WIDTH_SUBVENDOR, GPUCLASS_WIDTH_SUBDEVICE};

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
    uint32_t cval[5][GPUCLASS_CELL_CHUNK];
    uint8_t cst[5][GPUCLASS_CELL_CHUNK];
    int8_t cnd[5][GPUCLASS_CELL_CHUNK];
    uint16_t vendor[GPUCLASS_CELL_CHUNK], device[GPUCLASS_CELL_CHUNK];
    uint16_t subvendor[GPUCLASS_CELL_CHUNK], subdevice[GPUCLASS_CELL_CHUNK];
    uint32_t class_code[GPUCLASS_CELL_CHUNK], flags[GPUCLASS_CELL_CHUNK];
    uint8_t has_sub[GPUCLASS_CELL_CHUNK], status[GPUCLASS_CELL_CHUNK];
    int16_t card[GPUCLASS_CELL_CHUNK];
    uint16_t slices[GPUCLASS_CELL_CHUNK];
    const gpuclass_col *server = &cols[0];
    int64_t run = -1;
    int nameless = 0;  /* the current run's */
    for (int64_t lo = 0; lo < n; lo += GPUCLASS_CELL_CHUNK) {
        int64_t m = n - lo < GPUCLASS_CELL_CHUNK ? n - lo : GPUCLASS_CELL_CHUNK;
        for (int f = 0; f < 5; f++)
            gpuclass_parse_column(&cols[f + 1], lo, m, gpuclass_audit_width[f], &memo[f], &pre[f],
                                  cval[f], cst[f], cnd[f]);
        for (int64_t j = 0; j < m; j++) {
            int st[5] = {cst[0][j], cst[1][j], cst[2][j], cst[3][j], cst[4][j]};
            uint32_t cls = st[2] == GPUCLASS_CELL_OK ? gpuclass_class_code(cval[2][j], cnd[2][j]) : 0;
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

#endif

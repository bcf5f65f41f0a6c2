/* Plain CSV lines of a device table, split into their cells (gpuclass/_native/csv.pxi;
 * twin: csv_py.py).  A line is plain when the csv module's default dialect reads it as one
 * row of `width` cells that are its bytes as they lie (or between a pair of quotes), and
 * Python's str.strip() would not find it blank:
 *
 *   - it ends at '\n' (or at the end of the text), a '\r' just before it dropped;
 *   - no other '\r', no NUL, and at least one ASCII byte that is not whitespace;
 *   - `width` cells split at commas, each either without '"', or opening and closing with
 *     '"' and none between (a comma between them is the cell's);
 *   - no cell longer than `limit` bytes (the csv module's field limit counts characters,
 *     never more than bytes).
 *
 * The scan stops before the first line that is not plain (the caller reads it as the csv
 * module does) or after `room` rows.  A plain line's wanted cells are copied as it ends.
 */
#ifndef GPUCLASS_CSV_H
#define GPUCLASS_CSV_H

#include <stdint.h>
#include <string.h>

/* What a byte is to the scan: 0 an ordinary character (ASCII, not whitespace, not one
 * the scan stops at), else a mask of these: CSV_STOP ends an unquoted cell, CSV_QSTOP a
 * quoted one (the comma only the former). */
enum { CSV_SPACE = 1, CSV_WIDE = 2, CSV_STOP = 4, CSV_QSTOP = 8 };

static inline uint8_t gpuclass_csv_class(uint8_t c) {
    if (c >= 0x80) return CSV_WIDE;
    if (c == ',') return CSV_STOP;
    if (c == '"' || c == '\r' || c == 0) return CSV_STOP | CSV_QSTOP;
    if (c == ' ' || c == '\t' || c == 0x0b || c == 0x0c || (c >= 0x1c && c <= 0x1f)) return CSV_SPACE;
    return 0;
}

/* A cell copied: a short one as 16 bytes in one move where the text has them to read (the
 * output has 16 bytes of room past its cells), else as its own length. */
static inline void gpuclass_csv_put(const uint8_t* text, int64_t n, int64_t a, int64_t b, uint8_t* out) {
    int64_t len = b - a;
    if (len <= 16 && a + 16 <= n) {
        memcpy(out, text + a, 16);
    } else {
        memcpy(out, text + a, (size_t) len);
    }
}

/* From `pos`, up to `room` plain lines of `text[0:n]`, each split into `width` cells; cell
 * c goes to output column slot[c] (-1: not wanted), one of `k`: its bytes appended to
 * data + j * cap (cap: n - pos + 16 bytes each), its Arrow end offset to
 * offsets[j * (room + 1) + row + 1] (offsets[j * (room + 1)] = 0).  `span` is room for
 * 2 * k positions.  Returns the rows; `*end` is where the scan stopped (the start of the
 * line it refused, or after the last row). */
static int64_t gpuclass_csv_split(const uint8_t* text, int64_t n, int64_t pos, int32_t width,
                                  const int32_t* slot, int32_t k, int64_t limit, int64_t room,
                                  int32_t* offsets, uint8_t* data, int64_t cap, int64_t* span,
                                  int64_t* end) {
    uint8_t cls[256];
    for (int c = 0; c < 256; c++) cls[c] = gpuclass_csv_class((uint8_t) c);
    int64_t rows = 0;
    for (int32_t j = 0; j < k; j++) offsets[j * (room + 1)] = 0;
    while (pos < n && rows < room) {
        const uint8_t* nl = (const uint8_t*) memchr(text + pos, '\n', (size_t) (n - pos));
        int64_t stop = nl ? (int64_t) (nl - text) : n;  /* the line's end, without '\n' */
        int64_t next = nl ? stop + 1 : n;
        if (stop > pos && text[stop - 1] == '\r') stop--;
        int32_t cell = 0;
        int plain = 1, seen = 0;
        int64_t p = pos;
        /* one cell per turn: p at its first byte */
        for (;;) {
            int64_t a, b, q;
            if (p < stop && text[p] == '"') {
                q = p + 1;
                while (q < stop && !(cls[text[q]] & CSV_QSTOP)) q++;
                if (q >= stop || text[q] != '"') { plain = 0; break; }  /* unclosed, '\r', NUL */
                a = p + 1; b = q;
                q++;  /* past the closing quote */
                seen = 1;  /* a quote is no whitespace */
                if (q < stop && text[q] != ',') { plain = 0; break; }
            } else {
                q = p;
                while (q < stop) {
                    uint8_t c = cls[text[q]];
                    if (c & CSV_STOP) break;
                    seen |= c == 0;
                    q++;
                }
                if (q < stop && text[q] != ',') { plain = 0; break; }  /* a quote, '\r' or NUL */
                a = p; b = q;
            }
            if (b - a > limit || cell >= width) { plain = 0; break; }
            int32_t j = slot[cell];
            if (j >= 0) { span[2 * j] = a; span[2 * j + 1] = b; }
            cell++;
            if (q >= stop) break;
            seen = 1;  /* a comma is no whitespace */
            p = q + 1;
        }
        if (!plain || !seen || cell != width) break;
        for (int32_t j = 0; j < k; j++) {
            int32_t* off = offsets + j * (room + 1);
            int64_t at = off[rows];
            gpuclass_csv_put(text, n, span[2 * j], span[2 * j + 1], data + j * cap + at);
            off[rows + 1] = (int32_t) (at + span[2 * j + 1] - span[2 * j]);
        }
        rows++;
        pos = next;
    }
    *end = pos;
    return rows;
}

#endif

/* The pci.ids tokenizer's line finder (the tokenizer itself is Cython: pciids.pxi). */
#ifndef GPUCLASS_PCIIDS_H
#define GPUCLASS_PCIIDS_H

#include "gpuclass_common.h"


/* Offset of the first newline in s[0:n], or n: eight bytes at a time (a
   line of pci.ids is ~40 bytes, where a libc memchr call costs more in
   setup than in scanning). */
static inline Py_ssize_t gpuclass_line_end(const unsigned char *s, Py_ssize_t n, int *high) {
    /* Also reports whether the line may hold a non-ASCII byte (a byte with
       the high bit set before the newline, or in the word that holds it),
       so that only such lines need a UTF-8 check. */
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    const uint64_t nl = 0x0a0a0a0a0a0a0a0aULL;
    uint64_t seen = 0;
    Py_ssize_t i = 0;
    while (i + 8 <= n) {
        uint64_t w, x;
        memcpy(&w, s + i, 8);
        seen |= w;
        x = w ^ nl;
        uint64_t hit = (x - ones) & ~x & highs;
        if (hit) {
#if PY_LITTLE_ENDIAN
            *high = (seen & highs) != 0;
            return i + (__builtin_ctzll(hit) >> 3);
#else
            break;
#endif
        }
        i += 8;
    }
    while (i < n && s[i] != 10) { seen |= s[i]; i++; }
    *high = (seen & highs) != 0;
    return i;
}
#endif

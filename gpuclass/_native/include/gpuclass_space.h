/* Whitespace as Python's str.isspace defines it, read from UTF-8 bytes: the one rule for
   what a cell's blanks are (hex cells strip it, server keys of nothing else name no
   server; gpuclass.ids.cell_parts is its Python form).

   The characters: ASCII 0x09-0x0d, 0x1c-0x1f and space; U+0085, U+00A0 (2 bytes);
   U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 (3 bytes).  Each encoding
   starts with a lead byte and is complete, so its bytes are that character wherever they
   stand, as Python's decoder (errors="surrogateescape") reads them: a byte outside UTF-8
   is never whitespace. */
#ifndef GPUCLASS_SPACE_H
#define GPUCLASS_SPACE_H

#include "gpuclass_common.h"

static GPUCLASS_ALWAYS_INLINE int gpuclass_space1(uint8_t c) {
    return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
}

/* Three bytes a, b, c as one of the 3-byte whitespace characters? */
static GPUCLASS_ALWAYS_INLINE int gpuclass_space3(uint8_t a, uint8_t b, uint8_t c) {
    uint32_t cp = ((uint32_t)a << 16) | ((uint32_t)b << 8) | c;
    return cp == 0xe19a80 || (cp >= 0xe28080 && cp <= 0xe2808a) || cp == 0xe280a8
           || cp == 0xe280a9 || cp == 0xe280af || cp == 0xe2819f || cp == 0xe38080;
}

/* The bytes of the whitespace character s[0:n] starts with, or 0. */
static GPUCLASS_ALWAYS_INLINE int gpuclass_space_head(const uint8_t *s, int64_t n) {
    if (n < 1) return 0;
    if (s[0] < 0x80) return gpuclass_space1(s[0]);
    if (n >= 2 && s[0] == 0xc2 && (s[1] == 0x85 || s[1] == 0xa0)) return 2;
    return n >= 3 && gpuclass_space3(s[0], s[1], s[2]) ? 3 : 0;
}

/* The bytes of the whitespace character s[0:n] ends with, or 0.  (No 3-byte one has 0xc2
   as its middle byte, so the 2-byte reading of a tail is never a 3-byte character's.) */
static GPUCLASS_ALWAYS_INLINE int gpuclass_space_tail(const uint8_t *s, int64_t n) {
    if (n < 1) return 0;
    uint8_t c = s[n - 1];
    if (c < 0x80) return gpuclass_space1(c);
    if (n >= 2 && s[n - 2] == 0xc2 && (c == 0x85 || c == 0xa0)) return 2;
    return n >= 3 && gpuclass_space3(s[n - 3], s[n - 2], c) ? 3 : 0;
}

/* s[0:n] without its leading and trailing whitespace (*n updated): what str.strip() leaves. */
static GPUCLASS_ALWAYS_INLINE const uint8_t *gpuclass_strip(const uint8_t *s, int64_t *n) {
    int64_t len = *n;
    int k;
    while ((k = gpuclass_space_head(s, len)) != 0) { s += k; len -= k; }
    while ((k = gpuclass_space_tail(s, len)) != 0) len -= k;
    *n = len;
    return s;
}

#endif

/* KeyIndex's hash table probes (the table is built and read in keyindex.pxi). */
#ifndef GPUCLASS_KEYINDEX_H
#define GPUCLASS_KEYINDEX_H

#include "gpuclass_common.h"

typedef struct { uint32_t key; int32_t pos; } gpuclass_slot32;

/* Probe for k from its home slot h.  The first two slots are read without
   branching on their contents (a hit there is the common case at a load
   factor of 1/2), so independent queries overlap in the pipeline; longer
   runs fall back to the loop. */
static inline int32_t gpuclass_probe32(const gpuclass_slot32 *t, uint64_t mask, uint64_t h, uint32_t k) {
    gpuclass_slot32 a = t[h], b = t[(h + 1) & mask];
    int32_t r = (b.key == k && b.pos >= 0) ? b.pos : -1;
    r = (a.key == k && a.pos >= 0) ? a.pos : r;
    if (r >= 0 || a.pos < 0 || b.pos < 0)
        return a.pos < 0 ? -1 : r;
    h = (h + 2) & mask;
    for (;;) {
        gpuclass_slot32 c = t[h];
        if (c.pos < 0) return -1;
        if (c.key == k) return c.pos;
        h = (h + 1) & mask;
    }
}

/* 32-bit tables hash with a 32-bit multiply (one instruction on every
   target, and the top bits mix well for the clustered PCI ID keys). */
static inline uint32_t gpuclass_mix32(uint32_t k, int shift32) {
    return (uint32_t)(k * 0x9E3779B1u) >> shift32;
}


#endif

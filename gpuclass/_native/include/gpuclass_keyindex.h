/* KeyIndex's hash table probes and its keyed hash (the table is built and read in
   keyindex.pxi). */
#ifndef GPUCLASS_KEYINDEX_H
#define GPUCLASS_KEYINDEX_H

#include "gpuclass_common.h"

typedef struct { uint32_t key; int32_t pos; } gpuclass_slot32;

/* Probe for k from its home slot h.  The first two slots are read without
   branching on their contents (a hit there is the common case at a load
   factor of 1/8), so independent queries overlap in the pipeline; longer
   runs fall back to the loop.  The index is built so that no run of occupied
   slots is longer than GPUCLASS_MAX_RUN, which bounds every probe. */
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

/* The keyed hash: a multiply-xor with two random seeds of the index (an odd multiplier),
   then MurmurHash3's 64-bit finalizer.  The pci.ids keys are chosen by whoever wrote the
   file: a fixed hash lets them choose keys that all land in one run (200k such keys took
   13 s a lookup); with seeds drawn per index, nobody can aim at a slot. */
static inline uint64_t gpuclass_keyed_hash(uint64_t k, uint64_t s0, uint64_t s1) {
    k = (k ^ s0) * s1;
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

/* The longest run of occupied slots an index may have; longer (bad luck, or keys
   that found the seeds out) and it is built again with new seeds, and after a few
   tries answers by binary search instead. */
#define GPUCLASS_MAX_RUN 64

/* Position of k among n sorted keys, or -1: the fallback lookup. */
static inline int32_t gpuclass_bsearch(const uint64_t *keys, Py_ssize_t n, uint64_t k) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + ((hi - lo) >> 1);
        if (keys[mid] < k) lo = mid + 1; else hi = mid;
    }
    return (lo < n && keys[lo] == k) ? (int32_t)lo : -1;
}

#endif

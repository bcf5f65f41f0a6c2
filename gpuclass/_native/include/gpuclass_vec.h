/* Growable arrays of fixed-size items, for outputs whose length a pass finds as it goes
   (malloc'd; the caller frees `p`, or hands it to a numpy array: audit.pxi's vec_array). */
#ifndef GPUCLASS_VEC_H
#define GPUCLASS_VEC_H

#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "gpuclass_common.h"

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
   as any other.  0, or -1 when out of memory (the vector is left as it was). */
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

/* The next item's room (the vector grown where full), or NULL when out of memory. */
static GPUCLASS_ALWAYS_INLINE void *gpuclass_vec_push(gpuclass_vec *v) {
    if (v->n == v->cap && gpuclass_vec_grow(v) == NULL) return NULL;
    return (char *)v->p + (size_t)(v->n++) * v->item;
}

#endif

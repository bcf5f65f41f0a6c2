/* What every gpuclass kernel header uses: compiler hints and the hex digit table.

   These headers are included (through gpuclass/_native/kernels.pxd) into the one
   translation unit of gpuclass._core, so static functions and tables are fine. */
#ifndef GPUCLASS_COMMON_H
#define GPUCLASS_COMMON_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define GPUCLASS_NOINLINE __attribute__((noinline))
#define GPUCLASS_ALWAYS_INLINE inline __attribute__((always_inline))
#define GPUCLASS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define GPUCLASS_RESTRICT __restrict__
#define GPUCLASS_PREFETCH(p) __builtin_prefetch((const void *)(p), 0, 1)
#else
#define GPUCLASS_NOINLINE
#define GPUCLASS_ALWAYS_INLINE inline
#define GPUCLASS_UNLIKELY(x) (x)
#define GPUCLASS_RESTRICT
#define GPUCLASS_PREFETCH(p) ((void)(p))
#endif

#include "gpuclass_hex.h"  /* the hex digit table */

#endif

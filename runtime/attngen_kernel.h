/* attngen_kernel.h — what generated kernel files need besides attngen.h. Not part of the public API. */
#ifndef ATTNGEN_KERNEL_H
#define ATTNGEN_KERNEL_H

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "attngen.h"

#if defined(__GNUC__) || defined(__clang__)
#define ATTNGEN_AVX2 __attribute__((target("avx2,fma")))
#else
#define ATTNGEN_AVX2
#endif

static inline size_t attngen_round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }

/* Per-thread scratch of one work item, in floats: Qᵀ tile, score tile, output accumulator, and six per-row
 * arrays (max, sum, rescale, visible keys, key limit, spare). Regions start on 64-byte boundaries. */
static inline size_t attngen_scratch_floats(size_t mp, size_t d, size_t keys, size_t width)
{
  return attngen_round_up(d * mp, 16) + attngen_round_up(keys * mp, 16) +
         attngen_round_up(mp * attngen_round_up(d, width), 16) + 6 * mp;
}

#endif /* ATTNGEN_KERNEL_H */

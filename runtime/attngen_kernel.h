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
static inline float attngen_maxf_(float a, float b) { return a > b ? a : b; }

/* Per kv head of a work item, in floats: the scaled Q tile (prefill: Qᵀ [d][mp], decode: [mp][dp]), the output
 * accumulator [mp][dp] (dp = d rounded up to the vector width), running max and sum [mp]. Multiples of 16
 * floats keep every region 64-byte aligned. */
static inline size_t attngen_state_floats(size_t mp, size_t d, size_t width)
{
  return 2 * attngen_round_up(mp * attngen_round_up(d, width), 16) +
         attngen_round_up(2 * mp, 16);
}

/* Per-thread scratch of one work item: score tile [keys][mp], packed V tile [keys][dp], four per-row arrays
 * (rescale, visible keys, key limit, spare), then one state per kv head of the item. mp is a multiple of 4. */
static inline size_t attngen_scratch_floats(size_t mp, size_t d, size_t keys, size_t width, size_t heads)
{
  return attngen_round_up(keys * mp, 16) + attngen_round_up(keys * attngen_round_up(d, width), 16) + 4 * mp +
         heads * attngen_state_floats(mp, d, width);
}

#endif /* ATTNGEN_KERNEL_H */

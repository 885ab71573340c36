/* SPDX-License-Identifier: MIT */
/* attngen_kernel.h — what generated kernel files need besides attngen.h. Not part of the public API.
 * (Work-cut and scratch numbers are not computed here: the generator's plan emits them.) */
#ifndef ATTNGEN_KERNEL_H
#define ATTNGEN_KERNEL_H

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "attngen.h"
#include "attngen_convert.h"

/* The ISA preludes (templates/isa/) define their helpers in the generated .c file. A model whose kernels need only
 * some of them (e.g. only GQA decode, whose softmax runs down the columns with no horizontal reduction) must still
 * build warning-free under -Wall -Werror.
 * Microkernels are never inlined: gcc inlines a microkernel that only one kernel of the file calls, and the same
 * decode kernel then ran 0.80x (h64/kv8/d128, a config with one mask and phase vs the catalog's two masks);
 * kept out of line, the code no longer depends on what else the file holds (prefill: no difference either way). */
#if defined(__GNUC__) || defined(__clang__)
#define ATTNGEN_HELPER static inline __attribute__((unused))
#define ATTNGEN_NOINLINE __attribute__((noinline))
#else
#define ATTNGEN_HELPER static inline
#define ATTNGEN_NOINLINE
#endif

/* A compiler barrier for memory: nothing loaded before it is reused after it. The row-wise decode Q·Kᵀ
 * microkernels put one between keys, so each key reloads Q from L1 instead of the compiler keeping every Q vector
 * of the block live across the keys and spilling them (gcc -O2: 29-63 stack accesses a call on x86, 378-2,102 on
 * NEON, make bench-neon-model). Nothing is emitted for it. */
#if defined(__GNUC__) || defined(__clang__)
#define ATTNGEN_RELOAD() __asm__ __volatile__("" ::: "memory")
#else
#define ATTNGEN_RELOAD() ((void)0)
#endif

static inline size_t attngen_round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }
static inline float attngen_maxf_(float a, float b) { return a > b ? a : b; }

/* The keys of a masked tile that any of rows [r0, r0 + nr) sees: the largest of their visible-key counts lim[r] (a
 * float per row, as the softmax's mask reads them). A prefill kernel skips the Q·Kᵀ and P·V work of a row block
 * past it: the softmax masks those scores to -inf whatever S holds there, so their P is exactly 0. */
static inline int attngen_keys_seen(const float *lim, int r0, int nr)
{
  float most = 0.0f;
  for (int r = r0; r < r0 + nr; ++r) most = lim[r] > most ? lim[r] : most;
  return (int)most;
}

/* RoPE, the one rotation code: y[c * ys] = mul * (x rotated)[c] for c < d, x one head's row of d floats.
 * cs holds the token's cos and sin in float: cos of pair p at cs[p], sin at cs[rotary_dim / 2 + p] (the runtime
 * computes them from a float64 angle, pos * inv_freq[p]). Pair p is (p, p + rotary_dim / 2) for the half style,
 * (2p, 2p + 1) for the interleaved one; it becomes (x0 cos - x1 sin, x1 cos + x0 sin). Dims from rotary_dim on
 * are copied. Each pair is read before it is written, so y == x (ys 1) rotates in place. Generated kernels call it
 * while packing Q (mul = softmax scale, ys = the tile's row stride); the runtime's cache append for new K rows.
 * Pairs below p0 are left to the caller: a prefill kernel rotates the half style's first pairs a vector at a time
 * (gcc -O2 leaves these loops scalar) and passes the first pair it did not do; everyone else passes 0. */
static inline void attngen_rope_rotate(const attngen_rope *rope, const float *cs, const float *x, int d, float *y,
                                       ptrdiff_t ys, float mul, int p0)
{
  const int half = rope->rotary_dim / 2;
  const float *sn = cs + half;
  int p, c;
  if (rope->style == ATTNGEN_ROPE_INTERLEAVED) {
    for (p = p0; p < half; ++p) {
      const float x0 = x[2 * p], x1 = x[2 * p + 1];
      y[2 * p * ys] = (x0 * cs[p] - x1 * sn[p]) * mul;
      y[(2 * p + 1) * ys] = (x1 * cs[p] + x0 * sn[p]) * mul;
    }
  } else { /* two contiguous halves */
    for (p = p0; p < half; ++p) {
      const float x0 = x[p], x1 = x[half + p];
      y[p * ys] = (x0 * cs[p] - x1 * sn[p]) * mul;
      y[(half + p) * ys] = (x1 * cs[p] + x0 * sn[p]) * mul;
    }
  }
  for (c = 2 * half; c < d; ++c) y[c * ys] = x[c] * mul;
}

#endif /* ATTNGEN_KERNEL_H */

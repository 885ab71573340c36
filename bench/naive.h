/* SPDX-License-Identifier: MIT */
/* bench/naive.h: NAIVE reference attention for the benchmark plots only.
 * A plain C triple loop (query row x key x head_dim), fp32, no SIMD intrinsics, no tiling, no threads.
 * It is what "write it the obvious way" gives; it is not part of attngen and not a correctness oracle
 * for the tests (those live in tests/). Dense token-major layout, kv_capacity == kv_len, batch rows. */
#ifndef BENCH_NAIVE_H
#define BENCH_NAIVE_H

#include "attngen.h"

/* Returns 0, or -1 if scratch could not be allocated. Masks NONE and CAUSAL only. */
int naive_attention(const attngen_shape *shape, const attngen_args *args);

#endif

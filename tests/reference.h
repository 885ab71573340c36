/* SPDX-License-Identifier: MIT */
/* Float64 reference for attngen, written directly from the definition in runtime/attngen.h.
 * Deliberately naive: no tiling, no online softmax, no shortcuts; it shares no code with the kernels. */
#ifndef ATTNGEN_TEST_REFERENCE_H
#define ATTNGEN_TEST_REFERENCE_H

#include "attngen.h"

/* Does query row i of sequence b see key row j? (the mask rules of attngen.h, verbatim) */
int ref_visible(attngen_mask mask, const attngen_args *args, int b, int i, int j);

/* Computes, for the tensors described by args (strides honoured; zero strides mean the dense defaults,
 * computed here independently of the runtime):
 *   out[((b * q_len + i) * heads + h) * head_dim + e]   dense token-major, double
 *   lse[(b * heads + h) * q_len + i]                    natural-log log-sum-exp, -INFINITY for empty rows
 * lse may be NULL. Rows that see no key get zeros and lse = -INFINITY. */
void ref_attention(const attngen_shape *shape, const attngen_args *args, double *out, double *lse);

/* The same with RoPE (rope NULL or style NONE: none): each query row is rotated in float64 by its position,
 * args->q_pos[b * q_len + i] or else kv_len - q_len + i; each key row j of sequence b by k_pos[b * kv_len + j]
 * when k_pos is given, else K is taken as stored (already rotated, as attngen's cache holds it). The inverse
 * frequencies are recomputed here from rope's theta and scaling fields (ref_rope_inv_freq). */
void ref_attention_rope(const attngen_shape *shape, const attngen_args *args, const attngen_rope *rope,
                        const int32_t *k_pos, double *out, double *lse);
/* inv[p] for p < rotary_dim / 2, from theta and the scaling (HF's formulas, float64). */
void ref_rope_inv_freq(const attngen_rope *rope, double *inv);
/* The factor of every cos and sin, from the scaling fields: YaRN's attention factor (HF's formula), else 1. */
double ref_rope_cs_scale(const attngen_rope *rope);
/* y = x rotated by position pos (float64) with cos and sin times ref_rope_cs_scale, d dims; dims past rotary_dim
 * are copied. */
void ref_rope_rotate(const attngen_rope *rope, const double *inv, long long pos, const float *x, int d, double *y);

/* ALiBi's slope of query head h of `heads` (BLOOM's rule, max_bias for its 8), float64. */
double ref_alibi_slope(int heads, double max_bias, int h);

/* The dense-default rule for one tensor (rows = q_len for Q/O, kv_capacity or kv_len for K/V). */
attngen_strides ref_strides(attngen_strides s, int rows, int nheads, int head_dim);

#endif

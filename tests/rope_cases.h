/* SPDX-License-Identifier: MIT */
/* KV-cache append and the fused step with RoPE: the CK_STEP and CK_APPEND cases of the shared case
 * list (cases.c builds them, these run them). */
#ifndef ATTNGEN_TEST_ROPE_CASES_H
#define ATTNGEN_TEST_ROPE_CASES_H

#include "cases.h"

/* CK_STEP scenarios (test_case.variant). Every one runs two sequences of different lengths (300 and 37 + 300
 * tokens, or 40 and 1100 + 40: a ragged batch), appends every token's K/V through the step, and checks the outputs against the same
 * tokens' full causal prefill (one step per sequence, empty cache) and against the float64 reference (q and k
 * rotated in double). */
enum {
  STEP_DECODE1,  /* 300 decode steps of 1 token (DECODE kernel), after a 37-token prompt for sequence 1 */
  STEP_CHUNKED,  /* chunks of 7 tokens (PREFILL kernel: chunked prefill) */
  STEP_DECODE3,  /* decode steps of 3 tokens, explicit positions ending at 2^20 (the precision limit tested) */
  STEP_LONG,     /* sequence 1 prompt of 1100 tokens, then 40 decode steps: a long cache, so the decode kernel
                    splits the KV range (split-KV) and sequence 0's later splits lie wholly beyond its causal limit */
  STEP_HEAD_MAJOR, /* as STEP_DECODE1 on a head-major cache, [b][kv_heads][capacity][head_dim] through the cache
                      strides: the layout that MHA decode reads fastest (README, Layout), appended and read in place */
  STEP_COUNT_
};
const char *rope_step_name(int variant);

/* A table's RoPE, when the kernel of shape s bound from it has one (NULL otherwise): the bind() rule. */
const attngen_rope *rope_of(const attngen_table *t, const attngen_shape *s);

int rope_run_step(const test_case *c, case_result *r);
int rope_run_append(const test_case *c, case_result *r);
/* The reference's YaRN frequencies and attention factor against transformers' numbers (0: agree). */
int rope_known_values(case_result *r);

#endif

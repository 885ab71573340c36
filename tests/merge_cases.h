/* SPDX-License-Identifier: MIT */
/* attngen_merge_states: the CK_MERGE cases of the shared case list (cases.c builds them, these run them). */
#ifndef ATTNGEN_TEST_MERGE_CASES_H
#define ATTNGEN_TEST_MERGE_CASES_H

#include "cases.h"

/* CK_MERGE scenarios (test_case.variant). The SPLIT, PREFIX and CASCADE ones run attngen's generic kernels of the case's ISA
 * on parts of the keys, merge the parts, and compare with the float64 reference of the whole attention and with
 * attngen's own single call over all the keys, then merge again in place. */
enum {
  MERGE_SPLIT2, /* keys cut into 2 ranges: prefill, q_len 5, kv_len 130, 3 sequences (one without keys) */
  MERGE_SPLIT3, /* 3 ranges: decode, q_len 4, kv_len 1500, 2 sequences (the single call splits its KV range too) */
  MERGE_SPLIT4, /* 4 ranges: prefill, q_len 7, kv_len 257, 4 sequences */
  MERGE_PREFIX, /* a 300-key prefix shared by 3 sequences, run once (K/V batch strides 0), and each one's suffix */
  MERGE_CASCADE, /* attngen_cascade_decode: the same, in one call, with equal and with ragged own rows */
  MERGE_EDGES,  /* made-up states: rows without keys, NaN, +Inf, lse near 1e4, a single state; against float64 */
  MERGE_ERRORS, /* every refusal: its status, a message, no byte written */
  MERGE_COUNT_
};
const char *merge_case_name(int variant);
/* Whether the scenario runs kernels (then once per ISA; else once). */
int merge_uses_kernels(int variant);

int merge_run(const test_case *c, case_result *r);

#endif

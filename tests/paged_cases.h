/* SPDX-License-Identifier: MIT */
/* Paged K/V caches: the CK_PAGED cases of the shared case list (cases.c builds them, paged_cases.c runs them). */
#ifndef ATTNGEN_TEST_PAGED_CASES_H
#define ATTNGEN_TEST_PAGED_CASES_H

#include "cases.h"

/* CK_PAGED scenarios (test_case.variant). Each runs a paged kernel (test_case.shape.page_size) and the contiguous
 * kernel of the same table, ISA and storage type on caches that hold the same rows, and requires the same bits. */
enum {
  PAGED_STEP,   /* steps of 3 ragged sequences over randomly permuted pages: a prompt, a chunk, decode steps of 1 and
                   3 tokens; the last decode step also against float64 */
  PAGED_RUN,    /* attngen_run over 1100 keys: decode of 1 and 4 queries (split-KV, 1 and 3 threads), a chunked
                   prefill of 40 queries (causal_padding: kv_lens), each against float64 */
  PAGED_SHARED, /* two sequences whose block tables share a prompt's full pages, then decode into their own pages; the
                   last step again through attngen_cascade_decode (the shared pages read once) */
  PAGED_RING,   /* a windowed layer's ring of pages (attngen_ring_block_table), decode over 3+ wraps == the whole cache */
  PAGED_ERRORS, /* every refusal of a bad page argument: its status, a message, nothing written */
  PAGED_COUNT_
};
const char *paged_case_name(int variant);

int paged_run(const test_case *c, case_result *r);

#endif

/* SPDX-License-Identifier: MIT */
/* The shared test-case list and checker, used by the Criterion suite (test_kernels.c) and by the plain
 * runner for qemu (run_cases.c). */
#ifndef ATTNGEN_TEST_CASES_H
#define ATTNGEN_TEST_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "attngen.h"

/* Tolerance of every fp32 kernel against the fp64 reference: max |out - ref| <= CASE_TOL * max(1, max |ref|)
 * (and the same per element for the log-sum-exp). See cases.c for why this is the right bound. */
#define CASE_TOL 1e-5
/* RANGE_WIDE cases: each query row is scaled so that its largest |score| (after the softmax scale) is
 * CASE_WIDE_SMAX. Their own tolerance, derived in cases.c: CASE_TOL plus 3.6 * u * SMAX * sqrt(head_dim). */
#define CASE_WIDE_SMAX 30.0
#define CASE_TANH_ERR 1.4e-7 /* the vector tanh's largest error (tests/cases.c) */
#define CASE_SOFTCAP_TOL(cap) (2.0 * (double)(cap) * CASE_TANH_ERR)
#define CASE_ALIBI_TOL(m) (4.0 * 0x1p-24 * (m)) /* m: the largest |row max| of the biased scores (tests/cases.c) */
#define CASE_TOL_WIDE(d) (CASE_TOL + 3.6 * 0x1p-24 * CASE_WIDE_SMAX * sqrt((double)(d)))

typedef enum {
  CK_NUMERIC, /* one run against the fp64 reference */
  CK_THREADS, /* run / run_parallel(1,2,3) / plan API on real threads: bit-identical, and correct */
  CK_ERRORS,  /* argument errors: documented code, message, nothing written */
  CK_TABLE,   /* a generated table agrees with its header's X-macro kernel list */
  CK_STEP,    /* KV cache + RoPE: token-by-token / chunked steps with append == full causal prefill == float64 */
  CK_APPEND,  /* KV cache append: rotation precision (positions to 2^31 - 1), argument errors, capacity refusal */
  CK_ALLOC,   /* attngen_alloc / attngen_free: alignment, the whole size usable, errors; a decode kernel on such K/V */
  CK_CONVERT, /* the storage types' conversions (f16, bf16, int8) against float64 references, bit for bit */
  CK_MERGE,   /* attngen_merge_states: attention over parts of the keys, merged == the whole (merge_cases.c) */
  CK_PAGED    /* paged caches: the same bits as the contiguous cache holding the same rows (paged_cases.c) */
} case_kind;

typedef enum {
  POS_NATURAL, /* RoPE tables: q_pos = NULL (query i at kv_len - q_len + i) */
  POS_RANDOM,  /* q_pos given: random positions in [0, 2^20], different per sequence */
  POS_ZERO     /* q_pos all 0 (rotation = identity, exact): the RANGE_LARGE / RANGE_WIDE cases of RoPE tables */
} case_pos;

typedef enum {
  LAYOUT_DENSE,     /* all strides 0 (the runtime's dense default) */
  LAYOUT_PADDED,    /* token-major with padded head, row and batch strides (gaps are checked) */
  LAYOUT_HEAD_MAJOR /* [batch][head][row][dim] expressed through strides (O also has padded rows) */
} case_layout;

typedef enum {
  KVL_NULL,  /* kv_lens = NULL (only for masks that do not read it) */
  KVL_FULL,  /* every kv_lens[b] = kv_len */
  KVL_VARIED /* different per sequence: kv_len, 0, kv_len/2+1, 1, ... */
} case_kvlens;

typedef enum {
  RANGE_UNIT, /* q, k, v uniform in [-1, 1] */
  RANGE_LARGE, /* scores are exact multiples of 2^k reaching ~1e4 (scale 1): overflow without precision loss */
  RANGE_WIDE   /* unit-range k/v, q rows scaled so that |scores| reach CASE_WIDE_SMAX: checked at CASE_TOL_WIDE */
} case_range;

typedef struct {
  case_kind kind;
  const attngen_table *table; /* NULL: the generic kernel */
  const char *model;          /* table->model, or "generic" */
  int kernel_index;           /* into table->kernels */
  attngen_shape shape;
  attngen_isa isa;
  int batch, q_len, kv_len, kv_capacity; /* kv_capacity 0: kv_len */
  case_kvlens kvlens;
  case_layout layout;
  case_range range;
  float scale; /* passed as args.scale (0: default) */
  int window, sink_tokens; /* passed as args (0: the table's); a generic kernel with the window feature needs them */
  float softcap;           /* passed as args.softcap (0: the table's) */
  int want_lse;
  int via_select; /* get the kernel through attngen_select(table, shape), fallback included (table params apply) */
  case_pos pos;   /* query positions of RoPE tables (ignored by others) */
  int variant;    /* CK_STEP: the scenario (tests/rope_cases.c); CK_CONVERT: the type (tests/kv_types.h); CK_MERGE:
                     the scenario (tests/merge_cases.h); CK_PAGED: the scenario (tests/paged_cases.h) */
  uint32_t seed;
} test_case;

typedef struct {
  double max_err;     /* max |out - ref| / max(1, max |ref|) */
  double max_lse_err; /* max |lse - ref| / max(1, |ref|) */
  double tol;         /* the tolerance both were checked against: CASE_TOL, or CASE_TOL_WIDE(d) for RANGE_WIDE */
  int checked;        /* 1 if max_err means something (numeric comparisons were made) */
  char msg[768];      /* why the case failed ("" when it passed) */
} case_result;

typedef enum { CASES_FULL = 0, CASES_QEMU = 1 } case_subset;

/* Builds the case list for the tables linked in and the ISAs this CPU runs. Deterministic: every process
 * that calls it gets the same list. Returns the count; *out is malloc'ed. */
int cases_build(case_subset subset, test_case **out);
/* The linked test table of that model name, or NULL. */
const attngen_table *case_table(const char *model);
/* A one-line description: kind, kernel name, lengths, mask, layout, ... */
void case_name(const test_case *c, char *buf, size_t n);
/* Records why a case failed (the first reason is kept) and returns 1. */
int case_failf(case_result *r, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Runs one case; 0 = pass. */
int case_run(const test_case *c, case_result *r);

/* The tables linked into the test binary (from the generated build/tests/test_tables.h). */
int cases_tables(const attngen_table *const **out);

#endif

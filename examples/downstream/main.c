/* A downstream program that vendors attngen for one model (Llama 3 8B: 32 query heads, 8 KV heads,
 * head_dim 128) and runs one layer's attention through it:
 *   1. causal prefill of a 37-token prompt (batch 1), with log-sum-exp output;
 *   2. causal prefill of a right-padded batch of 2 (causal_padding, kv_lens = {29, 37});
 *   3. one decode step: 1 new query against a KV cache of 50 valid rows in a buffer of 64
 *      (the 14 spare rows hold NaN: a kernel that read past kv_len would fail the check).
 * Each result is compared with a plain double-precision reference written here.
 * Build: any C99 compiler, no ISA flags (see Makefile / CMakeLists.txt). Exit status 0 = all match. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attngen.h"
#include "attngen_llama_3_8b.h"

#define HEADS 32
#define KV_HEADS 8
#define HEAD_DIM 128

static uint32_t rng_state = 12345u;

/* Deterministic uniform floats in [-1, 1): a 32-bit LCG, top 24 bits. */
static float next_uniform(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)(rng_state >> 8) / 8388608.0f - 1.0f;
}

static float *alloc_floats(size_t n) {
  float *p = (float *)malloc(n * sizeof(float));
  if (p == NULL) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  return p;
}

static void fill(float *p, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) p[i] = next_uniform();
}

/* Dense token-major layout: x[b][row][head][d] with `rows` rows per sequence. */
static size_t idx(int b, int row, int head, int d, int rows, int nheads) {
  return (((size_t)b * (size_t)rows + (size_t)row) * (size_t)nheads + (size_t)head) * HEAD_DIM + (size_t)d;
}

/* Reference: out = softmax(q·kᵀ/sqrt(d) + mask)·v in double, mask given as lengths like attngen's. */
static void reference(int batch, int q_len, int kv_len, int kv_cap, int causal, const int32_t *kv_lens,
                      const float *q, const float *k, const float *v, double *out, double *lse) {
  const double scale = 1.0 / sqrt((double)HEAD_DIM);
  double *s = (double *)malloc((size_t)kv_len * sizeof(double));
  int b, i, h, j, d;
  if (s == NULL) exit(2);
  for (b = 0; b < batch; b++) {
    for (i = 0; i < q_len; i++) {
      for (h = 0; h < HEADS; h++) {
        const int kvh = h / (HEADS / KV_HEADS);
        int limit = kv_len; /* keys j < limit are visible */
        double m = -INFINITY, sum = 0.0;
        if (causal && i + (kv_len - q_len) + 1 < limit) limit = i + (kv_len - q_len) + 1;
        if (kv_lens != NULL && kv_lens[b] < limit) limit = kv_lens[b];
        for (j = 0; j < limit; j++) {
          double dot = 0.0;
          for (d = 0; d < HEAD_DIM; d++)
            dot += (double)q[idx(b, i, h, d, q_len, HEADS)] * (double)k[idx(b, j, kvh, d, kv_cap, KV_HEADS)];
          s[j] = dot * scale;
          if (s[j] > m) m = s[j];
        }
        for (j = 0; j < limit; j++) {
          s[j] = exp(s[j] - m);
          sum += s[j];
        }
        for (d = 0; d < HEAD_DIM; d++) {
          double acc = 0.0;
          for (j = 0; j < limit; j++) acc += s[j] * (double)v[idx(b, j, kvh, d, kv_cap, KV_HEADS)];
          out[idx(b, i, h, d, q_len, HEADS)] = limit > 0 ? acc / sum : 0.0;
        }
        if (lse != NULL) lse[((size_t)b * HEADS + (size_t)h) * (size_t)q_len + (size_t)i] = limit > 0 ? m + log(sum) : -INFINITY;
      }
    }
  }
  free(s);
}

/* |got - ref| <= 1e-5 * max(1, max|ref|) everywhere; NaN in `got` always fails. */
static int compare(const char *what, const float *got, const double *ref, size_t n) {
  double max_ref = 1.0, worst = 0.0, tol;
  size_t i, worst_i = 0;
  int ok = 1;
  for (i = 0; i < n; i++)
    if (fabs(ref[i]) > max_ref && isfinite(ref[i])) max_ref = fabs(ref[i]);
  tol = 1e-5 * max_ref;
  for (i = 0; i < n; i++) {
    double err;
    if (isinf(ref[i]) && (double)got[i] == ref[i]) continue; /* lse of an empty row: -inf == -inf */
    err = fabs((double)got[i] - ref[i]);
    if (!(err <= tol)) ok = 0; /* also catches NaN */
    if (!(err <= worst)) {
      worst = err;
      worst_i = i;
    }
  }
  printf("  %-6s max |err| = %.3g (tolerance %.3g) %s\n", what, worst, tol, ok ? "ok" : "MISMATCH");
  if (!ok) printf("  first worst at %lu: got %.9g, want %.9g\n", (unsigned long)worst_i, (double)got[worst_i], ref[worst_i]);
  return ok;
}

/* Runs one case through attngen_select + attngen_run and checks it. Returns 1 if it matches. */
static int run_case(const char *title, attngen_mask mask, attngen_phase phase, int batch, int q_len, int kv_len,
                    int kv_cap, const int32_t *kv_lens, int want_lse) {
  const size_t nq = (size_t)batch * (size_t)q_len * HEADS * HEAD_DIM;
  const size_t nkv = (size_t)batch * (size_t)kv_cap * KV_HEADS * HEAD_DIM;
  const size_t nlse = (size_t)batch * HEADS * (size_t)q_len;
  float *q = alloc_floats(nq), *k = alloc_floats(nkv), *v = alloc_floats(nkv), *o = alloc_floats(nq);
  float *lse = want_lse ? alloc_floats(nlse) : NULL;
  double *ref = (double *)malloc(nq * sizeof(double));
  double *ref_lse = want_lse ? (double *)malloc(nlse * sizeof(double)) : NULL;
  attngen_shape shape;
  attngen_kernel kernel;
  attngen_args args;
  int b, row, status, ok = 1;

  if (ref == NULL || (want_lse && ref_lse == NULL)) exit(2);
  fill(q, nq);
  fill(k, nkv);
  fill(v, nkv);
  /* Rows past kv_len are spare KV-cache capacity: poison them. */
  for (b = 0; b < batch; b++)
    for (row = kv_len; row < kv_cap; row++) {
      size_t off = idx(b, row, 0, 0, kv_cap, KV_HEADS), n = (size_t)KV_HEADS * HEAD_DIM, i;
      for (i = 0; i < n; i++) k[off + i] = v[off + i] = (float)NAN;
    }

  printf("%s\n", title);
  shape.heads = HEADS;
  shape.kv_heads = KV_HEADS;
  shape.head_dim = HEAD_DIM;
  shape.mask = mask;
  shape.phase = phase;
  status = attngen_select(&attngen_table_llama_3_8b, &shape, &kernel);
  if (status != ATTNGEN_OK) {
    printf("  attngen_select: %s (%s)\n", attngen_status_name(status), attngen_last_error());
    ok = 0;
    goto done;
  }
  printf("  kernel %s\n", kernel.info->name);
  if (kernel.info->heads != HEADS) {
    printf("  expected a kernel specialized for llama-3-8b, got a generic one\n");
    ok = 0;
  }

  memset(&args, 0, sizeof args); /* zero strides = dense token-major; scale 0 = 1/sqrt(head_dim) */
  args.batch = batch;
  args.q_len = q_len;
  args.kv_len = kv_len;
  args.kv_capacity = kv_cap;
  args.q = q;
  args.k = k;
  args.v = v;
  args.o = o;
  args.kv_lens = kv_lens;
  args.lse = lse;
  status = attngen_run(&kernel, &args);
  if (status != ATTNGEN_OK) {
    printf("  attngen_run: %s (%s)\n", attngen_status_name(status), attngen_last_error());
    ok = 0;
  } else {
    reference(batch, q_len, kv_len, kv_cap, mask == ATTNGEN_MASK_CAUSAL || mask == ATTNGEN_MASK_CAUSAL_PADDING,
              kv_lens, q, k, v, ref, ref_lse);
    ok &= compare("out", o, ref, nq);
    if (want_lse) ok &= compare("lse", lse, ref_lse, nlse);
  }
done:
  free(q);
  free(k);
  free(v);
  free(o);
  free(lse);
  free(ref);
  free(ref_lse);
  return ok;
}

int main(void) {
  static const int32_t padded_lens[2] = {29, 37};
  int ok = 1;
  printf("attngen downstream example: model %s, generator %s\n", attngen_table_llama_3_8b.model,
         attngen_table_llama_3_8b.generator_version);
  ok &= run_case("causal prefill, batch 1, q_len 37", ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_PREFILL, 1, 37, 37, 37,
                 NULL, 1);
  ok &= run_case("causal_padding prefill, batch 2, q_len 37, kv_lens {29, 37}", ATTNGEN_MASK_CAUSAL_PADDING,
                 ATTNGEN_PHASE_PREFILL, 2, 37, 37, 37, padded_lens, 0);
  ok &= run_case("causal decode, batch 1, q_len 1, kv_len 50 of capacity 64", ATTNGEN_MASK_CAUSAL,
                 ATTNGEN_PHASE_DECODE, 1, 1, 50, 64, NULL, 1);
  printf(ok ? "downstream: all results match the reference\n" : "downstream: MISMATCH\n");
  return ok ? 0 : 1;
}

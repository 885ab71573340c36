/* SPDX-License-Identifier: MIT */
/* A downstream program that vendors attngen for one model (Llama 3 8B: 32 query heads, 8 KV heads,
 * head_dim 128) and runs one layer's attention through it:
 *   1. causal prefill of a 37-token prompt (batch 1), with log-sum-exp output;
 *   2. causal prefill of a right-padded batch of 2 (causal_padding, kv_lens = {29, 37});
 *   3. one decode step: 1 new query against a KV cache of 50 valid rows in a buffer of 64
 *      (the 14 spare rows hold NaN: a kernel that read past kv_len would fail the check);
 *   4. a real decode loop with the model's RoPE (theta 500000, rotate_half): a 20-token prompt through
 *      attngen_step (prefill kernel, empty cache), then 32 decode steps, each appending its token's K and V
 *      (K rotated by its position) to the cache and attending to it, in one call each.
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

/* RoPE in double, written here from the definition: pair p = (p, p + 64) of the 128 dims turns by
 * pos * theta^(-2p / 128) radians (HF rotate_half; the table says which theta and style). */
static void rope_rotate(double theta, long pos, const float *x, double *y) {
  int p;
  for (p = 0; p < HEAD_DIM / 2; p++) {
    const double a = (double)pos * pow(theta, -2.0 * p / HEAD_DIM), c = cos(a), s = sin(a);
    y[p] = x[p] * c - x[p + HEAD_DIM / 2] * s;
    y[p + HEAD_DIM / 2] = x[p + HEAD_DIM / 2] * c + x[p] * s;
  }
}

/* Reference: out = softmax(q·kᵀ/sqrt(d) + mask)·v in double, mask given as lengths like attngen's. Llama 3 has
 * RoPE: the cache (k) counts as rotated already, and query i is rotated by its position kv_len - q_len + i. */
static void reference(int batch, int q_len, int kv_len, int kv_cap, int causal, const int32_t *kv_lens,
                      const float *q, const float *k, const float *v, double *out, double *lse) {
  const double scale = 1.0 / sqrt((double)HEAD_DIM);
  double *s = (double *)malloc((size_t)kv_len * sizeof(double)), qr[HEAD_DIM];
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
        rope_rotate(attngen_table_llama_3_8b.params.rope.theta, (long)(kv_len - q_len + i), &q[idx(b, i, h, 0, q_len, HEADS)],
                    qr);
        for (j = 0; j < limit; j++) {
          double dot = 0.0;
          for (d = 0; d < HEAD_DIM; d++) dot += qr[d] * (double)k[idx(b, j, kvh, d, kv_cap, KV_HEADS)];
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
  memset(&shape, 0, sizeof shape); /* kv_dtype 0: an fp32 cache */
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
    reference(batch, q_len, kv_len, kv_cap, (attngen_mask_features(mask) & ATTNGEN_FEATURE_CAUSAL) != 0,
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

/* Reference for query token t (position t) of a single sequence against its raw keys 0..t: q and k rotated in
 * double, causal softmax, out[h][d]. */
static void rope_reference_row(double theta, int t, const float *q, const float *k, const float *v, double *out) {
  static double kr[64][KV_HEADS][HEAD_DIM];
  double qr[HEAD_DIM], s[64];
  int h, j, d;
  for (j = 0; j <= t; j++)
    for (h = 0; h < KV_HEADS; h++) rope_rotate(theta, j, k + idx(0, j, h, 0, 64, KV_HEADS), kr[j][h]);
  for (h = 0; h < HEADS; h++) {
    const int kvh = h / (HEADS / KV_HEADS);
    double m = -INFINITY, sum = 0.0;
    rope_rotate(theta, t, q + idx(0, t, h, 0, 64, HEADS), qr);
    for (j = 0; j <= t; j++) {
      double dot = 0.0;
      for (d = 0; d < HEAD_DIM; d++) dot += qr[d] * kr[j][kvh][d];
      s[j] = dot / sqrt((double)HEAD_DIM);
      if (s[j] > m) m = s[j];
    }
    for (j = 0; j <= t; j++) sum += (s[j] = exp(s[j] - m));
    for (d = 0; d < HEAD_DIM; d++) {
      double acc = 0.0;
      for (j = 0; j <= t; j++) acc += s[j] * (double)v[idx(0, j, kvh, d, 64, KV_HEADS)];
      out[(size_t)h * HEAD_DIM + d] = acc / sum;
    }
  }
}

/* 4. The decode loop: prompt, then one attngen_step per generated token. The caller owns the cache length. */
static int decode_loop(void) {
  enum { PROMPT = 20, STEPS = 32, CAP = 64 };
  const attngen_rope *rope = &attngen_table_llama_3_8b.params.rope;
  const size_t qrow = (size_t)HEADS * HEAD_DIM, krow = (size_t)KV_HEADS * HEAD_DIM;
  float *q = alloc_floats(CAP * qrow), *k = alloc_floats(CAP * krow), *v = alloc_floats(CAP * krow);
  float *k_cache = alloc_floats(CAP * krow), *v_cache = alloc_floats(CAP * krow), *o = alloc_floats(CAP * qrow);
  double *ref = (double *)malloc(qrow * sizeof(double)), worst = 0.0;
  attngen_shape shape;
  attngen_kernel prefill, decode;
  int32_t cache_len = 0;
  int t, i, ok = 1;
  size_t e;

  printf("decode loop with RoPE (style %s, theta %g, rotary_dim %d): prompt %d tokens, then %d decode steps\n",
         rope->style == ATTNGEN_ROPE_HALF ? "half" : "other", rope->theta, rope->rotary_dim, PROMPT, STEPS);
  if (ref == NULL) exit(2);
  if (rope->style != ATTNGEN_ROPE_HALF || rope->rotary_dim != HEAD_DIM || rope->scaling != ATTNGEN_ROPE_SCALING_NONE) {
    printf("  the table's RoPE is not Llama 3's (rotate_half over 128 dims, no scaling)\n");
    return 0;
  }
  fill(q, CAP * qrow);
  fill(k, CAP * krow);
  fill(v, CAP * krow);
  for (e = 0; e < CAP * krow; e++) k_cache[e] = v_cache[e] = (float)NAN; /* rows not yet appended: never read */
  memset(&shape, 0, sizeof shape); /* kv_dtype 0: an fp32 cache */
  shape.heads = HEADS;
  shape.kv_heads = KV_HEADS;
  shape.head_dim = HEAD_DIM;
  shape.mask = ATTNGEN_MASK_CAUSAL;
  shape.phase = ATTNGEN_PHASE_PREFILL;
  if (attngen_select(&attngen_table_llama_3_8b, &shape, &prefill) != ATTNGEN_OK) ok = 0;
  shape.phase = ATTNGEN_PHASE_DECODE;
  if (ok && attngen_select(&attngen_table_llama_3_8b, &shape, &decode) != ATTNGEN_OK) ok = 0;
  if (!ok) {
    printf("  attngen_select: %s\n", attngen_last_error());
    return 0;
  }
  printf("  kernels %s, %s\n", prefill.info->name, decode.info->name);
  for (t = 0; ok && t < PROMPT + STEPS; t += t < PROMPT ? PROMPT : 1) {
    const int n = t < PROMPT ? PROMPT : 1; /* the prompt in one step, then one token per step */
    attngen_step_args s;
    int st;
    memset(&s, 0, sizeof s); /* zero strides: dense; pos NULL: token i of the step sits at cache_len + i */
    s.kv.batch = 1;
    s.kv.n_new = n;
    s.kv.kv_capacity = CAP;
    s.kv.cache_len = &cache_len;
    s.kv.k_new = k + (size_t)t * krow; /* this step's raw (unrotated) K and V rows */
    s.kv.v_new = v + (size_t)t * krow;
    s.kv.k_cache = k_cache;
    s.kv.v_cache = v_cache;
    s.q = q + (size_t)t * qrow;
    s.o = o + (size_t)t * qrow;
    st = attngen_step(t < PROMPT ? &prefill : &decode, &s);
    if (st != ATTNGEN_OK) {
      printf("  attngen_step at token %d: %s (%s)\n", t, attngen_status_name(st), attngen_last_error());
      ok = 0;
      break;
    }
    cache_len += n; /* the cache now holds the new rows */
    for (i = t; i < t + n; i++) {
      rope_reference_row(rope->theta, i, q, k, v, ref);
      for (e = 0; e < qrow; e++) {
        const double err = fabs((double)o[(size_t)i * qrow + e] - ref[e]);
        if (!(err <= worst)) worst = err;
      }
    }
  }
  if (ok) {
    ok = worst <= 1e-5; /* |out| <= 1: the same tolerance as above */
    printf("  %d steps, cache %d of %d rows: max |err| = %.3g (tolerance 1e-05) %s\n", 1 + STEPS, (int)cache_len, CAP,
           worst, ok ? "ok" : "MISMATCH");
  }
  free(q);
  free(k);
  free(v);
  free(k_cache);
  free(v_cache);
  free(o);
  free(ref);
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
  ok &= decode_loop();
  printf(ok ? "downstream: all results match the reference\n" : "downstream: MISMATCH\n");
  return ok ? 0 : 1;
}

/* SPDX-License-Identifier: MIT */
/* tests/install/main.c: the program of tests/test_install.sh. It is built OUTSIDE the attngen tree against an
 * installed attngen, twice: by CMake (find_package(attngen) + attngen_generate) and with pkg-config (plus the
 * installed `attngen` command). Its model is tests/test_install.sh's config "install-test": 8 query heads,
 * 2 KV heads, head_dim 64, causal mask, prefill and decode.
 *
 * Runs attention through the generated table and checks each result against a float64 reference:
 *   1. causal prefill, q_len = kv_len = 45, with log-sum-exp;
 *   2. chunked causal prefill: 13 queries against 40 keys;
 *   3. decode: 1 query against a KV cache of 50 valid rows in a buffer of 64 rows whose spare rows hold NaN;
 *   4. case 1 with attngen_run_parallel on 2 threads: bit-identical to case 1.
 * Exit status 0 when everything matches, 1 on a mismatch or an error. Plain C99. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attngen.h"
#include "attngen_install_test.h"

#define HEADS 8
#define KV_HEADS 2
#define HEAD_DIM 64
#define MAX_ROWS 64

static uint32_t rng = 2026u;
static float uniform(void) { /* [-1, 1) */
  rng = rng * 1664525u + 1013904223u;
  return (float)(rng >> 8) / 8388608.0f - 1.0f;
}

static float q[MAX_ROWS * HEADS * HEAD_DIM], k[MAX_ROWS * KV_HEADS * HEAD_DIM], v[MAX_ROWS * KV_HEADS * HEAD_DIM];
static float o[MAX_ROWS * HEADS * HEAD_DIM], o2[MAX_ROWS * HEADS * HEAD_DIM];
static float lse[HEADS * MAX_ROWS];

/* out[i][h][d] = softmax_j(q_i·k_j / sqrt(d)) v_j over the keys j <= i + kv_len - q_len; lse[h][i] likewise */
static void reference(int q_len, int kv_len, double *out, double *ref_lse) {
  const double scale = 1.0 / sqrt((double)HEAD_DIM);
  double s[MAX_ROWS];
  int i, h, j, d;
  for (i = 0; i < q_len; i++) {
    for (h = 0; h < HEADS; h++) {
      const int kvh = h / (HEADS / KV_HEADS);
      const int limit = i + kv_len - q_len + 1; /* keys j < limit are visible */
      double mx = -INFINITY, sum = 0.0;
      for (j = 0; j < limit; j++) {
        double dot = 0.0;
        for (d = 0; d < HEAD_DIM; d++)
          dot += (double)q[(i * HEADS + h) * HEAD_DIM + d] * (double)k[(j * KV_HEADS + kvh) * HEAD_DIM + d];
        s[j] = dot * scale;
        if (s[j] > mx) mx = s[j];
      }
      for (j = 0; j < limit; j++) sum += exp(s[j] - mx);
      for (d = 0; d < HEAD_DIM; d++) {
        double acc = 0.0;
        for (j = 0; j < limit; j++) acc += exp(s[j] - mx) * (double)v[(j * KV_HEADS + kvh) * HEAD_DIM + d];
        out[(i * HEADS + h) * HEAD_DIM + d] = acc / sum;
      }
      if (ref_lse) ref_lse[h * q_len + i] = mx + log(sum);
    }
  }
}

static int check(const char *what, const attngen_kernel *kern, int q_len, int kv_len, int with_lse) {
  static double ref[MAX_ROWS * HEADS * HEAD_DIM], ref_lse[HEADS * MAX_ROWS];
  double err = 0.0, big = 1.0, lerr = 0.0, tol;
  int n = q_len * HEADS * HEAD_DIM, i;
  reference(q_len, kv_len, ref, with_lse ? ref_lse : NULL);
  for (i = 0; i < n; i++) {
    double e = fabs((double)o[i] - ref[i]);
    if (!(e <= err)) err = e; /* NaN counts as a mismatch */
    if (fabs(ref[i]) > big) big = fabs(ref[i]);
  }
  tol = 1e-5 * big;
  if (with_lse)
    for (i = 0; i < HEADS * q_len; i++) {
      double e = fabs((double)lse[i] - ref_lse[i]);
      if (!(e <= lerr)) lerr = e;
    }
  printf("  %-34s %-42s max|err| %.2e (tol %.0e)  %s\n", what, kern->info->name, err, tol,
         (err <= tol && lerr <= 1e-5) ? "ok" : "MISMATCH");
  if (with_lse) printf("  %-34s %-42s lse max|err| %.2e (tol 1e-05)\n", "", "", lerr);
  return err <= tol && lerr <= 1e-5;
}

static int pick(attngen_phase phase, attngen_kernel *kern) {
  attngen_shape shape;
  const char *prefix = phase == ATTNGEN_PHASE_PREFILL ? "attn_h8_kv2_d64_causal_prefill__"
                                                      : "attn_h8_kv2_d64_causal_decode__";
  memset(&shape, 0, sizeof shape);
  shape.heads = HEADS;
  shape.kv_heads = KV_HEADS;
  shape.head_dim = HEAD_DIM;
  shape.mask = ATTNGEN_MASK_CAUSAL;
  shape.phase = phase;
  if (attngen_select(&attngen_table_install_test, &shape, kern) != ATTNGEN_OK) {
    fprintf(stderr, "attngen_select failed: %s\n", attngen_last_error());
    return 0;
  }
  if (strncmp(kern->info->name, prefix, strlen(prefix)) != 0) {
    fprintf(stderr, "attngen_select chose %s, not a kernel of the generated table (%s*)\n", kern->info->name,
            prefix);
    return 0;
  }
  return 1;
}

static int run(const attngen_kernel *kern, attngen_args *a, const char *what) {
  int st = attngen_run(kern, a);
  if (st != ATTNGEN_OK) fprintf(stderr, "%s: attngen_run failed (%d): %s\n", what, st, attngen_last_error());
  return st == ATTNGEN_OK;
}

int main(void) {
  attngen_kernel prefill, decode;
  attngen_args a;
  int ok = 1, i, st;
  const int nq = MAX_ROWS * HEADS * HEAD_DIM, nkv = MAX_ROWS * KV_HEADS * HEAD_DIM;

  for (i = 0; i < nq; i++) q[i] = uniform();
  for (i = 0; i < nkv; i++) k[i] = uniform();
  for (i = 0; i < nkv; i++) v[i] = uniform();
  printf("install test: model %s, generated by attngen %s\n", attngen_table_install_test.model,
         attngen_table_install_test.generator_version);
  if (!pick(ATTNGEN_PHASE_PREFILL, &prefill) || !pick(ATTNGEN_PHASE_DECODE, &decode)) return 1;

  /* 1. causal prefill with log-sum-exp */
  memset(&a, 0, sizeof a);
  a.batch = 1;
  a.q_len = 45;
  a.kv_len = 45;
  a.q = q;
  a.k = k;
  a.v = v;
  a.o = o;
  a.lse = lse;
  ok &= run(&prefill, &a, "prefill") && check("prefill causal S=45 (+lse)", &prefill, 45, 45, 1);

  /* 4. the same on 2 threads: bit-identical */
  a.o = o2;
  a.lse = NULL;
  st = attngen_run_parallel(&prefill, &a, 2);
  if (st != ATTNGEN_OK || memcmp(o, o2, (size_t)45 * HEADS * HEAD_DIM * sizeof(float)) != 0) {
    fprintf(stderr, "attngen_run_parallel(2): %s\n", st != ATTNGEN_OK ? attngen_last_error() : "differs from 1 thread");
    ok = 0;
  } else {
    printf("  %-34s %-42s identical to 1 thread  ok\n", "prefill, 2 threads", prefill.info->name);
  }

  /* 2. chunked prefill: the last 13 queries of a 40-key causal window */
  memset(&a, 0, sizeof a);
  a.batch = 1;
  a.q_len = 13;
  a.kv_len = 40;
  a.q = q;
  a.k = k;
  a.v = v;
  a.o = o;
  ok &= run(&prefill, &a, "chunked prefill") && check("chunked prefill q=13 kv=40", &prefill, 13, 40, 0);

  /* 3. decode against 50 valid rows of a 64-row cache; the spare rows are NaN and must not be read */
  for (i = 50 * KV_HEADS * HEAD_DIM; i < nkv; i++) k[i] = v[i] = (float)NAN;
  memset(&a, 0, sizeof a);
  a.batch = 1;
  a.q_len = 1;
  a.kv_len = 50;
  a.kv_capacity = MAX_ROWS;
  a.q = q;
  a.k = k;
  a.v = v;
  a.o = o;
  ok &= run(&decode, &a, "decode") && check("decode q=1 kv=50 (capacity 64)", &decode, 1, 50, 0);

  printf(ok ? "install test: all results agree with the float64 reference\n" : "install test: FAILED\n");
  return ok ? 0 : 1;
}

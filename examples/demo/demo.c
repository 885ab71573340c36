/* SPDX-License-Identifier: MIT */
/* The `make` demo: picks the default model's kernels for this CPU, checks them against a float64 reference
 * and times them against the generic kernel (same algorithm, run-time head_dim/group/mask). */
#if !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attngen.h"
#include ATTNGEN_DEMO_HEADER

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static float uniform(void) /* xorshift64*, in [-1, 1) */
{
  rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
  return (float)((double)((rng * 2685821657736338717ull) >> 40) / (double)(1ull << 23) - 1.0);
}

/* y = x rotated by the table's RoPE for position pos, in double (dims past rotary_dim copied). */
static void rope_row(const attngen_rope *r, long pos, const float *x, int d, double *y)
{
  const int half = r->rotary_dim / 2, il = r->style == ATTNGEN_ROPE_INTERLEAVED;
  int c;
  for (c = 0; c < d; ++c) y[c] = x[c];
  for (c = 0; c < half; ++c) {
    const int i0 = il ? 2 * c : c, i1 = il ? 2 * c + 1 : c + half;
    const double a = (double)pos * r->inv_freq[c];
    y[i0] = x[i0] * cos(a) - x[i1] * sin(a);
    y[i1] = x[i1] * cos(a) + x[i0] * sin(a);
  }
}

/* float64 reference for the rows (b = 0, every head, queries in [i0, i1)), dense layout. With RoPE the cache K
 * counts as rotated already and query i is rotated by its position kv_len - q_len + i (attngen.h). */
static double max_error(const attngen_shape *s, const attngen_rope *rope, int q_len, int kv_len, const float *q,
                        const float *k, const float *v, const float *o, int i0, int i1, double *max_ref)
{
  const int H = s->heads, KV = s->kv_heads, D = s->head_dim, G = H / KV;
  const int causal = (attngen_mask_features(s->mask) & ATTNGEN_FEATURE_CAUSAL) != 0;
  double err = 0.0, *p = (double *)malloc(sizeof(double) * (size_t)kv_len), qd[ATTNGEN_MAX_HEAD_DIM];
  int h, i, j, c;
  *max_ref = 0.0;
  for (h = 0; h < H; ++h)
    for (i = i0; i < i1; ++i) {
      const float *qi = q + ((size_t)i * H + h) * D;
      double m = -INFINITY, l = 0.0;
      if (rope->style != ATTNGEN_ROPE_NONE) rope_row(rope, (long)kv_len - q_len + i, qi, D, qd);
      else for (c = 0; c < D; ++c) qd[c] = qi[c];
      const int last = causal ? i + kv_len - q_len : kv_len - 1;
      for (j = 0; j <= last; ++j) {
        const float *kj = k + ((size_t)j * KV + h / G) * D;
        double dot = 0.0;
        for (c = 0; c < D; ++c) dot += qd[c] * kj[c];
        p[j] = dot / sqrt((double)D);
        if (p[j] > m) m = p[j];
      }
      for (j = 0; j <= last; ++j) l += (p[j] = exp(p[j] - m));
      for (c = 0; c < D; ++c) {
        double acc = 0.0;
        for (j = 0; j <= last; ++j) acc += p[j] * v[((size_t)j * KV + h / G) * D + c];
        acc /= l;
        if (fabs(acc) > *max_ref) *max_ref = fabs(acc);
        if (fabs(acc - o[((size_t)i * H + h) * D + c]) > err) err = fabs(acc - o[((size_t)i * H + h) * D + c]);
      }
    }
  free(p);
  return err;
}

static int cmp_double(const void *x, const void *y)
{
  const double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* Median times of two kernels timed in alternating rounds, so that a busy spell on this shared machine hits
 * both alike (the demo is a glance; `make bench` measures properly). */
static int time_pair(const attngen_kernel *k1, const attngen_kernel *k2, const attngen_args *a, double *t1,
                     double *t2)
{
  enum { ROUNDS = 9 };
  double s1[ROUNDS], s2[ROUNDS];
  int r;
  for (r = 0; r < ROUNDS; ++r) {
    double t0 = now();
    if (attngen_run(k1, a) != ATTNGEN_OK) return -1;
    s1[r] = now() - t0;
    t0 = now();
    if (attngen_run(k2, a) != ATTNGEN_OK) return -1;
    s2[r] = now() - t0;
  }
  qsort(s1, ROUNDS, sizeof s1[0], cmp_double);
  qsort(s2, ROUNDS, sizeof s2[0], cmp_double);
  *t1 = s1[ROUNDS / 2];
  *t2 = s2[ROUNDS / 2];
  return 0;
}

static int demo(const attngen_table *table, attngen_mask mask, attngen_phase phase, int q_len, int kv_len)
{
  const attngen_kernel_info *any = &table->kernels[0];
  attngen_shape s;
  attngen_kernel spec, gen;
  attngen_args a;
  float *q, *k, *v, *o;
  size_t i, nq, nkv;
  double err, ref, t_spec, t_gen, flops;
  int st;
  memset(&s, 0, sizeof s); /* kv_dtype 0: an fp32 cache */
  s.heads = any->heads; s.kv_heads = any->kv_heads; s.head_dim = any->head_dim; s.mask = mask; s.phase = phase;
  if ((st = attngen_select(table, &s, &spec)) != ATTNGEN_OK) {
    printf("  select failed: %s\n", attngen_last_error());
    return 1;
  }
  if ((st = attngen_select_generic(&s, spec.info->isa, &gen)) != ATTNGEN_OK) {
    printf("  generic select failed: %s\n", attngen_last_error());
    return 1;
  }
  gen.params = spec.params; /* the same work (the table's scale and RoPE), as attngen_select's fallback would do */
  nq = (size_t)q_len * s.heads * s.head_dim;
  nkv = (size_t)kv_len * s.kv_heads * s.head_dim;
  q = (float *)malloc(nq * sizeof *q); o = (float *)malloc(nq * sizeof *o);
  /* K and V as a KV cache would be allocated: attngen_alloc (huge pages from 2 MiB up, see attngen.h) */
  k = (float *)attngen_alloc(nkv * sizeof *k); v = (float *)attngen_alloc(nkv * sizeof *v);
  if (!q || !o || !k || !v) {
    printf("  out of memory: %s\n", attngen_last_error());
    return 1;
  }
  for (i = 0; i < nq; ++i) q[i] = uniform();
  for (i = 0; i < nkv; ++i) { k[i] = uniform(); v[i] = uniform(); }
  memset(&a, 0, sizeof a);
  a.batch = 1; a.q_len = q_len; a.kv_len = kv_len; a.q = q; a.k = k; a.v = v; a.o = o;
  if ((st = attngen_run(&spec, &a)) != ATTNGEN_OK) {
    printf("  run failed: %s\n", attngen_last_error());
    return 1;
  }
  /* check the last rows (they see the most keys) against float64 */
  err = max_error(&s, &spec.params.rope, q_len, kv_len, q, k, v, o, q_len > 4 ? q_len - 4 : 0, q_len, &ref);
  if (time_pair(&spec, &gen, &a, &t_spec, &t_gen) != 0) {
    printf("  timing run failed: %s\n", attngen_last_error());
    return 1;
  }
  flops = 4.0 * s.heads * s.head_dim * (mask == ATTNGEN_MASK_CAUSAL && q_len == kv_len
                                            ? (double)q_len * (q_len + 1) / 2 : (double)q_len * kv_len);
  printf("  %-44s q_len %5d kv_len %5d  max|err| %.2e (tol %.0e)  %7.3f ms  %6.1f GFLOP/s  %.2fx the generic kernel (%s), medians\n",
         spec.info->name, q_len, kv_len, err, 1e-5 * (ref > 1 ? ref : 1), 1e3 * t_spec, flops / t_spec * 1e-9,
         t_gen / t_spec, gen.info->name);
  free(q); attngen_free(k); attngen_free(v); free(o);
  return err <= 1e-5 * (ref > 1 ? ref : 1) ? 0 : 1;
}

int main(void)
{
  const attngen_table *t = &ATTNGEN_DEMO_TABLE;
  int bad = 0;
  printf("attngen demo: model %s (generator %s), CPU ISAs:", t->model, t->generator_version);
#define PRINT_ISA(E, name, ...) if ((attngen_cpu_isas() >> ATTNGEN_ISA_##E) & 1) printf(" %s", #name);
  ATTNGEN_ISA_LIST(PRINT_ISA)
#undef PRINT_ISA
  printf("\n");
  bad |= demo(t, t->kernels[0].mask, ATTNGEN_PHASE_PREFILL, 512, 512);
  bad |= demo(t, t->kernels[0].mask, ATTNGEN_PHASE_DECODE, 1, 4096);
  printf(bad ? "demo: MISMATCH against the float64 reference\n" : "demo: all results agree with the float64 reference\n");
  return bad;
}

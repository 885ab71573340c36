/* SPDX-License-Identifier: MIT */
/* The timing harness of `attngen CONFIG --tune` (tools/tune/tune.lua writes tune_cands.h next to it, builds it with
 * every candidate's generated file, and reads what it prints). Not part of the library.
 *
 *   tune_harness UNIT SECONDS INDEX...      UNIT: a name of TUNE_UNITS (prefill, decode, decode_int8, ...: a phase
 *                                           and the cache's storage type); INDEX 0 is the default plan (the reference)
 *
 * Every candidate runs the same inputs (fixed seed; K/V written into the unit's storage type by attngen_kv_append,
 * so all read the same stored values) through its specialized kernel (attngen_select_specialized on its own table),
 * single-threaded. Its output must match the default plan's within 1e-5 * max(1, max|ref|), or it
 * is reported "bad" and not timed. Then rounds: each round times every candidate once, in an order rotated by
 * one per round (a busy spell of a shared machine hits all alike), until SECONDS have passed (at least 6 rounds,
 * at most 2000). One sample is `reps` back-to-back calls, reps chosen so that the default takes >= 10 ms. A sample
 * is measured as the thread's CPU time (CLOCK_THREAD_CPUTIME_ID: time the thread was descheduled on a busy
 * machine does not count; the kernels run on this one thread) and as wall-clock time.
 * Output, one line each (times in seconds per call, CPU time unless said):
 *   I <reps> <rounds> <seconds>
 *   R <index> ok <median> <median of the first half of rounds> <of the second half> <q1> <q3> <min> <wall median>
 *     <max|diff|>
 *   R <index> bad <max|diff|> <tolerance>
 *   R <index> err <message> */
#if !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attngen.h"
#include "tune_cands.h"

#define DECLARE(t) extern const attngen_table t;
TUNE_TABLES(DECLARE)
#define ADDRESS(t) &t,
static const attngen_table *const all_tables[] = { TUNE_TABLES(ADDRESS) NULL };

/* a unit's candidates are all_tables[first .. first + count - 1]; decode cycles `copies` copies of K/V */
static const struct {
  const char *name;
  attngen_phase phase;
  attngen_kv_dtype dtype;
  int first, count, copies;
} units[] = { TUNE_UNITS };

/* The K/V cache of copy `copy` in the args' fields of its storage type (the others stay NULL). */
static void point_kv(attngen_args *a, attngen_kv_dtype dtype, char *k, char *v, float *ks, float *vs, size_t bytes,
                     size_t scales, int copy)
{
  char *kc = k + (size_t)copy * bytes, *vc = v + (size_t)copy * bytes;
  attngen_args_set_kv(a, dtype, kc, vc, ks ? ks + (size_t)copy * scales : NULL, vs ? vs + (size_t)copy * scales : NULL);
}

enum { MAX_CANDS = 64, MIN_ROUNDS = 6, MAX_ROUNDS = 2000 };

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static float uniform(void) /* xorshift64*, in [-1, 1) */
{
  rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
  return (float)((double)((rng * 2685821657736338717ull) >> 40) / (double)(1ull << 23) - 1.0);
}

static int cmp_double(const void *x, const void *y)
{
  const double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* quantile of n sorted-in-place samples (nearest rank; n >= 1) */
static double quantile(double *s, int n, double q)
{
  int i;
  qsort(s, (size_t)n, sizeof s[0], cmp_double);
  i = (int)(q * (n - 1) + 0.5);
  return s[i];
}

static double samples[MAX_CANDS][MAX_ROUNDS], wall[MAX_CANDS][MAX_ROUNDS];

int main(int argc, char **argv)
{
  const attngen_table *const *tables;
  attngen_shape shape;
  attngen_kernel kern[MAX_CANDS];
  attngen_args a;
  attngen_append_args app;
  int idx[MAX_CANDS], ok[MAX_CANDS], n = 0, ntables = 0, i, q_len, kv_len, reps = 1, rounds = 0, r, copies = 1, next = 0;
  int unit = -1;
  size_t nq, nkv, e, bytes, scales;
  float *q, *kf, *vf, *ks = NULL, *vs = NULL, *ref, *o;
  char *k, *v;
  int32_t kv_lens[1], cache_len[1] = { 0 };
  double seconds, t0, tstart, tol, maxref = 0.0;
  if (argc < 4) {
    fprintf(stderr, "usage: %s UNIT SECONDS INDEX...\n", argv[0]);
    return 2;
  }
  for (i = 0; i < (int)(sizeof units / sizeof units[0]); ++i) if (strcmp(argv[1], units[i].name) == 0) unit = i;
  if (unit < 0) { fprintf(stderr, "no unit %s\n", argv[1]); return 2; }
  memset(&shape, 0, sizeof shape);
  shape.heads = TUNE_HEADS; shape.kv_heads = TUNE_KV_HEADS; shape.head_dim = TUNE_HEAD_DIM;
  shape.kv_dtype = units[unit].dtype;
  tables = all_tables + units[unit].first;
  ntables = units[unit].count;
  if (units[unit].phase == ATTNGEN_PHASE_PREFILL) {
    shape.phase = ATTNGEN_PHASE_PREFILL; shape.mask = TUNE_PREFILL_MASK;
    q_len = TUNE_PREFILL_Q; kv_len = TUNE_PREFILL_KV;
  } else {
    shape.phase = ATTNGEN_PHASE_DECODE; shape.mask = TUNE_DECODE_MASK;
    q_len = TUNE_DECODE_Q; kv_len = TUNE_DECODE_KV;
    copies = units[unit].copies; /* K/V from memory: copies cycled, together beyond the last-level cache */
  }
  seconds = atof(argv[2]);
  for (i = 3; i < argc && n < MAX_CANDS; ++i) {
    idx[n] = atoi(argv[i]);
    if (idx[n] < 0 || idx[n] >= ntables) { fprintf(stderr, "no candidate %d\n", idx[n]); return 2; }
    ++n;
  }
  if (n == 0 || idx[0] != 0) { fprintf(stderr, "the first index must be 0 (the default plan)\n"); return 2; }

  nq = (size_t)q_len * shape.heads * shape.head_dim;
  nkv = (size_t)kv_len * shape.kv_heads * shape.head_dim;
  bytes = nkv * (size_t)attngen_kv_dtype_bytes(shape.kv_dtype); /* one copy of K (or V) as stored */
  scales = (size_t)kv_len * shape.kv_heads * (size_t)attngen_kv_scales_per_row(shape.kv_dtype, shape.head_dim);
  q = malloc(nq * sizeof *q); ref = malloc(nq * sizeof *ref); o = malloc(nq * sizeof *o);
  kf = malloc(nkv * sizeof *kf); vf = malloc(nkv * sizeof *vf);
  /* K/V as the README tells users to allocate a cache (huge pages from 2 MiB up): plans are timed on that memory */
  k = attngen_alloc(bytes * copies); v = attngen_alloc(bytes * copies);
  if (scales) { ks = attngen_alloc(scales * copies * sizeof *ks); vs = attngen_alloc(scales * copies * sizeof *vs); }
  if (!q || !ref || !o || !kf || !vf || !k || !v || (scales && (!ks || !vs))) { fprintf(stderr, "out of memory\n"); return 2; }
  for (e = 0; e < nq; ++e) q[e] = uniform();
  for (e = 0; e < nkv; ++e) { kf[e] = uniform(); vf[e] = uniform(); }
  /* the cache's first copy written by the default plan's kernel (rounded or quantized to the type), then copied */
  if (attngen_select_specialized(tables[0], &shape, (attngen_isa)TUNE_ISA, &kern[0]) != ATTNGEN_OK) {
    printf("R 0 err %s\n", attngen_last_error());
    return 1;
  }
  memset(&app, 0, sizeof app);
  app.batch = 1; app.n_new = kv_len; app.kv_capacity = kv_len; app.cache_len = cache_len; app.k_new = kf; app.v_new = vf;
  attngen_append_args_set_kv(&app, shape.kv_dtype, k, v, ks, vs);
  if (attngen_kv_append(&kern[0], &app) != ATTNGEN_OK) {
    printf("R 0 err %s\n", attngen_last_error());
    return 1;
  }
  for (i = 1; i < copies; ++i) {
    memcpy(k + i * bytes, k, bytes);
    memcpy(v + i * bytes, v, bytes);
    if (scales) {
      memcpy(ks + i * scales, ks, scales * sizeof *ks);
      memcpy(vs + i * scales, vs, scales * sizeof *vs);
    }
  }
  kv_lens[0] = kv_len;
  memset(&a, 0, sizeof a);
  a.batch = 1; a.q_len = q_len; a.kv_len = kv_len; a.q = q; a.kv_lens = kv_lens;
  point_kv(&a, shape.kv_dtype, k, v, ks, vs, bytes, scales, 0);

  /* select, run once, compare with the default plan's output */
  for (i = 0; i < n; ++i) {
    double diff = 0.0;
    ok[i] = 0;
    if (attngen_select_specialized(tables[idx[i]], &shape, (attngen_isa)TUNE_ISA, &kern[i]) != ATTNGEN_OK) {
      printf("R %d err %s\n", idx[i], attngen_last_error());
      if (i == 0) return 1;
      continue;
    }
    a.o = i == 0 ? ref : o;
    if (attngen_run(&kern[i], &a) != ATTNGEN_OK) {
      printf("R %d err %s\n", idx[i], attngen_last_error());
      if (i == 0) return 1;
      continue;
    }
    if (i == 0) {
      for (e = 0; e < nq; ++e) if (fabs(ref[e]) > maxref) maxref = fabs(ref[e]);
      continue;
    }
    for (e = 0; e < nq; ++e) if (!(fabs((double)o[e] - ref[e]) <= diff)) diff = fabs((double)o[e] - ref[e]);
    tol = 1e-5 * (maxref > 1.0 ? maxref : 1.0);
    if (!(diff <= tol)) { printf("R %d bad %.3g %.3g\n", idx[i], diff, tol); continue; }
    ok[i] = 1;
  }
  ok[0] = 1;

  /* reps per sample: the default plan's fastest of 3 calls (warm now), so that one sample takes >= 10 ms */
  a.o = o;
  {
    double best = 1e30;
    for (r = 0; r < 3; ++r) {
      t0 = now();
      attngen_run(&kern[0], &a);
      t0 = now() - t0;
      if (t0 < best) best = t0;
    }
    if (best < 0.01) reps = (int)(0.01 / (best > 1e-7 ? best : 1e-7)) + 1;
  }

  tstart = now();
  for (rounds = 0; rounds < MAX_ROUNDS; ++rounds) {
    if (rounds >= MIN_ROUNDS && now() - tstart >= seconds) break;
    for (r = 0; r < n; ++r) {
      const int c = (r + rounds) % n;
      int rep;
      double c0;
      if (!ok[c]) continue;
      t0 = now();
      c0 = cpu_now();
      for (rep = 0; rep < reps; ++rep) {
        /* the next copy: not in the cache (one copy: prefill, or unchanged) */
        point_kv(&a, shape.kv_dtype, k, v, ks, vs, bytes, scales, next);
        next = (next + 1) % copies;
        attngen_run(&kern[c], &a);
      }
      samples[c][rounds] = (cpu_now() - c0) / reps;
      wall[c][rounds] = (now() - t0) / reps;
    }
  }
  printf("I %d %d %.3f\n", reps, rounds, now() - tstart);
  for (i = 0; i < n; ++i) {
    double tmp[MAX_ROUNDS], med, h1, h2, q1, q3, lo, wmed, diff = 0.0;
    const int half = rounds / 2;
    if (!ok[i]) continue;
    memcpy(tmp, samples[i], sizeof(double) * (size_t)half);
    h1 = quantile(tmp, half, 0.5);
    memcpy(tmp, samples[i] + half, sizeof(double) * (size_t)(rounds - half));
    h2 = quantile(tmp, rounds - half, 0.5);
    memcpy(tmp, samples[i], sizeof(double) * (size_t)rounds);
    med = quantile(tmp, rounds, 0.5);
    q1 = quantile(tmp, rounds, 0.25);
    q3 = quantile(tmp, rounds, 0.75);
    lo = quantile(tmp, rounds, 0.0);
    memcpy(tmp, wall[i], sizeof(double) * (size_t)rounds);
    wmed = quantile(tmp, rounds, 0.5);
    if (i > 0) {
      a.o = o;
      attngen_run(&kern[i], &a);
      for (e = 0; e < nq; ++e) if (fabs((double)o[e] - ref[e]) > diff) diff = fabs((double)o[e] - ref[e]);
    }
    printf("R %d ok %.9g %.9g %.9g %.9g %.9g %.9g %.9g %.3g\n", idx[i], med, h1, h2, q1, q3, lo, wmed, diff);
  }
  free(q); free(ref); free(o); free(kf); free(vf); attngen_free(k); attngen_free(v); attngen_free(ks); attngen_free(vs);
  return 0;
}

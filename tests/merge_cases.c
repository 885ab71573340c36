/* SPDX-License-Identifier: MIT */
/* attngen_merge_states (see merge_cases.h).
 *
 * Tolerance: the merged output is checked against the float64 reference of the whole attention at the suite's
 * CASE_TOL (1e-5 of max(1, max|ref|), cases.c), and against attngen's own single call at the same bound. Each part's
 * output carries the kernels' error (~1e-6 measured over the suite); the merge adds a few roundings per element
 * (the weights exp(lse_s - M), their sum, n products and the division: ~(n + 4) u |o| with |o| <= 1, below 1e-6
 * for n <= 4), and its weights move with the parts' fp32 lse by ~|lse| u. So the merged result keeps the kernels'
 * margin of >10x: measured at most 1.3e-7 (lse 1.4e-7) on x86-64 (scalar, AVX2, AVX-512) and aarch64 (NEON). The
 * made-up states of MERGE_EDGES isolate the merge: there it is held to MERGE_TOL (measured 2.4e-8).
 */
#include "merge_cases.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

/* The merge alone on exact fp32 states (MERGE_EDGES): (n + 4) roundings of |o| <= 1 for the output, and for the lse
 * the rounding of M + log Σ w (|lse| near 1e4 there: 2 ulps of it). */
#define MERGE_TOL 1e-6
#define MERGE_LSE_TOL(x) (2.0 * 0x1p-24 * fmax(1.0, fabs(x)) + MERGE_TOL)

enum { H = 4, KVH = 2, D = 64, MAXN = 4 };
static const uint32_t SENTINEL = 0x7FBADBADu; /* outputs' gaps and guards: a NaN pattern the merge never writes */

const char *merge_case_name(int v) {
  static const char *names[] = {"split-2", "split-3-decode", "split-4", "shared-prefix", "cascade", "edges", "errors"};
  return v >= 0 && v < MERGE_COUNT_ ? names[v] : "?";
}
int merge_uses_kernels(int v) { return v <= MERGE_CASCADE; }

static float unit(uint32_t *s) { /* [-1, 1), 24 significant bits */
  *s = *s * 1664525u + 1013904223u;
  return (float)(*s >> 8) * 0x1p-23f - 1.0f;
}
static float *randoms(size_t n, uint32_t *s) {
  float *p = malloc((n ? n : 1) * sizeof(float));
  if (p)
    for (size_t i = 0; i < n; i++) p[i] = unit(s);
  return p;
}
static float *sentinels(size_t n) {
  float *p = malloc(n * sizeof(float));
  if (p)
    for (size_t i = 0; i < n; i++) memcpy(&p[i], &SENTINEL, sizeof SENTINEL);
  return p;
}
static int is_sentinel(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u == SENTINEL;
}
static size_t extent(attngen_strides s, int batch, int rows) {
  return (size_t)((batch - 1) * s.batch + (rows - 1) * s.seq + (H - 1) * s.head + D);
}
static ptrdiff_t at(attngen_strides s, int b, int i, int h) { return b * s.batch + i * s.seq + h * s.head; }

static int kernel_for(const test_case *c, attngen_mask m, attngen_phase p, attngen_kernel *k, case_result *r) {
  const attngen_shape sh = {H, KVH, D, m, p, ATTNGEN_KV_F32, 0, 0};
  const int st = attngen_select_generic(&sh, c->isa, k);
  return st ? case_failf(r, "attngen_select_generic(%s): %s (%s)", attngen_mask_name(m), attngen_status_name(st),
                         attngen_last_error())
            : 0;
}
static int run(const attngen_kernel *k, const attngen_args *a, const char *what, case_result *r) {
  const int st = attngen_run(k, a);
  return st ? case_failf(r, "%s: attngen_run: %s (%s)", what, attngen_status_name(st), attngen_last_error()) : 0;
}

/* n parts of one attention problem, their outputs (strides in_stride, all alike) and lse (strides lse_st[s]; all
 * zero: dense), and what the whole must come to: the float64 reference and attngen's single call, both dense
 * [batch][q_len][H][D] and [batch][H][q_len]. The in-place merge goes into part `inplace`. */
typedef struct {
  int batch, q_len, n, inplace;
  float *o_in[MAXN], *lse_in[MAXN];
  attngen_strides in_stride, lse_st[MAXN];
  double *ref, *ref_lse, *one, *one_lse;
} parts;

static int parts_alloc(parts *p) {
  const size_t rows = (size_t)p->batch * H * p->q_len, in = extent(p->in_stride, p->batch, p->q_len);
  int ok = 1;
  for (int s = 0; s < p->n; s++) {
    p->o_in[s] = sentinels(in);
    p->lse_in[s] = sentinels(rows);
    ok &= p->o_in[s] && p->lse_in[s];
  }
  p->ref = malloc(rows * D * sizeof(double)), p->one = malloc(rows * D * sizeof(double));
  p->ref_lse = malloc(rows * sizeof(double)), p->one_lse = malloc(rows * sizeof(double));
  return ok && p->ref && p->one && p->ref_lse && p->one_lse;
}
static void parts_free(parts *p) {
  for (int s = 0; s < p->n; s++) free(p->o_in[s]), free(p->lse_in[s]);
  free(p->ref), free(p->one), free(p->ref_lse), free(p->one_lse);
}

/* o (strides os) and lse against dense float64 rows: the error is recorded in r when `record`; rows whose expected
 * lse is -inf must hold exact zeros and -inf. */
static int check_rows(const char *what, const parts *p, const float *o, attngen_strides os, const float *lse,
                      attngen_strides ls, const double *want, const double *want_lse, int record, case_result *r) {
  double maxref = 1.0, err = 0.0, lerr = 0.0;
  const size_t n = (size_t)p->batch * p->q_len * H * D;
  for (size_t e = 0; e < n; e++) maxref = fmax(maxref, fabs(want[e]));
  for (int b = 0; b < p->batch; b++)
    for (int i = 0; i < p->q_len; i++)
      for (int h = 0; h < H; h++) {
        const size_t row = ((size_t)b * H + h) * p->q_len + i;
        const float *got = o + at(os, b, i, h), got_lse = lse[at(ls, b, i, h)];
        const double *w = want + (((size_t)b * p->q_len + i) * H + h) * D;
        if (isinf(want_lse[row])) {
          if (!(isinf(got_lse) && got_lse < 0))
            return case_failf(r, "%s: b%d h%d row %d sees no key: lse %g, want -inf", what, b, h, i, (double)got_lse);
          for (int e = 0; e < D; e++)
            if (got[e] != 0.0f)
              return case_failf(r, "%s: b%d h%d row %d sees no key: o[%d] = %g, want 0", what, b, h, i, e,
                                (double)got[e]);
          continue;
        }
        for (int e = 0; e < D; e++) {
          const double d = fabs((double)got[e] - w[e]);
          if (!(d <= CASE_TOL * maxref))
            return case_failf(r, "%s: b%d h%d row %d o[%d] = %.9g, want %.9g (error %.3g > %.0e)", what, b, h, i, e,
                              (double)got[e], w[e], d / maxref, CASE_TOL);
          err = fmax(err, d / maxref);
        }
        const double ld = fabs((double)got_lse - want_lse[row]) / fmax(1.0, fabs(want_lse[row]));
        if (!(ld <= CASE_TOL))
          return case_failf(r, "%s: b%d h%d row %d lse %.9g, want %.9g", what, b, h, i, (double)got_lse, want_lse[row]);
        lerr = fmax(lerr, ld);
      }
  if (record) {
    r->max_err = fmax(r->max_err, err);
    r->max_lse_err = fmax(r->max_lse_err, lerr);
  }
  return 0;
}

/* Every float of buf that no row (b, i, h) of strides s covers still holds the sentinel. */
static int gaps_intact(const char *what, const float *buf, size_t total, attngen_strides s, const parts *p,
                       case_result *r) {
  unsigned char *mark = calloc(total, 1);
  if (!mark) return case_failf(r, "out of memory");
  for (int b = 0; b < p->batch; b++)
    for (int i = 0; i < p->q_len; i++)
      for (int h = 0; h < H; h++) memset(mark + at(s, b, i, h), 1, D);
  size_t bad = total;
  for (size_t e = 0; e < total && bad == total; e++)
    if (!mark[e] && !is_sentinel(buf[e])) bad = e;
  free(mark);
  return bad < total ? case_failf(r, "%s: float %zu outside the rows was written", what, bad) : 0;
}

static int merge(attngen_merge_args *m, const char *what, case_result *r) {
  const int st = attngen_merge_states(m);
  return st ? case_failf(r, "%s: attngen_merge_states: %s (%s)", what, attngen_status_name(st), attngen_last_error())
            : 0;
}

/* Merges the parts into a head-major output with padded rows and a token-major lse (other strides than the
 * inputs'), checks it against the reference and the single call, then merges again in place into part p->inplace
 * and wants the same bits. */
static int check_parts(parts *p, case_result *r) {
  const attngen_strides os = {(ptrdiff_t)H * (p->q_len * (D + 2)) + 3, D + 2, (ptrdiff_t)p->q_len * (D + 2)};
  const attngen_strides ls = {(ptrdiff_t)p->q_len * H, H, 1};
  const size_t rows = (size_t)p->batch * H * p->q_len, oe = extent(os, p->batch, p->q_len) + 8;
  float *o = sentinels(oe), *lse = sentinels(rows + 8);
  attngen_strides in_st[MAXN];
  int fail = 0;
  for (int s = 0; s < p->n; s++) in_st[s] = p->in_stride;
  attngen_merge_args m;
  memset(&m, 0, sizeof m);
  m.batch = p->batch, m.q_len = p->q_len, m.heads = H, m.head_dim = D, m.n = p->n;
  m.o_in = (const float *const *)p->o_in, m.lse_in = (const float *const *)p->lse_in;
  m.o_in_stride = in_st, m.lse_in_stride = p->lse_st;
  m.o = o + 4, m.o_stride = os, m.lse = lse + 4, m.lse_stride = ls;
  if (!o || !lse) fail = case_failf(r, "out of memory");
  if (!fail)
    fail = merge(&m, "merge", r) ||
           check_rows("merged vs float64", p, m.o, os, m.lse, ls, p->ref, p->ref_lse, 1, r) ||
           check_rows("merged vs the single call", p, m.o, os, m.lse, ls, p->one, p->one_lse, 0, r) ||
           gaps_intact("merged o", o + 4, oe - 8, os, p, r);
  if (!fail) /* the guards on either side */
    for (size_t e = 0; e < 4 && !fail; e++)
      if (!is_sentinel(o[e]) || !is_sentinel(o[oe - 1 - e]) || !is_sentinel(lse[e]) || !is_sentinel(lse[rows + 7 - e]))
        fail = case_failf(r, "merge wrote outside its tensors");
  if (!fail) { /* in place: o = o_in[j], lse = lse_in[j] with their strides: the same bits */
    const int j = p->inplace;
    m.o = p->o_in[j], m.o_stride = p->in_stride, m.lse = p->lse_in[j], m.lse_stride = p->lse_st[j];
    fail = merge(&m, "in-place merge", r);
    for (int b = 0; b < p->batch && !fail; b++)
      for (int i = 0; i < p->q_len && !fail; i++)
        for (int h = 0; h < H && !fail; h++) {
          const attngen_strides jl = p->lse_st[j].head ? p->lse_st[j] : (attngen_strides){H * p->q_len, 1, p->q_len};
          if (memcmp(p->o_in[j] + at(p->in_stride, b, i, h), o + 4 + at(os, b, i, h), D * sizeof(float)) ||
              memcmp(&p->lse_in[j][at(jl, b, i, h)], &lse[4 + at(ls, b, i, h)], sizeof(float)))
            fail = case_failf(r, "in-place merge: b%d h%d row %d differs from the merge into another tensor", b, h, i);
        }
  }
  free(o), free(lse);
  r->checked = !fail;
  r->tol = CASE_TOL;
  return fail;
}

/* float rows (dense) as doubles */
static void widen(const float *x, size_t n, double *y) {
  for (size_t e = 0; e < n; e++) y[e] = x[e];
}

/* The keys [0, kv_len) of a causal_padding problem cut into n ranges: every range but the last ends at most at
 * kv_len - q_len + 1 keys, so all queries see it whole but for kv_lens (mask padding, kv_lens clipped to the range);
 * the last keeps the causal limit (bottom-right aligned on its own keys, the same limit on the whole). */
static int run_split(const test_case *c, int n, attngen_phase phase, int batch, int q_len, int kv_len, case_result *r) {
  uint32_t seed = c->seed | 1u;
  const size_t nq = (size_t)batch * q_len * H * D, nkv = (size_t)batch * kv_len * KVH * D;
  float *q = randoms(nq, &seed), *k = randoms(nkv, &seed), *v = randoms(nkv, &seed);
  float *o1 = malloc(nq * sizeof(float)), *l1 = malloc((size_t)batch * H * q_len * sizeof(float));
  int32_t lens[8], part_lens[8], cut[MAXN + 1];
  const attngen_strides kvs = {(ptrdiff_t)kv_len * KVH * D, KVH * D, D};
  parts p = {.batch = batch, .q_len = q_len, .n = n, .inplace = n - 1, /* padded token-major parts */
             .in_stride = {(ptrdiff_t)q_len * (H * (D + 3) + 5) + 7, H * (D + 3) + 5, D + 3}};
  attngen_kernel kw, kp;
  int fail = !q || !k || !v || !o1 || !l1 || !parts_alloc(&p) ? case_failf(r, "out of memory") : 0;
  for (int b = 0; b < batch; b++) lens[b] = b % 4 == 0 ? kv_len : b % 4 == 1 ? 0 : b % 4 == 2 ? kv_len / 2 + 1 : 3;
  for (int s = 0; s <= n; s++) cut[s] = s == n ? kv_len : (kv_len - q_len + 1) * s * s / (n * n);
  fail = fail || kernel_for(c, ATTNGEN_MASK_CAUSAL_PADDING, phase, &kw, r) ||
         kernel_for(c, ATTNGEN_MASK_PADDING, phase, &kp, r);
  attngen_args a;
  memset(&a, 0, sizeof a);
  a.batch = batch, a.q_len = q_len, a.kv_len = kv_len, a.q = q, a.k = k, a.v = v, a.k_stride = a.v_stride = kvs;
  a.kv_lens = lens, a.o = o1, a.lse = l1;
  if (!fail) { /* the whole: float64 and attngen's single call */
    const attngen_shape whole = {H, KVH, D, ATTNGEN_MASK_CAUSAL_PADDING, phase, ATTNGEN_KV_F32, 0, 0};
    ref_attention(&whole, &a, p.ref, p.ref_lse);
    fail = run(&kw, &a, "single call", r);
    widen(o1, nq, p.one), widen(l1, (size_t)batch * H * q_len, p.one_lse);
  }
  for (int s = 0; s < n && !fail; s++) {
    attngen_args ap = a;
    ap.kv_len = cut[s + 1] - cut[s];
    ap.k = k + (size_t)cut[s] * KVH * D, ap.v = v + (size_t)cut[s] * KVH * D;
    for (int b = 0; b < batch; b++) {
      const int left = lens[b] - cut[s];
      part_lens[b] = left < 0 ? 0 : left > ap.kv_len ? ap.kv_len : left;
    }
    ap.kv_lens = part_lens, ap.o = p.o_in[s], ap.o_stride = p.in_stride, ap.lse = p.lse_in[s];
    fail = run(s == n - 1 ? &kw : &kp, &ap, "part", r);
  }
  if (!fail) fail = check_parts(&p, r);
  free(q), free(k), free(v), free(o1), free(l1);
  parts_free(&p);
  return fail;
}

/* A prompt prefix shared by 3 sequences: one pass over it for all of them (their queries as one sequence of 12, mask
 * none: its lse is [H][12], strides {4, 1, 12} for [3][H][4]), one causal pass per sequence over its own suffix,
 * merged, and merged in place into the prefix pass's tensors; against each sequence's prefix + suffix as one cache. */
static int run_prefix(const test_case *c, case_result *r) {
  enum { B = 3, Q = 4, P = 300 };
  static const int S[B] = {9, 20, 33};
  uint32_t seed = c->seed | 1u;
  const size_t nq = (size_t)B * Q * H * D, row_kv = (size_t)KVH * D;
  float *q = randoms(nq, &seed), *kp = randoms(P * row_kv, &seed), *vp = randoms(P * row_kv, &seed);
  float *kf = malloc((P + 33) * row_kv * sizeof(float)), *vf = malloc((P + 33) * row_kv * sizeof(float));
  float *o1 = malloc(Q * H * D * sizeof(float)), *l1 = malloc(H * Q * sizeof(float));
  parts p = {.batch = B, .q_len = Q, .n = 2, .inplace = 0, .in_stride = {(ptrdiff_t)Q * H * D, H * D, D},
             .lse_st = {{Q, 1, B * Q}}}; /* o dense; the suffixes' lse dense */
  attngen_kernel knone, kcausal;
  int fail = !q || !kp || !vp || !kf || !vf || !o1 || !l1 || !parts_alloc(&p) ? case_failf(r, "out of memory") : 0;
  fail = fail || kernel_for(c, ATTNGEN_MASK_NONE, ATTNGEN_PHASE_PREFILL, &knone, r) ||
         kernel_for(c, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_DECODE, &kcausal, r);
  attngen_args a;
  memset(&a, 0, sizeof a);
  a.batch = 1, a.q_len = B * Q, a.kv_len = P, a.q = q, a.k = kp, a.v = vp, a.o = p.o_in[0], a.lse = p.lse_in[0];
  if (!fail) fail = run(&knone, &a, "prefix", r);
  memcpy(kf, kp, P * row_kv * sizeof(float)), memcpy(vf, vp, P * row_kv * sizeof(float));
  for (int b = 0; b < B && !fail; b++) {
    const size_t qoff = (size_t)b * Q * H * D, loff = (size_t)b * H * Q;
    attngen_args s;
    memset(&s, 0, sizeof s);
    s.batch = 1, s.q_len = Q, s.kv_len = S[b], s.q = q + qoff, s.k = kf + P * row_kv, s.v = vf + P * row_kv;
    for (size_t e = 0; e < S[b] * row_kv; e++) kf[P * row_kv + e] = unit(&seed), vf[P * row_kv + e] = unit(&seed);
    s.o = p.o_in[1] + qoff, s.lse = p.lse_in[1] + loff; /* sequence b of a dense [B] tensor */
    if ((fail = run(&kcausal, &s, "suffix", r))) break;
    s.kv_len = P + S[b], s.k = kf, s.v = vf, s.o = o1, s.lse = l1; /* the whole cache of sequence b */
    const attngen_shape whole = {H, KVH, D, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_DECODE, ATTNGEN_KV_F32, 0, 0};
    ref_attention(&whole, &s, p.ref + qoff, p.ref_lse + loff);
    fail = run(&kcausal, &s, "single call", r);
    widen(o1, Q * H * D, p.one + qoff), widen(l1, H * Q, p.one_lse + loff);
  }
  if (!fail) fail = check_parts(&p, r);
  free(q), free(kp), free(vp), free(kf), free(vf), free(o1), free(l1);
  parts_free(&p);
  return fail;
}

/* attngen_cascade_decode: the prefix's rows once for every sequence (K/V of one sequence), each sequence's own rows
 * (equal lengths under the causal mask; ragged, one empty, under causal_padding), against each sequence's whole
 * cache (prefix, then its own rows) as one float64 reference and as attngen's single call. B sequences of Q queries:
 * a decode kernel takes 8 query rows, so 5 x 2 runs the prefix in two passes. */
static int run_cascade_one(const test_case *c, const attngen_table *rope_table, attngen_mask mask, int B, int Q,
                           const int *own, case_result *r) {
  enum { P = 300, MAXB = 5, MAXS = 40 };
  uint32_t seed = (c->seed | 1u) + (uint32_t)mask;
  const int kvh = rope_table ? H : KVH; /* the RoPE table is MHA */
  const size_t row_kv = (size_t)kvh * D, nq = (size_t)B * Q * H * D;
  const ptrdiff_t qb = (ptrdiff_t)Q * H * D + 16; /* Q's batch stride: padded, its seq and head strides left 0 */
  int kv = 0;
  for (int b = 0; b < B; b++) kv = own[b] > kv ? own[b] : kv;
  float *q = randoms((size_t)B * qb, &seed), *kp = randoms(P * row_kv, &seed), *vp = randoms(P * row_kv, &seed);
  float *ko = randoms((size_t)B * MAXS * row_kv, &seed), *vo = randoms((size_t)B * MAXS * row_kv, &seed);
  float *kf = malloc((P + MAXS) * row_kv * sizeof(float)), *vf = malloc((P + MAXS) * row_kv * sizeof(float));
  float *o = sentinels(nq), *lse = sentinels((size_t)B * H * Q), *o1 = malloc(Q * H * D * sizeof(float));
  float *l1 = malloc(H * Q * sizeof(float));
  int32_t lens[MAXB];
  parts p = {.batch = B, .q_len = Q, .n = 0};
  attngen_kernel k;
  const attngen_shape whole = {H, kvh, D, mask, ATTNGEN_PHASE_DECODE, ATTNGEN_KV_F32, 0, 0};
  int fail = !q || !kp || !vp || !ko || !vo || !kf || !vf || !o || !lse || !o1 || !l1 || !parts_alloc(&p)
                 ? case_failf(r, "out of memory")
             : rope_table ? (attngen_select_specialized(rope_table, &whole, c->isa, &k)
                                 ? case_failf(r, "no %s RoPE decode kernel: %s", attngen_isa_name(c->isa), attngen_last_error())
                                 : 0)
                          : kernel_for(c, mask, ATTNGEN_PHASE_DECODE, &k, r);
  attngen_cascade_args ca;
  memset(&ca, 0, sizeof ca);
  ca.prefix.kv_len = P, ca.prefix.k = kp, ca.prefix.v = vp;
  ca.suffix.batch = B, ca.suffix.q_len = Q, ca.suffix.kv_len = kv, ca.suffix.q = q, ca.suffix.o = o, ca.suffix.lse = lse;
  ca.suffix.q_stride.batch = qb;
  ca.suffix.k = ko, ca.suffix.v = vo; /* [B][MAXS][KVH][D]: capacity MAXS */
  ca.suffix.kv_capacity = MAXS;
  for (int b = 0; b < B; b++) lens[b] = own[b];
  if (mask == ATTNGEN_MASK_CAUSAL_PADDING) ca.suffix.kv_lens = lens;
  if (!fail) {
    const int st = attngen_cascade_decode(&k, &ca, 1 + (int)(c->seed % 2));
    if (st) fail = case_failf(r, "attngen_cascade_decode: %s (%s)", attngen_status_name(st), attngen_last_error());
  }
  for (int b = 0; b < B && !fail; b++) { /* sequence b's whole cache: the prefix, then its own rows */
    const size_t qoff = (size_t)b * Q * H * D, loff = (size_t)b * H * Q;
    memcpy(kf, kp, P * row_kv * sizeof(float)), memcpy(vf, vp, P * row_kv * sizeof(float));
    memcpy(kf + P * row_kv, ko + (size_t)b * MAXS * row_kv, own[b] * row_kv * sizeof(float));
    memcpy(vf + P * row_kv, vo + (size_t)b * MAXS * row_kv, own[b] * row_kv * sizeof(float));
    attngen_args s;
    memset(&s, 0, sizeof s);
    s.batch = 1, s.q_len = Q, s.kv_len = P + own[b], s.q = q + b * qb, s.k = kf, s.v = vf, s.o = o1, s.lse = l1;
    const int32_t whole_len = P + own[b];
    if (mask == ATTNGEN_MASK_CAUSAL_PADDING) s.kv_lens = &whole_len;
    /* RoPE: Q at its place in the whole cache (kv_len - q_len + i, as the cascade's default), K as stored */
    ref_attention_rope(&whole, &s, rope_table ? &k.params.rope : NULL, NULL, p.ref + qoff, p.ref_lse + loff);
    fail = run(&k, &s, "single call", r);
    widen(o1, Q * H * D, p.one + qoff), widen(l1, H * Q, p.one_lse + loff);
  }
  const attngen_strides os = {(ptrdiff_t)Q * H * D, H * D, D}, ls = {(ptrdiff_t)H * Q, 1, Q};
  if (!fail)
    fail = check_rows(rope_table ? "cascade with RoPE vs float64" : "cascade vs float64", &p, o, os, lse, ls, p.ref,
                      p.ref_lse, 1, r) ||
           check_rows("cascade vs the single call", &p, o, os, lse, ls, p.one, p.one_lse, 0, r);
  if (!fail) { /* refusals write nothing */
    memcpy(o1, o, sizeof(float)), ca.prefix.kv_len = 0;
    const int st = attngen_cascade_decode(&k, &ca, 1);
    if (st != ATTNGEN_ERR_SIZE || !*attngen_last_error() || memcmp(o1, o, sizeof(float)))
      fail = case_failf(r, "a prefix without rows: %s, want ATTNGEN_ERR_SIZE with a message and nothing written",
                        attngen_status_name(st));
    ca.prefix.kv_len = P, ca.suffix.kv_len = 0, ca.suffix.kv_lens = NULL; /* a query inside the prefix (Q > 1) */
    const int st2 = attngen_cascade_decode(&k, &ca, 1);
    if (!fail && Q > 1 && (st2 != ATTNGEN_ERR_SHAPE || memcmp(o1, o, sizeof(float))))
      fail = case_failf(r, "queries inside the prefix: %s, want ATTNGEN_ERR_SHAPE and nothing written",
                        attngen_status_name(st2));
  }
  free(q), free(kp), free(vp), free(ko), free(vo), free(kf), free(vf), free(o), free(lse), free(o1), free(l1);
  parts_free(&p);
  r->checked = !fail;
  r->tol = CASE_TOL;
  return fail;
}
static int run_cascade(const test_case *c, case_result *r) {
  static const int equal[5] = {17, 17, 17, 17, 17}, ragged[3] = {0, 5, 40}, ragged2[3] = {1, 5, 40};
  /* ragged own rows are causal at each sequence's own length (its queries its last rows), as attngen_step's */
  const attngen_table *rope = case_table("t-rope-half-h4-d64"); /* RoPE: Q rotated by its place in the whole cache */
  return run_cascade_one(c, NULL, ATTNGEN_MASK_CAUSAL, 5, 2, equal, r) ||
         run_cascade_one(c, NULL, ATTNGEN_MASK_CAUSAL_PADDING, 3, 1, ragged, r) ||
         (rope ? run_cascade_one(c, rope, ATTNGEN_MASK_CAUSAL_PADDING, 3, 2, ragged2, r)
               : case_failf(r, "test table t-rope-half-h4-d64 is missing"));
}

/* Made-up states (batch 1, one head, head_dim 3, 3 states, one row per situation) against a float64 merge; states
 * whose lse is -inf hold NaN in o, which must not be read. */
static int run_edges(case_result *r) {
  enum { N = 3, R = 8, E = 3 };
  const float inf = INFINITY, nan = NAN;
  static const char *what[R] = {"no state has keys", "one state has keys", "a NaN lse", "an lse of +inf",
                                "a NaN in a weighed o", "lse near 1e4", "lse -30, 0.5, 2", "one state without keys"};
  const float lse[N][R] = {{-inf, -inf, nan, 1.0f, 0.5f, 10000.0f, -30.0f, -inf},
                           {-inf, 0.25f, 1.0f, 2.0f, 1.5f, 10000.5f, 0.5f, 3.0f},
                           {-inf, -inf, 2.0f, inf, -1.0f, 9997.0f, 2.0f, -2.5f}};
  float o[N][R][E], out[R][E], lo[R];
  uint32_t seed = 99;
  for (int s = 0; s < N; s++)
    for (int i = 0; i < R; i++)
      for (int e = 0; e < E; e++) o[s][i][e] = isinf(lse[s][i]) && lse[s][i] < 0 ? nan : unit(&seed);
  o[0][4][1] = nan;
  const float *oin[N] = {&o[0][0][0], &o[1][0][0], &o[2][0][0]}, *lin[N] = {lse[0], lse[1], lse[2]};
  attngen_merge_args m;
  memset(&m, 0, sizeof m);
  m.batch = 1, m.q_len = R, m.heads = 1, m.head_dim = E, m.n = N, m.o_in = oin, m.lse_in = lin;
  m.o = &out[0][0], m.lse = lo; /* all dense: [R][E] rows, lse [R] */
  if (merge(&m, "merge", r)) return 1;
  for (int i = 0; i < R; i++) {
    double mx = -INFINITY, sum = 0.0, want[E] = {0.0, 0.0, 0.0}, wl;
    int nan_row = 0;
    for (int s = 0; s < N; s++) nan_row |= isnan(lse[s][i]) || (isinf(lse[s][i]) && lse[s][i] > 0);
    for (int s = 0; s < N; s++) mx = fmax(mx, lse[s][i]);
    for (int s = 0; s < N && !nan_row && !isinf(mx); s++)
      if (!isinf(lse[s][i])) sum += exp((double)lse[s][i] - mx);
    wl = nan_row ? NAN : isinf(mx) ? -INFINITY : mx + log(sum);
    for (int s = 0; s < N && !nan_row && !isinf(mx); s++)
      for (int e = 0; e < E; e++)
        if (!isinf(lse[s][i])) want[e] += exp((double)lse[s][i] - wl) * o[s][i][e];
    for (int e = 0; e < E; e++) {
      const int want_nan = nan_row || (i == 4 && e == 1);
      const double d = fabs((double)out[i][e] - want[e]);
      if (want_nan ? !isnan(out[i][e]) : !(d <= MERGE_TOL))
        return case_failf(r, "row '%s': o[%d] = %.9g, want %.9g", what[i], e, (double)out[i][e],
                          want_nan ? NAN : want[e]);
      if (!want_nan) r->max_err = fmax(r->max_err, d);
    }
    if (nan_row ? !isnan(lo[i]) : isinf(wl) ? lo[i] != wl : !(fabs(lo[i] - wl) <= MERGE_LSE_TOL(wl)))
      return case_failf(r, "row '%s': lse = %.9g, want %.9g", what[i], (double)lo[i], wl);
    if (i == 1 && (memcmp(out[1], o[1][1], sizeof out[1]) || lo[1] != lse[1][1]))
      return case_failf(r, "row '%s': not that state's o and lse bit for bit", what[i]);
  }
  /* one state: its rows unchanged (bit for bit) but for those without keys, which become zeros */
  m.n = 1, m.o_in = oin + 2, m.lse_in = lin + 2;
  if (merge(&m, "merge of one state", r)) return 1;
  for (int i = 0; i < R; i++)
    for (int e = 0; e < E; e++) {
      const float l = lse[2][i], want = isinf(l) ? (l < 0 ? 0.0f : nan) : o[2][i][e];
      if (memcmp(&out[i][e], &want, sizeof want) && !(isnan(want) && isnan(out[i][e])))
        return case_failf(r, "merge of one state: row %d o[%d] = %.9g, want %.9g", i, e, (double)out[i][e],
                          (double)want);
    }
  r->checked = 1;
  r->tol = CASE_TOL;
  return 0;
}

/* ---- refusals: each returns its status and a message and leaves every byte of the arena as it was */

typedef struct {
  float *arena;
  size_t n;
  float *snap;
  case_result *r;
  int fail;
} err_ctx;

static void expect(err_ctx *x, const char *what, const attngen_merge_args *m, int want) {
  if (x->fail) return;
  memcpy(x->snap, x->arena, x->n * sizeof(float));
  const int st = attngen_merge_states(m);
  if (st != want)
    x->fail = case_failf(x->r, "%s: status %s, want %s (%s)", what, attngen_status_name(st), attngen_status_name(want),
                         attngen_last_error());
  else if (want != ATTNGEN_OK && !attngen_last_error()[0])
    x->fail = case_failf(x->r, "%s: no message", what);
  else if (want != ATTNGEN_OK && memcmp(x->snap, x->arena, x->n * sizeof(float)))
    x->fail = case_failf(x->r, "%s: refused but wrote", what);
}

static int run_errors(case_result *r) {
  enum { B = 2, Q = 3, NH = 2, HD = 4, T = B * Q * NH * HD, L = B * NH * Q };
  err_ctx x = {.n = 3 * T + 3 * L + 16, .r = r};
  x.arena = malloc(x.n * sizeof(float)), x.snap = malloc(x.n * sizeof(float));
  if (!x.arena || !x.snap) return case_failf(r, "out of memory");
  uint32_t seed = 5;
  for (size_t e = 0; e < x.n; e++) x.arena[e] = unit(&seed);
  /* arena: o_in[0], o_in[1], o, lse_in[0], lse_in[1], lse */
  float *o0 = x.arena, *o1 = o0 + T, *o = o1 + T, *l0 = o + T, *l1 = l0 + L, *lse = l1 + L;
  const float *oin[2] = {o0, o1}, *lin[2] = {l0, l1}, *null_o[2] = {o0, NULL}, *null_l[2] = {l0, NULL};
  attngen_strides bad[2] = {{0, 0, 0}, {0, 0, 0}}; /* o_in or lse_in strides, the second one bad */
  attngen_merge_args base, m;
  memset(&base, 0, sizeof base);
  base.batch = B, base.q_len = Q, base.heads = NH, base.head_dim = HD, base.n = 2;
  base.o_in = oin, base.lse_in = lin, base.o = o, base.lse = lse;
#define TRY(what, change, want) \
  do {                                \
    m = base;                         \
    change;                           \
    expect(&x, what, &m, want);       \
  } while (0)
  TRY("the valid call", (void)0, ATTNGEN_OK);
  expect(&x, "args NULL", NULL, ATTNGEN_ERR_NULL);
  TRY("o_in NULL", m.o_in = NULL, ATTNGEN_ERR_NULL);
  TRY("lse_in NULL", m.lse_in = NULL, ATTNGEN_ERR_NULL);
  TRY("o NULL", m.o = NULL, ATTNGEN_ERR_NULL);
  TRY("o_in[1] NULL", m.o_in = null_o, ATTNGEN_ERR_NULL);
  TRY("lse_in[1] NULL", m.lse_in = null_l, ATTNGEN_ERR_NULL);
  static const struct { /* sizes: each refused with ATTNGEN_ERR_SIZE */
    const char *what;
    int n, batch, q_len, heads, head_dim;
  } sizes[] = {{"n 0", 0, B, Q, NH, HD},         {"n -1", -1, B, Q, NH, HD},
               {"batch 0", 2, 0, Q, NH, HD},     {"q_len 0", 2, B, 0, NH, HD},
               {"q_len above ATTNGEN_MAX_LEN", 2, B, ATTNGEN_MAX_LEN + 1, NH, HD},
               {"heads -1", 2, B, Q, -1, HD},    {"head_dim 0", 2, B, Q, NH, 0},
               {"sizes overflow", 2, 1 << 30, 1 << 30, 1 << 30, HD}};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    TRY(sizes[i].what, (m.n = sizes[i].n, m.batch = sizes[i].batch, m.q_len = sizes[i].q_len,
                        m.heads = sizes[i].heads, m.head_dim = sizes[i].head_dim), ATTNGEN_ERR_SIZE);
  TRY("negative o stride", m.o_stride.seq = -1, ATTNGEN_ERR_STRIDE);
  TRY("negative o_in[1] stride", (bad[1] = (attngen_strides){0, 0, -HD}, m.o_in_stride = bad), ATTNGEN_ERR_STRIDE);
  TRY("negative lse stride", m.lse_stride.batch = -1, ATTNGEN_ERR_STRIDE);
  TRY("lse rows overlap", (m.lse_stride = (attngen_strides){1, 1, 1}), ATTNGEN_ERR_STRIDE);
  TRY("o rows overlap", m.o_stride.head = 1, ATTNGEN_ERR_STRIDE);
  TRY("o_in[1] extent overflows", (bad[1] = (attngen_strides){PTRDIFF_MAX / 2, 0, 0}, m.o_in_stride = bad),
      ATTNGEN_ERR_SIZE);
  TRY("lse_in[1] extent overflows", (bad[1] = (attngen_strides){PTRDIFF_MAX / 2, 0, 0}, m.lse_in_stride = bad),
      ATTNGEN_ERR_SIZE);
  TRY("o extent overflows", m.o_stride.seq = PTRDIFF_MAX / 4, ATTNGEN_ERR_SIZE);
  TRY("o overlaps o_in[1]", m.o = o1 + 1, ATTNGEN_ERR_ALIAS);
  TRY("o is o_in[0] with other strides", (m.o = o0, m.o_stride = (attngen_strides){0, NH * HD + 1, 0}),
      ATTNGEN_ERR_ALIAS);
  TRY("o overlaps lse_in[0]", (m.o = l0 - 1, m.lse = NULL), ATTNGEN_ERR_ALIAS);
  TRY("lse overlaps o", m.lse = o + T - 1, ATTNGEN_ERR_ALIAS);
  TRY("lse overlaps lse_in[1]", m.lse = l1 + 1, ATTNGEN_ERR_ALIAS);
  TRY("lse overlaps o_in[0]", m.lse = o0 + 2, ATTNGEN_ERR_ALIAS);
  TRY("lse is lse_in[0] with other strides", (m.lse = l0, m.lse_stride = (attngen_strides){NH * Q, NH, 1}),
      ATTNGEN_ERR_ALIAS);
  TRY("o is o_in[1], lse is lse_in[0]", (m.o = o1, m.lse = l0), ATTNGEN_OK);
  TRY("lse is lse_in[0], its dense strides spelled out", (m.lse = l0, m.lse_stride = (attngen_strides){NH * Q, 1, Q}),
      ATTNGEN_OK);
  TRY("no lse", m.lse = NULL, ATTNGEN_OK);
#undef TRY
  free(x.arena), free(x.snap);
  return x.fail;
}

int merge_run(const test_case *c, case_result *r) {
  switch (c->variant) {
  case MERGE_SPLIT2: return run_split(c, 2, ATTNGEN_PHASE_PREFILL, 3, 5, 130, r);
  case MERGE_SPLIT3: return run_split(c, 3, ATTNGEN_PHASE_DECODE, 2, 4, 1500, r);
  case MERGE_SPLIT4: return run_split(c, 4, ATTNGEN_PHASE_PREFILL, 4, 7, 257, r);
  case MERGE_PREFIX: return run_prefix(c, r);
  case MERGE_CASCADE: return run_cascade(c, r);
  case MERGE_EDGES: return run_edges(r);
  case MERGE_ERRORS: return run_errors(r);
  }
  return case_failf(r, "unknown merge scenario %d", c->variant);
}

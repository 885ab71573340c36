/* SPDX-License-Identifier: MIT */
/* The KV cache as decoders use it: attngen_kv_append (RoPE on the new K rows) and attngen_step
 * (append + attention in one call), checked the way a decoder's KV-cache loop is meant to work:
 * attending token by token against a growing cache must give what one causal prefill of the whole sequence
 * gives, and both what a float64 reference gives (q and k rotated in double, from the raw tokens).
 *
 * CK_STEP, per test table with causal kernels, per ISA (and through attngen_select, whose fallback to the generic
 * kernel must rotate alike): the scenarios of rope_cases.h. Sequence 0 has 300 tokens, sequence 1 a 37-token
 * prompt and then 300 more, so every batched step is ragged (cache lengths t and 37 + t). Checked:
 *   decode-loop outputs vs the full prefill's, each vs the float64 reference, and the decode loop's lse, all at
 *   CASE_TOL (1e-5 relative to max(1, max|ref|), the suite's tolerance, derived at the top of cases.c: RoPE adds
 *   one fp32 rotation, ~2^-22 relative, to q and to k, which moves a score by ~1e-7);
 *   the cache afterwards: K rows = the raw K rotated (float64) to ~2^-22, V rows bit-exact, rows past each
 *   sequence's length never written (still NaN).
 * STEP_DECODE3 gives explicit positions ending at 2^20: the angle pos * inv_freq is float64 in the runtime, so
 * the error stays at the fp32 rotation's (an fp32 angle would be off by up to 2^20 * 2^-24 = 0.06 rad there).
 * Every scenario also runs attngen_run's causal prefill over the cache the steps wrote: the same outputs at CASE_TOL.
 * A cache of another storage type (test_case.shape.kv_dtype; kv_types.h) is checked the same way against the float64
 * reference on the values it stores (dequantized as the kernels read them), V as the conversion of the raw rows bit
 * for bit, K within the type's rounding of the float64 rotation. The full prefill (one step) may store a row that
 * differs in a rounding or quantization step from the steps' (the RoPE cos/sin of a position depend on the run of
 * positions it was appended with, near 2^20 in the last bit): its outputs are then checked against the reference on
 * its own cache, and compared with the steps' only where both wrote the same cache (fp32: always).
 *
 * CK_APPEND, per test table: rotation of single tokens at positions 0 .. 2^31 - 1 against float64 (bound
 * 8 * 2^-24 * max(|x0|, |x1|) per element, see check_rows), the table's inv_freq against an independent float64
 * recomputation from theta and the scaling (relative 1e-13), then every argument error of attngen_kv_append and
 * attngen_step: each must return its documented code with a message and leave the caches, o and lse
 * bit-identical (memcmp) -- among them an append that one sequence of three cannot take (ATTNGEN_ERR_CAPACITY:
 * the other two are not appended either) and a decode step of 9 tokens (refused by the attention's check, before
 * the cache is written). */
#include "rope_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_types.h"
#include "reference.h"

#define STEP_T 300     /* tokens of sequence 0 */
#define STEP_PROMPT 37 /* sequence 1: this many prompt tokens first, then STEP_T more */


const char *rope_step_name(int variant) {
  static const char *names[STEP_COUNT_] = {"decode-1x300", "chunked-7", "decode-3-pos-2^20", "decode-1x40-after-1100",
                                            "decode-1x300-head-major-cache"};
  return variant >= 0 && variant < STEP_COUNT_ ? names[variant] : "?";
}

const attngen_rope *rope_of(const attngen_table *t, const attngen_shape *s) {
  if (!t || t->heads != s->heads || t->kv_heads != s->kv_heads || t->head_dim != s->head_dim) return NULL;
  return t->params.rope.style != ATTNGEN_ROPE_NONE ? &t->params.rope : NULL;
}

static float unit(uint64_t *s) { /* splitmix64 -> [-1, 1), 24 significant bits */
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (float)((int32_t)((uint32_t)((z ^ (z >> 31)) >> 32) >> 8) - (1 << 23)) / (float)(1 << 23);
}

static void fill_nan(float *p, size_t n) {
  for (size_t i = 0; i < n; i++) p[i] = NAN;
}

/* The kernel of c's table (or attngen_select's choice) for the mask and phase. */
static int kernel_for(const test_case *c, attngen_mask mask, attngen_phase phase, attngen_kernel *k, case_result *r) {
  attngen_shape sh = c->shape;
  sh.mask = mask;
  sh.phase = phase;
  int st = c->via_select ? attngen_select(c->table, &sh, k) : attngen_select_specialized(c->table, &sh, c->isa, k);
  if (st != ATTNGEN_OK)
    return case_failf(r, "no %s %s kernel: %s (%s)", attngen_mask_name(mask), attngen_phase_name(phase),
                 attngen_status_name(st), attngen_last_error());
  return 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* CK_STEP */

typedef struct {
  int H, KVH, D, L[2], Lmax, cap;
  int head_major;   /* the cache [b][KVH][cap][D] instead of [b][cap][KVH][D] (same size), through the strides */
  int G;            /* int8 scales per row (0: the type has none) */
  float *q, *k, *v; /* raw tokens, [b][Lmax][heads][D] */
  int32_t *pos;     /* [b][Lmax] */
  kvt_cache c;      /* the cache in the case's storage type, [b][cap][KVH][D] or (head_major) [b][KVH][cap][D];
                       int8 scales [b][cap][KVH][G] or [b][KVH][cap][G] */
  float *sq, *sk, *sv, *so, *sl; /* one step's rows, [nb][n][...], and its lse [nb][H][n] */
  int32_t *spos;
  float sinks[ATTNGEN_MAX_HEADS]; /* sink logits of the kernels with SINKS: -3 .. 3 by head */
} world;

/* Offset of cache row t, kv head h of sequence b in elements, and of its first scale. */
static size_t cache_at(const world *w, int b, int t, int h) {
  return w->head_major ? (((size_t)b * w->KVH + h) * w->cap + t) * w->D : (((size_t)b * w->cap + t) * w->KVH + h) * w->D;
}
static size_t scale_at(const world *w, int b, int t, int h) {
  return w->head_major ? (((size_t)b * w->KVH + h) * w->cap + t) * w->G : (((size_t)b * w->cap + t) * w->KVH + h) * w->G;
}

static void world_free(world *w) {
  free(w->q), free(w->k), free(w->v), free(w->pos);
  kvt_free(&w->c);
  free(w->sq), free(w->sk), free(w->sv), free(w->so), free(w->sl), free(w->spos);
}

/* One attngen_step on sequences first .. first + nb - 1, n new tokens each, sequence first + i starting at token
 * t0[i] (= its cache length). Outputs go to o [b][Lmax][H][D] and lse [b][H][Lmax] at the tokens' rows. */
static int do_step(world *w, const attngen_kernel *k, int first, int nb, const int *t0, int n, int give_pos,
                   float *o, float *lse, case_result *r) {
  const size_t qrow = (size_t)w->H * w->D, krow = (size_t)w->KVH * w->D;
  int32_t len[2];
  for (int i = 0; i < nb; i++) {
    const int b = first + i;
    len[i] = t0[i];
    memcpy(w->sq + (size_t)i * n * qrow, w->q + ((size_t)b * w->Lmax + t0[i]) * qrow, sizeof(float) * n * qrow);
    memcpy(w->sk + (size_t)i * n * krow, w->k + ((size_t)b * w->Lmax + t0[i]) * krow, sizeof(float) * n * krow);
    memcpy(w->sv + (size_t)i * n * krow, w->v + ((size_t)b * w->Lmax + t0[i]) * krow, sizeof(float) * n * krow);
    memcpy(w->spos + (size_t)i * n, w->pos + (size_t)b * w->Lmax + t0[i], sizeof(int32_t) * (size_t)n);
  }
  attngen_step_args s;
  memset(&s, 0, sizeof s);
  s.kv.batch = nb;
  s.kv.n_new = n;
  s.kv.kv_capacity = w->cap;
  s.kv.cache_len = len;
  s.kv.pos = give_pos ? w->spos : NULL;
  s.kv.k_new = w->sk;
  s.kv.v_new = w->sv;
  /* either layout: a sequence's cache spans cap * krow elements and cap * KVH * G scales */
  const size_t e0 = (size_t)first * w->cap * krow, s0 = (size_t)first * w->cap * w->KVH * w->G;
  kvt_set_append(&s.kv, &w->c, e0, e0, s0, s0);
  if (w->head_major) {
    s.kv.k_cache_stride.seq = s.kv.v_cache_stride.seq = w->D;
    s.kv.k_cache_stride.head = s.kv.v_cache_stride.head = (ptrdiff_t)w->cap * w->D;
    s.kv.k_cache_stride.batch = s.kv.v_cache_stride.batch = (ptrdiff_t)w->cap * krow;
    if (w->G) {
      s.kv.k_cache_scale_stride.seq = s.kv.v_cache_scale_stride.seq = w->G;
      s.kv.k_cache_scale_stride.head = s.kv.v_cache_scale_stride.head = (ptrdiff_t)w->cap * w->G;
      s.kv.k_cache_scale_stride.batch = s.kv.v_cache_scale_stride.batch = (ptrdiff_t)w->cap * w->KVH * w->G;
    }
  }
  s.q = w->sq;
  s.o = w->so;
  s.lse = w->sl;
  if (k->shape.features & ATTNGEN_ATTN_SINKS) s.sinks = w->sinks;
  int st = attngen_step(k, &s);
  if (st != ATTNGEN_OK)
    return case_failf(r, "attngen_step(%s, batch %d, n_new %d, cache_len %d%s): %s (%s)", k->info->name, nb, n, t0[0],
                 nb > 1 ? " ..." : "", attngen_status_name(st), attngen_last_error());
  for (int i = 0; i < nb; i++) {
    const int b = first + i;
    memcpy(o + ((size_t)b * w->Lmax + t0[i]) * qrow, w->so + (size_t)i * n * qrow, sizeof(float) * n * qrow);
    for (int h = 0; h < w->H; h++)
      memcpy(lse + ((size_t)b * w->H + h) * w->Lmax + t0[i], w->sl + ((size_t)i * w->H + h) * n, sizeof(float) * n);
  }
  return 0;
}

/* max |got - ref| / max(1, max |ref|) over sequence b's rows (o layout [b][Lmax][H][D], ref [L][H][D]) */
static double out_err(const world *w, int b, const float *got, const double *ref) {
  const size_t n = (size_t)w->L[b] * w->H * w->D;
  double mr = 1.0, e = 0.0;
  for (size_t i = 0; i < n; i++) mr = fabs(ref[i]) > mr ? fabs(ref[i]) : mr;
  const float *g = got + (size_t)b * w->Lmax * w->H * w->D;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)g[i] - ref[i]);
    if (!(d <= e)) e = d; /* NaN wins */
  }
  return e / mr;
}

/* max |a - f| / max(1, max |f|) over sequence b's rows (both [b][Lmax][H][D]) */
static double out_diff(const world *w, int b, const float *a, const float *f) {
  const size_t n = (size_t)w->L[b] * w->H * w->D, off = (size_t)b * w->Lmax * w->H * w->D;
  double mf = 1.0, d = 0.0;
  for (size_t i = 0; i < n; i++) mf = fabs(f[off + i]) > mf ? fabs(f[off + i]) : mf;
  for (size_t i = 0; i < n; i++) {
    const double x = fabs((double)a[off + i] - (double)f[off + i]);
    if (!(x <= d)) d = x;
  }
  return d / mf;
}

/* The float64 reference of sequence b's L tokens, causal, q rotated at its positions: fp32 caches from the raw rows
 * (K rotated here in float64), other types on the values cache cc stores (K as stored: rotated), dequantized as the
 * kernels read them (into kd, vd [L][KVH][D]). ref [L][H][D], ref_lse [H][L]. */
static void step_reference(const world *w, const test_case *c, const kvt_cache *cc, const attngen_rope *rope, int b,
                           float *kd, float *vd, double *ref, double *ref_lse) {
  const int L = w->L[b];
  const size_t qrow = (size_t)w->H * w->D, krow = (size_t)w->KVH * w->D;
  attngen_shape sh = c->shape;
  sh.mask = ATTNGEN_MASK_CAUSAL;
  attngen_args ra;
  memset(&ra, 0, sizeof ra);
  ra.batch = 1, ra.q_len = L, ra.kv_len = L;
  ra.q = w->q + (size_t)b * w->Lmax * qrow, ra.k = w->k + (size_t)b * w->Lmax * krow, ra.v = w->v + (size_t)b * w->Lmax * krow;
  ra.q_pos = w->pos + (size_t)b * w->Lmax;
  ra.scale = c->table ? c->table->params.scale : 0.0f;
  if (c->table) { /* the attention features' values: the table's (the steps pass none) */
    const attngen_feature_values *fv = &c->table->params.features;
    ra.window = fv->window, ra.sink_tokens = fv->sink_tokens, ra.softcap = fv->softcap;
    ra.alibi_slopes = fv->alibi_slopes;
  }
  if (sh.features & ATTNGEN_ATTN_SINKS) ra.sinks = w->sinks;
  if (cc->t == ATTNGEN_KV_F32) {
    ref_attention_rope(&sh, &ra, rope, w->pos + (size_t)b * w->Lmax, ref, ref_lse);
    return;
  }
  for (int t = 0; t < L; t++)
    for (int h = 0; h < w->KVH; h++)
      for (int e = 0; e < w->D; e++) {
        const size_t o = ((size_t)t * w->KVH + h) * w->D + e;
        kd[o] = kvt_value(cc, 0, cache_at(w, b, t, h) + e, scale_at(w, b, t, h), e);
        vd[o] = kvt_value(cc, 1, cache_at(w, b, t, h) + e, scale_at(w, b, t, h), e);
      }
  ra.k = kd, ra.v = vd;
  ref_attention_rope(&sh, &ra, rope, NULL, ref, ref_lse);
}

/* attngen_run of the causal prefill kernel k over sequence b's L tokens and the cache cc (its positions when
 * give_pos, else the natural ones): o [L][H][D], lse [H][L]. */
static int run_over_cache(const world *w, const kvt_cache *cc, const attngen_kernel *k, int b, int give_pos, float *o,
                          float *lse, case_result *r) {
  const int L = w->L[b];
  const size_t krow = (size_t)w->KVH * w->D, e0 = (size_t)b * w->cap * krow, s0 = (size_t)b * w->cap * w->KVH * w->G;
  const int32_t lens[1] = {L};
  attngen_args a;
  memset(&a, 0, sizeof a);
  a.batch = 1, a.q_len = L, a.kv_len = L, a.kv_capacity = w->cap;
  a.q = w->q + (size_t)b * w->Lmax * w->H * w->D;
  kvt_set_args(&a, cc, e0, e0, s0, s0);
  if (w->head_major) {
    a.k_stride.seq = a.v_stride.seq = w->D;
    a.k_stride.head = a.v_stride.head = (ptrdiff_t)w->cap * w->D;
    a.k_scale_stride.seq = a.v_scale_stride.seq = w->G;
    a.k_scale_stride.head = a.v_scale_stride.head = (ptrdiff_t)w->cap * w->G;
  }
  a.kv_lens = lens;
  a.q_pos = give_pos ? w->pos + (size_t)b * w->Lmax : NULL;
  a.o = o, a.lse = lse;
  if (k->shape.features & ATTNGEN_ATTN_SINKS) a.sinks = w->sinks;
  const int st = attngen_run(k, &a);
  if (st != ATTNGEN_OK)
    return case_failf(r, "attngen_run(%s, sequence %d over the steps' cache): %s (%s)", k->info->name, b,
                      attngen_status_name(st), attngen_last_error());
  return 0;
}

/* Sequence b's rows of cache cc after the steps: nothing past its length written; V the conversion of the raw rows
 * bit for bit; K likewise without RoPE, else the fp32 rotation within the type's rounding of the float64 one. *e_k:
 * the largest |stored K - float64 rotation| seen. */
static int check_cache(const world *w, const kvt_cache *cc, const test_case *c, const attngen_rope *rope, int b,
                       double *e_k, const char *which, case_result *r) {
  const attngen_kv_dtype dt = cc->t;
  const int L = w->L[b], g = w->G ? w->D / w->G : w->D;
  double inv[ATTNGEN_MAX_HEAD_DIM / 2], y[ATTNGEN_MAX_HEAD_DIM];
  char why[256];
  (void)c;
  if (rope) ref_rope_inv_freq(rope, inv);
  for (int t = 0; t < w->cap; t++)
    for (int h = 0; h < w->KVH; h++) {
      const size_t ce = cache_at(w, b, t, h), cs = scale_at(w, b, t, h);
      const float *kr = w->k + (((size_t)b * w->Lmax + t) * w->KVH + h) * w->D;
      const float *vr = w->v + (((size_t)b * w->Lmax + t) * w->KVH + h) * w->D;
      if (t >= L) {
        if (!kvt_row_poisoned(cc, 0, ce, cs) || !kvt_row_poisoned(cc, 1, ce, cs))
          return case_failf(r, "%s cache: row %d of sequence %d (length %d) was written", which, t, b, L);
        continue;
      }
      if (kvt_row_check(cc, 1, ce, cs, vr, why, sizeof why))
        return case_failf(r, "%s cache: V row %d of sequence %d: %s", which, t, b, why);
      if (!rope) {
        if (kvt_row_check(cc, 0, ce, cs, kr, why, sizeof why))
          return case_failf(r, "%s cache: K row %d of sequence %d: %s", which, t, b, why);
        continue;
      }
      ref_rope_rotate(rope, inv, w->pos[(size_t)b * w->Lmax + t], kr, w->D, y);
      for (int e = 0; e < w->D; e++) {
        const double got = (double)kvt_value(cc, 0, ce + e, cs, e), x = fabs(got - y[e]);
        if (!(x <= *e_k)) *e_k = x;
        if (dt == ATTNGEN_KV_F32) continue; /* checked against 8 u by the caller */
        double m = 0.0; /* the largest |y| of the element's scale group */
        for (int f = e / g * g; f < (e / g + 1) * g; f++) m = fabs(y[f]) > m ? fabs(y[f]) : m;
        const double bound = kvt_store_bound(dt, y[e], m, 8.0 * 0x1p-24 * ref_rope_cs_scale(rope));
        if (!(x <= bound))
          return case_failf(r, "%s %s cache: K row %d head %d of sequence %d, dim %d: stored %.9g, the float64 rotation "
                            "%.9g (bound %.3g)", which, attngen_kv_dtype_name(dt), t, h, b, e, got, y[e], bound);
      }
    }
  return 0;
}

int rope_run_step(const test_case *c, case_result *r) {
  memset(r, 0, sizeof *r);
  /* soft-capped kernels: the vector tanh's error, as in tests/cases.c */
  const double tol = CASE_TOL + ((c->shape.features & ATTNGEN_ATTN_SOFTCAP) && c->table
                                 ? CASE_SOFTCAP_TOL(c->table->params.features.softcap) : 0.0);
  r->tol = tol;
  attngen_kernel kpre, kdec;
  const attngen_mask mask = c->shape.mask;
  if (kernel_for(c, mask, ATTNGEN_PHASE_PREFILL, &kpre, r)) return 1;
  if (c->variant != STEP_CHUNKED && kernel_for(c, mask, ATTNGEN_PHASE_DECODE, &kdec, r)) return 1;
  const attngen_rope *rope = rope_of(c->table, &c->shape);
  world w;
  memset(&w, 0, sizeof w);
  for (int h = 0; h < ATTNGEN_MAX_HEADS; h++) w.sinks[h] = 0.75f * (float)(h % 9 - 4);
  w.H = c->shape.heads, w.KVH = c->shape.kv_heads, w.D = c->shape.head_dim;
  w.head_major = c->variant == STEP_HEAD_MAJOR;
  const attngen_kv_dtype dt = c->shape.kv_dtype;
  const int typed = dt != ATTNGEN_KV_F32;
  w.G = kvt_group(dt, w.D) ? w.D / kvt_group(dt, w.D) : 0;
  kvt_cache full; /* the cache the full prefill wrote */
  memset(&full, 0, sizeof full);
  float *kd = NULL, *vd = NULL; /* one sequence's stored K and V, dequantized: [Lmax][KVH][D] */
  const int T = c->variant == STEP_LONG ? 40 : STEP_T, P = c->variant == STEP_LONG ? 1100 : STEP_PROMPT;
  w.L[0] = T, w.L[1] = P + T, w.Lmax = w.L[1], w.cap = w.Lmax + 5;
  const size_t qrow = (size_t)w.H * w.D, krow = (size_t)w.KVH * w.D, nq = 2 * (size_t)w.Lmax * qrow;
  const size_t nk = 2 * (size_t)w.Lmax * krow, ncache = 2 * (size_t)w.cap * krow, nl = 2 * (size_t)w.H * w.Lmax;
  float *o_dec = malloc(sizeof(float) * nq), *o_full = malloc(sizeof(float) * nq), *o_run = malloc(sizeof(float) * nq);
  float *l_run = malloc(sizeof(float) * nl);
  float *l_dec = malloc(sizeof(float) * nl), *l_full = malloc(sizeof(float) * nl);
  double *ref = malloc(sizeof(double) * (size_t)w.Lmax * qrow), *ref_lse = malloc(sizeof(double) * (size_t)w.H * w.Lmax);
  w.q = malloc(sizeof(float) * nq), w.k = malloc(sizeof(float) * nk), w.v = malloc(sizeof(float) * nk);
  w.pos = malloc(sizeof(int32_t) * 2 * (size_t)w.Lmax);
  const size_t nscale = 2 * (size_t)w.cap * w.KVH * w.G;
  const int cache_bad = kvt_alloc(&w.c, dt, w.D, ncache, ncache, nscale, nscale);
  kd = malloc(sizeof(float) * (size_t)w.Lmax * krow), vd = malloc(sizeof(float) * (size_t)w.Lmax * krow);
  w.sq = malloc(sizeof(float) * nq), w.sk = malloc(sizeof(float) * nk), w.sv = malloc(sizeof(float) * nk);
  w.so = malloc(sizeof(float) * nq), w.sl = malloc(sizeof(float) * nl);
  w.spos = malloc(sizeof(int32_t) * 2 * (size_t)w.Lmax);
  int fail = 0;
  if (!o_dec || !o_full || !o_run || !l_run || !l_dec || !l_full || !ref || !ref_lse || !w.q || !w.k || !w.v || !w.pos || cache_bad ||
      !kd || !vd || !w.sq || !w.sk || !w.sv || !w.so || !w.sl || !w.spos) {
    fail = case_failf(r, "out of memory");
    goto done;
  }
  uint64_t seed = 0xC0FFEEull ^ ((uint64_t)c->seed << 17);
  for (size_t i = 0; i < nq; i++) w.q[i] = unit(&seed);
  for (size_t i = 0; i < nk; i++) w.k[i] = unit(&seed), w.v[i] = unit(&seed);
  const int explicit_pos = c->variant == STEP_DECODE3;
  for (int b = 0; b < 2; b++)
    for (int t = 0; t < w.Lmax; t++) /* explicit: the last token of each sequence sits at 2^20 */
      w.pos[(size_t)b * w.Lmax + t] = explicit_pos ? (1 << 20) - (w.L[b] - 1) + t : t;
  fill_nan(o_dec, nq), fill_nan(o_full, nq), fill_nan(o_run, nq), fill_nan(l_dec, nl), fill_nan(l_full, nl);

  /* the full causal prefill of each sequence: one step from an empty cache */
  for (int b = 0; b < 2 && !fail; b++) {
    const int t0[1] = {0};
    fail = do_step(&w, &kpre, b, 1, t0, w.L[b], explicit_pos, o_full, l_full, r);
  }
  if (!fail && kvt_clone(&full, &w.c)) fail = case_failf(r, "out of memory");
  /* the same tokens step by step: sequence 1's prompt alone, then both sequences together (ragged) */
  kvt_poison(&w.c);
  if (!fail) {
    const int t0[1] = {0};
    fail = do_step(&w, &kpre, 1, 1, t0, P, explicit_pos, o_dec, l_dec, r);
  }
  const int chunk = c->variant == STEP_DECODE1 || c->variant == STEP_HEAD_MAJOR ? 1 : c->variant == STEP_CHUNKED ? 7 : 3;
  for (int t = 0; t < T && !fail; t += chunk) {
    const int n = T - t < chunk ? T - t : chunk, t0[2] = {t, P + t};
    fail = do_step(&w, c->variant == STEP_CHUNKED ? &kpre : &kdec, 0, 2, t0, n, explicit_pos, o_dec, l_dec, r);
  }
  if (fail) goto done;
  /* the causal prefill over the cache the steps wrote (attngen_run, each sequence's tokens at their positions) */
  for (int b = 0; b < 2 && !fail; b++)
    fail = run_over_cache(&w, &w.c, &kpre, b, explicit_pos, o_run + (size_t)b * w.Lmax * qrow, l_run, r);
  if (fail) goto done;
  /* whether the full prefill wrote the same cache: the same rows and positions are appended alike, except that
   * the RoPE cos/sin of a position may round differently with the run of tokens it came in (runtime/attngen_rope.c,
   * attngen_rope_cos_sin), so that a rounding or quantization step can flip where positions are large */
  const int same = kvt_same(&full, &w.c);

  double e_dec = 0, e_full = 0, e_df = 0, e_run = 0, e_rd = 0, e_lse = 0, e_k = 0;
  for (int b = 0; b < 2 && !fail; b++) {
    const int L = w.L[b];
    for (int which = 0; which < 2 && !fail; which++) { /* 0: the steps' cache, 1: the full prefill's */
      const kvt_cache *cc = which ? &full : &w.c;
      if (which && (same || !typed)) break; /* the same reference */
      step_reference(&w, c, cc, rope, b, kd, vd, ref, ref_lse);
      double e;
      if (which) {
        if ((e = out_err(&w, b, o_full, ref)) > e_full) e_full = e;
        break;
      }
      if ((e = out_err(&w, b, o_dec, ref)) > e_dec) e_dec = e;
      if ((e = out_err(&w, b, o_run, ref)) > e_run) e_run = e;
      if ((same || !typed) && (e = out_err(&w, b, o_full, ref)) > e_full) e_full = e;
      for (int h = 0; h < w.H; h++)
        for (int i = 0; i < L; i++) {
          const double want = ref_lse[(size_t)h * L + i], got = l_dec[((size_t)b * w.H + h) * w.Lmax + i];
          const double x = fabs(got - want) / (fabs(want) > 1.0 ? fabs(want) : 1.0);
          if (!(x <= e_lse)) e_lse = x;
        }
    }
    double e;
    if ((e = out_diff(&w, b, o_dec, o_run)) > e_rd) e_rd = e;
    if ((e = out_diff(&w, b, o_dec, o_full)) > e_df) e_df = e;
    /* both caches: rotated K (the float64 rotation of the raw rows; other types: within half a quantum of it), V as
     * the conversion of the raw rows (bit for bit), nothing past L */
    if (!fail) fail = check_cache(&w, &w.c, c, rope, b, &e_k, "the steps'", r);
    if (!fail && !same) fail = check_cache(&w, &full, c, rope, b, &e_k, "the full prefill's", r);
  }
  r->checked = 1;
  r->max_err = e_dec > e_full ? e_dec : e_full;
  if (e_run > r->max_err) r->max_err = e_run;
  if (e_rd > r->max_err) r->max_err = e_rd;
  if ((same || !typed) && e_df > r->max_err) r->max_err = e_df;
  r->max_lse_err = e_lse;
  if (!fail && !(e_dec <= tol))
    fail = case_failf(r, "step-by-step outputs vs float64: %.3g > %.3g", e_dec, tol);
  if (!fail && !(e_full <= tol))
    fail = case_failf(r, "full causal prefill (one step) vs float64 on its cache: %.3g > %.3g", e_full, tol);
  if (!fail && !(e_run <= tol))
    fail = case_failf(r, "causal prefill (attngen_run) over the steps' cache vs float64: %.3g > %.3g", e_run, tol);
  if (!fail && !(e_rd <= tol))
    fail = case_failf(r, "step-by-step outputs vs the causal prefill over the same cache: %.3g > %.3g", e_rd, tol);
  /* vs the full prefill's own outputs: fp32 always (a flipped rounding of a K element moves a score by ~1e-7); other
   * types when it wrote the same cache */
  if (!fail && (same || !typed) && !(e_df <= tol))
    fail = case_failf(r, "step-by-step outputs vs the full causal prefill: %.3g > %.3g", e_df, tol);
  if (!fail && !(e_lse <= tol)) fail = case_failf(r, "step-by-step lse vs float64: %.3g > %.3g", e_lse, tol);
  /* |k| <= 1: the rotation's fp32 bound, times the cos/sin factor (see check_rows) */
  const double k_bound = 8.0 * 0x1p-24 * (rope ? ref_rope_cs_scale(rope) : 1.0);
  if (!fail && !typed && !(e_k <= k_bound))
    fail = case_failf(r, "cached K vs the float64 rotation of the raw rows: %.3g > %.3g", e_k, k_bound);
done:
  free(o_dec), free(o_full), free(o_run), free(l_run), free(l_dec), free(l_full), free(ref), free(ref_lse);
  free(kd), free(vd);
  kvt_free(&full);
  world_free(&w);
  return fail;
}

/* ------------------------------------------------------------------------------------------------ */
/* CK_APPEND */

typedef struct {
  int H, KVH, D, B, cap, nmax;
  float *kc, *vc, *kn, *vn, *q, *o, *lse;          /* caches [B][cap][KVH][D]; new rows [B][nmax][...] */
  float *kc0, *vc0, *o0, *lse0;                     /* snapshots */
  size_t nkc, nkn, nq, nl;
  case_result *r;
  int fail;
} app;

/* A refused call: its status, a message, and not one bit of the caches, o or lse changed. */
static void expect(app *x, const char *what, int st, int want) {
  if (x->fail) return;
  if (st != want) {
    x->fail = case_failf(x->r, "%s: returned %s (%d), expected %s", what, attngen_status_name(st), st,
                    attngen_status_name(want));
    return;
  }
  const char *m = attngen_last_error();
  if (!m || !m[0]) x->fail = case_failf(x->r, "%s: %s without a message", what, attngen_status_name(st));
  else if (memcmp(x->kc, x->kc0, x->nkc * sizeof(float)) || memcmp(x->vc, x->vc0, x->nkc * sizeof(float)))
    x->fail = case_failf(x->r, "%s: returned %s but changed the cache", what, attngen_status_name(st));
  else if (memcmp(x->o, x->o0, x->nq * sizeof(float)) || memcmp(x->lse, x->lse0, x->nl * sizeof(float)))
    x->fail = case_failf(x->r, "%s: returned %s but wrote o or lse", what, attngen_status_name(st));
}

/* After a successful append of n rows per sequence at len[b] (positions pos or len[b] + i): K rows = the new
 * rows rotated in float64, within 8 u m max(|x0|, |x1|) per element (u = 2^-24: c and s are rounded to float (u each),
 * two products and a difference (u each), |c|,|s| <= m, the cos/sin factor (YaRN's attention factor, else 1): every
 * term scales with m, so < 5 u m (|x0| + |x1|) / 2 + ...), V rows bit-exact, every other float of the caches
 * untouched. Returns the largest error seen. */
static double check_rows(app *x, const attngen_rope *rope, int nb, const int32_t *len, const int32_t *pos, int n) {
  double inv[ATTNGEN_MAX_HEAD_DIM / 2], y[ATTNGEN_MAX_HEAD_DIM], worst = 0.0;
  const size_t row = (size_t)x->KVH * x->D;
  const double cs_m = rope ? ref_rope_cs_scale(rope) : 1.0;
  if (rope) ref_rope_inv_freq(rope, inv);
  for (int b = 0; b < x->B && !x->fail; b++)
    for (int t = 0; t < x->cap && !x->fail; t++) {
      const float *kc = x->kc + ((size_t)b * x->cap + t) * row, *vc = x->vc + ((size_t)b * x->cap + t) * row;
      const float *kc0 = x->kc0 + ((size_t)b * x->cap + t) * row, *vc0 = x->vc0 + ((size_t)b * x->cap + t) * row;
      const int i = b < nb ? t - len[b] : -1; /* sequences past the call's batch: untouched */
      if (i < 0 || i >= n) {
        if (memcmp(kc, kc0, row * sizeof(float)) || memcmp(vc, vc0, row * sizeof(float)))
          x->fail = case_failf(x->r, "append wrote row %d of sequence %d (batch %d, n_new %d)", t, b, nb, n);
        continue;
      }
      const float *kn = x->kn + ((size_t)b * x->nmax + i) * row, *vn = x->vn + ((size_t)b * x->nmax + i) * row;
      if (memcmp(vc, vn, row * sizeof(float)))
        x->fail = case_failf(x->r, "V row %d of sequence %d is not the appended row", t, b);
      for (int h = 0; h < x->KVH && !x->fail; h++) {
        const float *xr = kn + (size_t)h * x->D;
        const long long p = pos ? pos[(size_t)b * n + i] : (long long)len[b] + i;
        if (rope) ref_rope_rotate(rope, inv, p, xr, x->D, y);
        else
          for (int e = 0; e < x->D; e++) y[e] = xr[e];
        for (int e = 0; e < x->D; e++) {
          /* the pair partner of e (itself past rotary_dim) */
          int f = e;
          if (rope && e < rope->rotary_dim)
            f = rope->style == ATTNGEN_ROPE_INTERLEAVED ? (e ^ 1) : (e < rope->rotary_dim / 2 ? e + rope->rotary_dim / 2
                                                                                             : e - rope->rotary_dim / 2);
          const double m = cs_m * (fabs(xr[e]) > fabs(xr[f]) ? fabs(xr[e]) : fabs(xr[f]));
          const double err = fabs((double)kc[(size_t)h * x->D + e] - y[e]);
          if (!(err <= 8.0 * 0x1p-24 * m))
            x->fail = case_failf(x->r, "K row %d head %d of sequence %d (position %lld), dim %d: %.9g, float64 says %.9g",
                            t, h, b, p, e, (double)kc[(size_t)h * x->D + e], y[e]);
          if (err > worst) worst = err;
        }
      }
    }
  return worst;
}

/* The reference's YaRN against numbers printed by transformers' _compute_yarn_parameters with torch replaced by
 * float64 math (the code is otherwise HF's): gpt-oss's rope (theta 150000, factor 32, original 4096, beta 32 / 1,
 * truncate false; attention factor 0.1 ln 32 + 1) at head_dim 64, and a truncated ramp with mscale / mscale_all_dim.
 * Hand checks: pair 0 is kept (1), pair 31 divided by 32 (150000^(-62/64) / 32 = 3.0235e-7), pair 8 lies below the
 * ramp's start 8.09 (150000^(-1/4) = 0.0508). Relative 1e-14: log, pow and the ramp in another order. */
int rope_known_values(case_result *r) {
  static const struct {
    double theta, factor, orig, beta_fast, beta_slow, truncate, mscale, mscale_all_dim, cs_scale;
    int rotary_dim, pair[4];
    double inv[4];
  } known[2] = {
    {150000, 32, 4096, 32, 1, 0, 0, 0, 1.3465735902799727, 64, {0, 9, 12, 31},
     {1, 0.031705696184663769, 0.0067949594897322189, 3.0235114281192144e-07}},
    {1000000, 8, 2048, 16, 2, 1, 0.707, 1.0, 0.9495608824621653, 32, {5, 8, 9, 15},
     {0.0055563393006805174, 0.000125, 5.2712062928572786e-05, 2.964217132077069e-07}},
  };
  for (int i = 0; i < 2; i++) {
    attngen_rope y;
    double inv[ATTNGEN_MAX_HEAD_DIM / 2];
    memset(&y, 0, sizeof y);
    y.style = ATTNGEN_ROPE_HALF, y.rotary_dim = known[i].rotary_dim, y.theta = known[i].theta;
    y.scaling = ATTNGEN_ROPE_SCALING_YARN, y.factor = known[i].factor;
    y.original_max_position_embeddings = known[i].orig, y.beta_fast = known[i].beta_fast;
    y.beta_slow = known[i].beta_slow, y.truncate = known[i].truncate;
    y.mscale = known[i].mscale, y.mscale_all_dim = known[i].mscale_all_dim;
    ref_rope_inv_freq(&y, inv);
    const double m = ref_rope_cs_scale(&y);
    if (!(fabs(m - known[i].cs_scale) <= 1e-14 * known[i].cs_scale))
      return case_failf(r, "reference YaRN attention factor %.17g, transformers' %.17g", m, known[i].cs_scale);
    for (int j = 0; j < 4; j++) {
      const double want = known[i].inv[j], got = inv[known[i].pair[j]];
      if (!(fabs(got - want) <= 1e-14 * want))
        return case_failf(r, "reference YaRN inv_freq[%d] = %.17g, transformers' %.17g", known[i].pair[j], got, want);
    }
  }
  return 0;
}

static void snapshot(app *x) {
  memcpy(x->kc0, x->kc, x->nkc * sizeof(float));
  memcpy(x->vc0, x->vc, x->nkc * sizeof(float));
}

int rope_run_append(const test_case *c, case_result *r) {
  memset(r, 0, sizeof *r);
  r->tol = CASE_TOL;
  attngen_kernel k;
  if (kernel_for(c, c->shape.mask, c->shape.phase, &k, r)) return 1;
  const attngen_rope *rope = rope_of(c->table, &c->shape);
  app x;
  memset(&x, 0, sizeof x);
  x.r = r;
  x.H = c->shape.heads, x.KVH = c->shape.kv_heads, x.D = c->shape.head_dim;
  x.B = 8, x.cap = 12, x.nmax = 9;
  const size_t krow = (size_t)x.KVH * x.D, qrow = (size_t)x.H * x.D;
  x.nkc = (size_t)x.B * x.cap * krow, x.nkn = (size_t)x.B * x.nmax * krow;
  x.nq = (size_t)x.B * x.nmax * qrow, x.nl = (size_t)x.B * x.H * x.nmax;
  x.kc = malloc(x.nkc * sizeof(float)), x.vc = malloc(x.nkc * sizeof(float));
  x.kc0 = malloc(x.nkc * sizeof(float)), x.vc0 = malloc(x.nkc * sizeof(float));
  x.kn = malloc(x.nkn * sizeof(float)), x.vn = malloc(x.nkn * sizeof(float));
  x.q = malloc(x.nq * sizeof(float)), x.o = malloc(x.nq * sizeof(float)), x.o0 = malloc(x.nq * sizeof(float));
  x.lse = malloc(x.nl * sizeof(float)), x.lse0 = malloc(x.nl * sizeof(float));
  if (!x.kc || !x.vc || !x.kc0 || !x.vc0 || !x.kn || !x.vn || !x.q || !x.o || !x.o0 || !x.lse || !x.lse0) {
    x.fail = case_failf(r, "out of memory");
    goto done;
  }
  uint64_t seed = 0xA99E4Dull ^ ((uint64_t)c->seed << 13);
  for (size_t i = 0; i < x.nkn; i++) x.kn[i] = unit(&seed), x.vn[i] = unit(&seed);
  for (size_t i = 0; i < x.nq; i++) x.q[i] = unit(&seed);
  for (size_t i = 0; i < x.nkc; i++) x.kc[i] = x.vc[i] = unit(&seed) * 1e3f; /* not what any append writes */
  fill_nan(x.o, x.nq), fill_nan(x.lse, x.nl);
  memcpy(x.o0, x.o, x.nq * sizeof(float)), memcpy(x.lse0, x.lse, x.nl * sizeof(float));
  snapshot(&x);

  /* 1. the table's inverse frequencies vs an independent float64 recomputation from theta and the scaling */
  if (rope) {
    double inv[ATTNGEN_MAX_HEAD_DIM / 2];
    ref_rope_inv_freq(rope, inv);
    for (int p = 0; p < rope->rotary_dim / 2 && !x.fail; p++)
      if (!(fabs(rope->inv_freq[p] - inv[p]) <= 1e-13 * inv[p]))
        x.fail = case_failf(r, "table inv_freq[%d] = %.17g, float64 recomputation %.17g", p, rope->inv_freq[p], inv[p]);
    const double m = ref_rope_cs_scale(rope);
    if (!x.fail && !(fabs(rope->cs_scale - m) <= 1e-15 * m))
      x.fail = case_failf(r, "table cs_scale = %.17g, float64 recomputation %.17g", rope->cs_scale, m);
    if (!x.fail && rope_known_values(r)) x.fail = 1;
  }

  /* 2. single tokens at positions up to 2^31 - 1, one per sequence */
  double worst = 0.0;
  {
    static const int32_t lens[8] = {0, 1, 5, 11, 3, 7, 2, 10};
    static const int32_t pos[8] = {0, 1, 7, 1000, 65536, (1 << 20) - 1, 1 << 20, 2147483647};
    attngen_append_args a;
    memset(&a, 0, sizeof a);
    a.batch = 8, a.n_new = 1, a.kv_capacity = x.cap, a.cache_len = lens, a.pos = pos;
    a.k_new = x.kn, a.v_new = x.vn, a.k_cache = x.kc, a.v_cache = x.vc;
    a.k_new_stride.batch = (ptrdiff_t)(x.nmax * krow), a.v_new_stride.batch = (ptrdiff_t)(x.nmax * krow);
    int st = x.fail ? ATTNGEN_OK : attngen_kv_append(&k, &a);
    if (st != ATTNGEN_OK) x.fail = case_failf(r, "attngen_kv_append(positions to 2^31 - 1): %s (%s)", attngen_status_name(st),
                                         attngen_last_error());
    if (!x.fail) {
      /* check_rows reads new row i of sequence b at kn + (b * nmax + i) * row: the strides above */
      double e = check_rows(&x, rope, 8, lens, pos, 1);
      if (e > worst) worst = e;
    }
    snapshot(&x);
  }

  /* 3. refused calls: nothing changes */
  const int32_t len3[3] = {3, 10, 0};
  attngen_append_args base;
  memset(&base, 0, sizeof base);
  base.batch = 3, base.n_new = 2, base.kv_capacity = x.cap, base.cache_len = len3;
  base.k_new = x.kn, base.v_new = x.vn, base.k_cache = x.kc, base.v_cache = x.vc;
  base.k_new_stride.batch = (ptrdiff_t)(x.nmax * krow), base.v_new_stride.batch = (ptrdiff_t)(x.nmax * krow);
  attngen_append_args a;
  int32_t bad[3];
#define APPEND_WITH(what, mutation, want)                                                                            \
  do {                                                                                                               \
    a = base;                                                                                                        \
    memcpy(bad, len3, sizeof bad);                                                                                   \
    mutation;                                                                                                        \
    expect(&x, "attngen_kv_append(" what ")", attngen_kv_append(&k, &a), want);                                      \
  } while (0)
  expect(&x, "attngen_kv_append(NULL kernel)", attngen_kv_append(NULL, &base), ATTNGEN_ERR_NULL);
  expect(&x, "attngen_kv_append(NULL args)", attngen_kv_append(&k, NULL), ATTNGEN_ERR_NULL);
  APPEND_WITH("k_new = NULL", a.k_new = NULL, ATTNGEN_ERR_NULL);
  APPEND_WITH("v_new = NULL", a.v_new = NULL, ATTNGEN_ERR_NULL);
  APPEND_WITH("k_cache = NULL", a.k_cache = NULL, ATTNGEN_ERR_NULL);
  APPEND_WITH("v_cache = NULL", a.v_cache = NULL, ATTNGEN_ERR_NULL);
  APPEND_WITH("cache_len = NULL", a.cache_len = NULL, ATTNGEN_ERR_NULL);
  APPEND_WITH("batch = 0", a.batch = 0, ATTNGEN_ERR_SIZE);
  APPEND_WITH("n_new = 0", a.n_new = 0, ATTNGEN_ERR_SIZE);
  APPEND_WITH("kv_capacity = 0", a.kv_capacity = 0, ATTNGEN_ERR_SIZE);
  APPEND_WITH("kv_capacity = -1", a.kv_capacity = -1, ATTNGEN_ERR_SIZE);
  APPEND_WITH("cache_len[2] = -1", (bad[2] = -1, a.cache_len = bad), ATTNGEN_ERR_LENGTHS);
  APPEND_WITH("cache_len[0] = kv_capacity + 1", (bad[0] = x.cap + 1, a.cache_len = bad), ATTNGEN_ERR_LENGTHS);
  /* sequence 1 cannot take 2 more rows: sequences 0 and 2, which could, are not appended either */
  APPEND_WITH("cache_len[1] + n_new > kv_capacity", (bad[1] = x.cap - 1, a.cache_len = bad), ATTNGEN_ERR_CAPACITY);
  APPEND_WITH("n_new = 3 (sequence 1 overflows)", a.n_new = 3, ATTNGEN_ERR_CAPACITY);
  APPEND_WITH("k_new_stride.seq < 0", a.k_new_stride.seq = -1, ATTNGEN_ERR_STRIDE);
  APPEND_WITH("v_cache_stride.batch < 0", a.v_cache_stride.batch = -(ptrdiff_t)krow, ATTNGEN_ERR_STRIDE);
  APPEND_WITH("k_cache_stride.seq = 1 (cache rows overlap)", a.k_cache_stride.seq = 1, ATTNGEN_ERR_STRIDE);
  if (x.KVH > 1)
    APPEND_WITH("k_cache_stride.head = head_dim - 1 (cache heads overlap)", a.k_cache_stride.head = x.D - 1,
                ATTNGEN_ERR_STRIDE);
  APPEND_WITH("v_cache = k_cache", a.v_cache = x.kc, ATTNGEN_ERR_ALIAS);
  APPEND_WITH("k_new inside k_cache", a.k_new = x.kc + krow, ATTNGEN_ERR_ALIAS);
  APPEND_WITH("v_new starts in v_cache's last row", a.v_new = x.vc + (size_t)3 * x.cap * krow - krow, ATTNGEN_ERR_ALIAS);
#undef APPEND_WITH

  /* the step refuses the same, and what its attention refuses, before it writes the cache */
  {
    attngen_step_args s0, s;
    memset(&s0, 0, sizeof s0);
    s0.kv = base;
    s0.q = x.q, s0.o = x.o, s0.lse = x.lse;
    static const float zero_sinks[ATTNGEN_MAX_HEADS]; /* sink logits of 0: a kernel with SINKS needs some */
    if (k.shape.features & ATTNGEN_ATTN_SINKS) s0.sinks = zero_sinks;
#define STEP_WITH(kern, what, mutation, want)                                                                        \
  do {                                                                                                               \
    s = s0;                                                                                                          \
    memcpy(bad, len3, sizeof bad);                                                                                   \
    mutation;                                                                                                        \
    expect(&x, "attngen_step(" what ")", attngen_step(kern, &s), want);                                              \
  } while (0)
    expect(&x, "attngen_step(NULL args)", attngen_step(&k, NULL), ATTNGEN_ERR_NULL);
    STEP_WITH(&k, "cache_len[1] + n_new > kv_capacity", (bad[1] = x.cap - 1, s.kv.cache_len = bad),
              ATTNGEN_ERR_CAPACITY);
    STEP_WITH(&k, "q = NULL", s.q = NULL, ATTNGEN_ERR_NULL);
    STEP_WITH(&k, "o = NULL", s.o = NULL, ATTNGEN_ERR_NULL);
    STEP_WITH(&k, "q inside v_cache", s.q = x.vc, ATTNGEN_ERR_ALIAS);
    STEP_WITH(&k, "o inside k_cache", s.o = x.kc, ATTNGEN_ERR_ALIAS);
    STEP_WITH(&k, "lse inside q", s.lse = x.q, ATTNGEN_ERR_ALIAS);
    STEP_WITH(&k, "o_stride.seq < 0", s.o_stride.seq = -1, ATTNGEN_ERR_STRIDE);
    if (c->shape.phase == ATTNGEN_PHASE_DECODE) {
      const int32_t zero[3] = {0, 0, 0};
      STEP_WITH(&k, "decode kernel, n_new = 9", (s.kv.n_new = 9, s.kv.cache_len = zero), ATTNGEN_ERR_SHAPE);
    }
    /* a kernel without the causal feature cannot make 2 new tokens causal (the table's params, as a fallback) */
    attngen_kernel kp;
    attngen_shape sp = c->shape;
    sp.mask = ATTNGEN_MASK_PADDING;
    if (attngen_select_generic(&sp, ATTNGEN_ISA_SCALAR, &kp) == ATTNGEN_OK) {
      kp.params = k.params;
      STEP_WITH(&kp, "padding kernel, n_new = 2", (void)0, ATTNGEN_ERR_SHAPE);
    }
#undef STEP_WITH
  }

  /* 4. a valid append of 2 rows at ragged lengths (natural positions); then the step on top of it */
  if (!x.fail) {
    int st = attngen_kv_append(&k, &base);
    if (st != ATTNGEN_OK) x.fail = case_failf(r, "attngen_kv_append: %s (%s)", attngen_status_name(st), attngen_last_error());
    else {
      double e = check_rows(&x, rope, 3, len3, NULL, 2);
      if (e > worst) worst = e;
    }
  }
  r->checked = !x.fail;
  r->max_err = worst;
done:
  free(x.kc), free(x.vc), free(x.kc0), free(x.vc0), free(x.kn), free(x.vn);
  free(x.q), free(x.o), free(x.o0), free(x.lse), free(x.lse0);
  return x.fail;
}

/* SPDX-License-Identifier: MIT */
/* Paged K/V caches (attngen_pages), checked against the contiguous cache that holds the same rows.
 *
 * Every CK_PAGED case runs a paged kernel and the contiguous kernel of the same table, ISA, storage type and mask on
 * the same calls: the contiguous cache is [batch][capacity][kv_heads][head_dim] (or head-major), the paged one pools
 * of pages in a random order (block tables name them shuffled), written by the same attngen_kv_append / attngen_step
 * calls. Outputs and lse must be the same bits (the same thread count): a paged decode kernel reads each key's row
 * from its page, cuts its tiles as the contiguous kernel does and runs P·V page run by page run with one rescale,
 * and a paged prefill reads the repack's gathered copy. Where a case also checks float64, it is at CASE_TOL
 * (cases.c: 1e-5 relative to max(1, max|ref|)) on the values the cache stores (dequantized as the kernels read
 * them), the same bound as every other kernel: pages change where rows are read, not the arithmetic. */
#include "paged_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_types.h"
#include "reference.h"

const char *paged_case_name(int variant) {
  static const char *names[PAGED_COUNT_] = {"step", "run-1100", "shared-prompt", "ring", "errors"};
  return variant >= 0 && variant < PAGED_COUNT_ ? names[variant] : "?";
}

static float unit(uint64_t *s) { /* splitmix64 -> [-1, 1), 24 significant bits */
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (float)((int32_t)((uint32_t)((z ^ (z >> 31)) >> 32) >> 8) - (1 << 23)) / (float)(1 << 23);
}
static float *randoms(size_t n, uint64_t *s) {
  float *p = (float *)malloc((n ? n : 1) * sizeof(float));
  for (size_t i = 0; p && i < n; i++) p[i] = unit(s);
  return p;
}

/* Both caches and what describes them. */
typedef struct {
  const test_case *c;
  int B, kvh, d, H, cap, ps, max_pages, num_pages, groups;
  kvt_cache cc, pc;                   /* contiguous [B][cap] rows; paged pools of num_pages pages */
  attngen_strides cst, csst, pst, psst; /* element and scale strides of each */
  int32_t *bt;                        /* [B][max_pages] */
  int window, sink_tokens;            /* ring cases: passed to every call */
} world;

/* token-major or head-major rows of width w (elements or scales) */
static attngen_strides layout(int hnd, int rows, int kvh, int w) {
  attngen_strides s;
  if (hnd) s.seq = w, s.head = (ptrdiff_t)rows * w, s.batch = (ptrdiff_t)kvh * rows * w;
  else s.head = w, s.seq = (ptrdiff_t)kvh * w, s.batch = (ptrdiff_t)rows * kvh * w;
  return s;
}

static void world_free(world *w) {
  kvt_free(&w->cc);
  kvt_free(&w->pc);
  free(w->bt);
  w->bt = NULL;
}

/* B sequences of cap rows; pages: enough for every row of every sequence plus `extra`, handed out shuffled. */
static int world_init(world *w, const test_case *c, int B, int cap, int extra, uint64_t *seed, case_result *r) {
  memset(w, 0, sizeof *w);
  w->c = c;
  w->B = B, w->cap = cap, w->kvh = c->shape.kv_heads, w->d = c->shape.head_dim, w->H = c->shape.heads;
  w->ps = c->shape.page_size;
  w->max_pages = (cap + w->ps - 1) / w->ps;
  w->num_pages = B * w->max_pages + extra;
  const int g = kvt_group(c->shape.kv_dtype, w->d);
  w->groups = g ? w->d / g : 0;
  const int hnd = c->layout == LAYOUT_HEAD_MAJOR;
  w->cst = layout(hnd, cap, w->kvh, w->d), w->pst = layout(hnd, w->ps, w->kvh, w->d);
  if (w->groups) w->csst = layout(hnd, cap, w->kvh, w->groups), w->psst = layout(hnd, w->ps, w->kvh, w->groups);
  const size_t nc = (size_t)B * cap * w->kvh, np = (size_t)w->num_pages * w->ps * w->kvh;
  w->bt = (int32_t *)malloc((size_t)B * w->max_pages * sizeof(int32_t));
  int32_t *perm = (int32_t *)malloc((size_t)w->num_pages * sizeof(int32_t));
  if (!w->bt || !perm || kvt_alloc(&w->cc, c->shape.kv_dtype, w->d, nc * w->d, nc * w->d, nc * w->groups, nc * w->groups) ||
      kvt_alloc(&w->pc, c->shape.kv_dtype, w->d, np * w->d, np * w->d, np * w->groups, np * w->groups)) {
    free(perm);
    world_free(w);
    return case_failf(r, "out of memory");
  }
  for (int i = 0; i < w->num_pages; i++) perm[i] = i;
  for (int i = w->num_pages - 1; i > 0; i--) { /* Fisher-Yates */
    const int j = (int)((unit(seed) + 1.0f) * 0.5f * (float)(i + 1)) % (i + 1);
    const int32_t t = perm[i];
    perm[i] = perm[j], perm[j] = t;
  }
  for (int i = 0; i < B * w->max_pages; i++) w->bt[i] = perm[i];
  free(perm);
  return 0;
}

static attngen_pages world_pages(const world *w) {
  attngen_pages p = {w->bt, w->max_pages, w->num_pages, w->ps};
  return p;
}

static void set_append(world *w, int paged, attngen_append_args *a) {
  kvt_set_append(a, paged ? &w->pc : &w->cc, 0, 0, 0, 0);
  a->k_cache_stride = a->v_cache_stride = paged ? w->pst : w->cst;
  a->k_cache_scale_stride = a->v_cache_scale_stride = paged ? w->psst : w->csst;
  a->kv_capacity = paged ? 0 : w->cap;
  if (paged) a->pages = world_pages(w);
}

static void set_args(const world *w, int paged, attngen_args *a) {
  kvt_set_args(a, paged ? &w->pc : &w->cc, 0, 0, 0, 0);
  a->k_stride = a->v_stride = paged ? w->pst : w->cst;
  a->k_scale_stride = a->v_scale_stride = paged ? w->psst : w->csst;
  a->kv_capacity = paged ? 0 : w->cap;
  if (paged) a->pages = world_pages(w);
  a->window = w->window, a->sink_tokens = w->sink_tokens;
}

static int kernel_of(const test_case *c, attngen_mask mask, attngen_phase phase, int page_size, attngen_kernel *k,
                     case_result *r) {
  attngen_shape sh = c->shape;
  sh.mask = mask, sh.phase = phase, sh.page_size = page_size;
  const int st = attngen_select_specialized(c->table, &sh, c->isa, k);
  return st ? case_failf(r, "no %s %s kernel, page_size %d: %s (%s)", attngen_mask_name(mask), attngen_phase_name(phase),
                         page_size, attngen_status_name(st), attngen_last_error())
            : 0;
}

/* Appends the same rows to both caches (len[b] rows already there, n new ones per sequence). */
static int append_both(world *w, const attngen_kernel *kc, const attngen_kernel *kp, const int32_t *len, int n,
                       const float *kn, const float *vn, case_result *r) {
  for (int paged = 0; paged < 2; paged++) {
    attngen_append_args a;
    memset(&a, 0, sizeof a);
    set_append(w, paged, &a);
    a.batch = w->B, a.n_new = n, a.cache_len = len, a.k_new = kn, a.v_new = vn;
    const int st = attngen_kv_append(paged ? kp : kc, &a);
    if (st) return case_failf(r, "append (%s): %s (%s)", paged ? "paged" : "contiguous", attngen_status_name(st),
                              attngen_last_error());
  }
  return 0;
}

/* The float64 reference of one query per sequence at position len[b] (it sees keys 0..len[b], the window's), on the
 * contiguous cache's stored values, against o [B][H][d]. */
static int check_reference(const world *w, const float *q, const int32_t *len, const float *o, const char *what,
                           case_result *r) {
  int lmax = 0;
  for (int b = 0; b < w->B; b++) lmax = len[b] + 1 > lmax ? len[b] + 1 : lmax;
  const size_t rows = (size_t)w->B * lmax * w->kvh;
  float *kf = (float *)malloc(rows * w->d * sizeof(float)), *vf = (float *)malloc(rows * w->d * sizeof(float));
  double *ref = (double *)malloc((size_t)w->B * w->H * w->d * sizeof(double));
  int32_t *kvl = (int32_t *)malloc((size_t)w->B * sizeof(int32_t)), *pos = (int32_t *)malloc((size_t)w->B * sizeof(int32_t));
  int fail = 0;
  if (!kf || !vf || !ref || !kvl || !pos) fail = case_failf(r, "out of memory");
  for (int b = 0; !fail && b < w->B; b++) {
    kvl[b] = len[b] + 1, pos[b] = len[b];
    for (int j = 0; j < lmax; j++)
      for (int h = 0; h < w->kvh; h++) {
        const size_t e = (size_t)(b * w->cst.batch + j * w->cst.seq + h * w->cst.head);
        const size_t s = w->groups ? (size_t)(b * w->csst.batch + j * w->csst.seq + h * w->csst.head) : 0;
        float *kd = kf + (((size_t)b * lmax + j) * w->kvh + h) * w->d, *vd = vf + (((size_t)b * lmax + j) * w->kvh + h) * w->d;
        for (int x = 0; x < w->d; x++) {
          kd[x] = j < kvl[b] ? kvt_value(&w->cc, 0, e + x, s, x) : 0.0f;
          vd[x] = j < kvl[b] ? kvt_value(&w->cc, 1, e + x, s, x) : 0.0f;
        }
      }
  }
  if (!fail) {
    attngen_shape sh = w->c->shape;
    sh.mask = ATTNGEN_MASK_CAUSAL_PADDING, sh.phase = ATTNGEN_PHASE_DECODE, sh.page_size = 0, sh.kv_dtype = ATTNGEN_KV_F32;
    attngen_args a;
    memset(&a, 0, sizeof a);
    a.batch = w->B, a.q_len = 1, a.kv_len = lmax, a.q = q, a.k = kf, a.v = vf, a.kv_lens = kvl, a.q_pos = pos;
    a.window = w->window, a.sink_tokens = w->sink_tokens;
    ref_attention_rope(&sh, &a, &w->c->table->params.rope, NULL, ref, NULL);
    double err = 0.0, big = 1.0;
    for (size_t i = 0; i < (size_t)w->B * w->H * w->d; i++) {
      const double e = fabs((double)o[i] - ref[i]);
      err = e > err || e != e ? e : err;
      big = fabs(ref[i]) > big ? fabs(ref[i]) : big;
    }
    if (!(err <= CASE_TOL * big)) fail = case_failf(r, "%s: error %.3g against float64 exceeds %.0e x %.3g", what, err, CASE_TOL, big);
    r->max_err = err / big > r->max_err ? err / big : r->max_err;
    r->tol = CASE_TOL;
    r->checked = 1;
  }
  free(kf), free(vf), free(ref), free(kvl), free(pos);
  return fail;
}

/* One attngen_step_parallel of n new tokens per sequence on both caches (nt threads): the same outputs and lse, bit
 * for bit. q, o: [B][n][H][d]; o receives the paged step's output. */
static int step_both(world *w, attngen_phase phase, const int32_t *len, int n, int nt, uint64_t *seed, float *q_out,
                     float *o, case_result *r) {
  attngen_kernel kc, kp;
  const attngen_mask mask = ATTNGEN_MASK_CAUSAL;
  if (kernel_of(w->c, mask, phase, 0, &kc, r) || kernel_of(w->c, mask, phase, w->ps, &kp, r)) return 1;
  const size_t nq = (size_t)w->B * n * w->H * w->d, nkv = (size_t)w->B * n * w->kvh * w->d;
  float *q = randoms(nq, seed), *kn = randoms(nkv, seed), *vn = randoms(nkv, seed);
  float *oc = (float *)malloc(nq * sizeof(float)), *op = (float *)malloc(nq * sizeof(float));
  float *lc = (float *)malloc((size_t)w->B * w->H * n * sizeof(float)), *lp = (float *)malloc((size_t)w->B * w->H * n * sizeof(float));
  int fail = 0;
  if (!q || !kn || !vn || !oc || !op || !lc || !lp) fail = case_failf(r, "out of memory");
  for (int paged = 0; !fail && paged < 2; paged++) {
    attngen_step_args s;
    memset(&s, 0, sizeof s);
    set_append(w, paged, &s.kv);
    s.kv.batch = w->B, s.kv.n_new = n, s.kv.cache_len = len, s.kv.k_new = kn, s.kv.v_new = vn;
    s.q = q, s.o = paged ? op : oc, s.lse = paged ? lp : lc;
    s.window = w->window, s.sink_tokens = w->sink_tokens;
    const int st = attngen_step_parallel(paged ? &kp : &kc, &s, nt);
    if (st) fail = case_failf(r, "step of %d at %d (%s, %s): %s (%s)", n, (int)len[0], paged ? kp.info->name : kc.info->name,
                              attngen_phase_name(phase), attngen_status_name(st), attngen_last_error());
  }
  if (!fail && (memcmp(oc, op, nq * sizeof(float)) || memcmp(lc, lp, (size_t)w->B * w->H * n * sizeof(float))))
    fail = case_failf(r, "step of %d at %d: %s differs from %s (outputs or lse not bit-identical)", n, (int)len[0],
                      kp.info->name, kc.info->name);
  if (!fail && o) memcpy(o, op, nq * sizeof(float));
  if (!fail && q_out) memcpy(q_out, q, nq * sizeof(float));
  free(q), free(kn), free(vn), free(oc), free(op), free(lc), free(lp);
  return fail;
}

/* attngen_run_parallel on both caches: the same bits; the paged output in o. */
static int run_both(const world *w, attngen_mask mask, attngen_phase phase, attngen_args *a, int nt, float *o,
                    case_result *r) {
  attngen_kernel kc, kp;
  if (kernel_of(w->c, mask, phase, 0, &kc, r) || kernel_of(w->c, mask, phase, w->ps, &kp, r)) return 1;
  const size_t no = (size_t)a->batch * a->q_len * w->H * w->d;
  float *oc = (float *)malloc(no * sizeof(float));
  int fail = 0;
  if (!oc) return case_failf(r, "out of memory");
  for (int paged = 0; !fail && paged < 2; paged++) {
    attngen_args x = *a;
    set_args(w, paged, &x);
    x.o = paged ? o : oc;
    const int st = attngen_run_parallel(paged ? &kp : &kc, &x, nt);
    if (st) fail = case_failf(r, "run (%s): %s (%s)", paged ? kp.info->name : kc.info->name, attngen_status_name(st), attngen_last_error());
  }
  if (!fail && memcmp(oc, o, no * sizeof(float)))
    fail = case_failf(r, "%s differs from %s (q_len %d, kv_len %d, %d threads)", kp.info->name, kc.info->name, a->q_len,
                      a->kv_len, nt);
  free(oc);
  return fail;
}

static int scenario_step(const test_case *c, case_result *r) {
  uint64_t seed = c->seed;
  world w;
  if (world_init(&w, c, 3, 64, 3, &seed, r)) return 1;
  const int nt = c->batch > 0 ? c->batch : 1;
  int32_t len[3] = {0, 0, 0};
  float *q = (float *)malloc((size_t)3 * 20 * w.H * w.d * sizeof(float)), *o = (float *)malloc((size_t)3 * 20 * w.H * w.d * sizeof(float));
  int fail = !q || !o ? case_failf(r, "out of memory") : 0;
  if (!fail) { /* 9 rows in each, then ragged lengths over them */
    attngen_kernel kc, kp;
    float *kn = randoms((size_t)3 * 9 * w.kvh * w.d, &seed), *vn = randoms((size_t)3 * 9 * w.kvh * w.d, &seed);
    fail = !kn || !vn ? case_failf(r, "out of memory")
                      : kernel_of(c, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_DECODE, 0, &kc, r) ||
                            kernel_of(c, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_DECODE, w.ps, &kp, r) ||
                            append_both(&w, &kc, &kp, len, 9, kn, vn, r);
    free(kn), free(vn);
    len[1] = 5, len[2] = 9;
  }
  static const int steps[][2] = {{ATTNGEN_PHASE_PREFILL, 13}, {ATTNGEN_PHASE_PREFILL, 20}, {ATTNGEN_PHASE_DECODE, 1},
                                 {ATTNGEN_PHASE_DECODE, 3},   {ATTNGEN_PHASE_DECODE, 1},   {ATTNGEN_PHASE_DECODE, 3},
                                 {ATTNGEN_PHASE_DECODE, 1}};
  for (size_t s = 0; !fail && s < sizeof steps / sizeof steps[0]; s++) {
    const int n = steps[s][1];
    fail = step_both(&w, (attngen_phase)steps[s][0], len, n, nt, &seed, q, o, r);
    if (!fail && s + 1 == sizeof steps / sizeof steps[0]) fail = check_reference(&w, q, len, o, "last decode step", r);
    for (int b = 0; b < 3; b++) len[b] += n;
  }
  free(q), free(o);
  world_free(&w);
  return fail;
}

static int scenario_run(const test_case *c, case_result *r) {
  enum { L = 1100 };
  uint64_t seed = c->seed;
  world w;
  if (world_init(&w, c, 2, L, 1, &seed, r)) return 1;
  const int32_t zero[2] = {0, 0};
  attngen_kernel kc, kp;
  float *kn = randoms((size_t)2 * L * w.kvh * w.d, &seed), *vn = randoms((size_t)2 * L * w.kvh * w.d, &seed);
  float *q = randoms((size_t)2 * 40 * w.H * w.d, &seed), *o = (float *)malloc((size_t)2 * 40 * w.H * w.d * sizeof(float));
  int fail = !kn || !vn || !q || !o ? case_failf(r, "out of memory")
                                    : kernel_of(c, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_DECODE, 0, &kc, r) ||
                                          kernel_of(c, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_DECODE, w.ps, &kp, r) ||
                                          append_both(&w, &kc, &kp, zero, L, kn, vn, r);
  /* decode, 1 query at the last position: split-KV over 1100 keys, on 1 and 3 threads */
  for (int nt = 1; !fail && nt <= 3; nt += 2) {
    attngen_args a;
    memset(&a, 0, sizeof a);
    a.batch = 2, a.q_len = 1, a.kv_len = L, a.q = q;
    fail = run_both(&w, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_DECODE, &a, nt, o, r);
    const int32_t at[2] = {L - 1, L - 1};
    if (!fail) fail = check_reference(&w, q, at, o, "decode over 1100 keys", r);
  }
  /* decode of 4 queries and a 40-query chunk of prefill, with kv_lens (causal_padding) */
  const int32_t kvl[2] = {L, 700};
  for (int p = 0; !fail && p < 2; p++) {
    attngen_args a;
    memset(&a, 0, sizeof a);
    a.batch = 2, a.q_len = p ? 40 : 4, a.kv_len = L, a.q = q, a.kv_lens = kvl;
    fail = run_both(&w, ATTNGEN_MASK_CAUSAL_PADDING, p ? ATTNGEN_PHASE_PREFILL : ATTNGEN_PHASE_DECODE, &a, 2, o, r);
  }
  free(kn), free(vn), free(q), free(o);
  world_free(&w);
  return fail;
}

/* A prompt appended once into sequence 0's pages; sequence 1's block table names the same full pages and a copy of
 * the partial last one (copy on write); then both decode into their own pages. */
static int scenario_shared(const test_case *c, case_result *r) {
  enum { P = 37, CAP = 48 };
  uint64_t seed = c->seed;
  world w;
  if (world_init(&w, c, 2, CAP, 0, &seed, r)) return 1;
  const int full = P / w.ps;
  for (int i = 0; i < full; i++) w.bt[w.max_pages + i] = w.bt[i]; /* shared; the pages it no longer needs stay unused */
  attngen_kernel kc, kp;
  float *kn = randoms((size_t)P * w.kvh * w.d, &seed), *vn = randoms((size_t)P * w.kvh * w.d, &seed);
  float *k2 = (float *)malloc((size_t)2 * P * w.kvh * w.d * sizeof(float)), *v2 = (float *)malloc((size_t)2 * P * w.kvh * w.d * sizeof(float));
  int fail = !kn || !vn || !k2 || !v2 ? case_failf(r, "out of memory")
                                      : kernel_of(c, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_DECODE, 0, &kc, r) ||
                                            kernel_of(c, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_DECODE, w.ps, &kp, r);
  if (!fail) { /* contiguous: the prompt in both sequences; paged: once, into sequence 0's pages */
    const size_t n = (size_t)P * w.kvh * w.d;
    memcpy(k2, kn, n * sizeof(float)), memcpy(k2 + n, kn, n * sizeof(float));
    memcpy(v2, vn, n * sizeof(float)), memcpy(v2 + n, vn, n * sizeof(float));
    const int32_t zero[2] = {0, 0};
    for (int paged = 0; !fail && paged < 2; paged++) {
      attngen_append_args a;
      memset(&a, 0, sizeof a);
      set_append(&w, paged, &a);
      a.batch = paged ? 1 : 2, a.n_new = P, a.cache_len = zero, a.k_new = paged ? kn : k2, a.v_new = paged ? vn : v2;
      const int st = attngen_kv_append(paged ? &kp : &kc, &a);
      if (st) fail = case_failf(r, "prompt append: %s (%s)", attngen_status_name(st), attngen_last_error());
    }
  }
  if (!fail && P % w.ps) { /* copy on write: the partial page's rows into sequence 1's own page */
    const int from = w.bt[full], to = w.bt[w.max_pages + full], bytes = kvt_bytes(c->shape.kv_dtype);
    const size_t pe = (size_t)w.ps * w.kvh * w.d, psc = (size_t)w.ps * w.kvh * w.groups;
    memcpy(w.pc.k + to * pe * bytes, w.pc.k + from * pe * bytes, pe * bytes);
    memcpy(w.pc.v + to * pe * bytes, w.pc.v + from * pe * bytes, pe * bytes);
    if (w.groups) memcpy(w.pc.ks + to * psc, w.pc.ks + from * psc, psc * sizeof(float)), memcpy(w.pc.vs + to * psc, w.pc.vs + from * psc, psc * sizeof(float));
  }
  int32_t len[2] = {P, P};
  float *q = (float *)malloc((size_t)2 * w.H * w.d * sizeof(float)), *o = (float *)malloc((size_t)2 * w.H * w.d * sizeof(float));
  if (!fail && (!q || !o)) fail = case_failf(r, "out of memory");
  for (int s = 0; !fail && s < 6; s++, len[0]++, len[1]++) {
    fail = step_both(&w, ATTNGEN_PHASE_DECODE, len, 1, 1, &seed, q, o, r);
    if (!fail && s == 5) fail = check_reference(&w, q, len, o, "decode over a shared prompt", r);
  }
  /* the last step again as a cascade: the shared full pages read once for both sequences, each one's own pages on
   * their own; against float64 and the step's own output */
  int32_t *own_bt = (int32_t *)malloc((size_t)2 * w.max_pages * sizeof(int32_t));
  float *oc = (float *)malloc((size_t)2 * w.H * w.d * sizeof(float));
  if (!fail && (!own_bt || !oc)) fail = case_failf(r, "out of memory");
  if (!fail && full > 0) {
    const int own_pages = w.max_pages - full;
    for (int b = 0; b < 2; b++)
      for (int i = 0; i < own_pages; i++) own_bt[b * own_pages + i] = w.bt[b * w.max_pages + full + i];
    attngen_cascade_args ca;
    memset(&ca, 0, sizeof ca);
    set_args(&w, 1, &ca.prefix), set_args(&w, 1, &ca.suffix);
    ca.prefix.kv_len = full * w.ps, ca.prefix.pages.max_pages = full; /* sequence 0's table: the shared pages */
    ca.suffix.pages.block_table = own_bt, ca.suffix.pages.max_pages = own_pages;
    ca.suffix.batch = 2, ca.suffix.q_len = 1, ca.suffix.kv_len = len[0] - full * w.ps, ca.suffix.q = q, ca.suffix.o = oc;
    const int st = attngen_cascade_decode(&kp, &ca, 1);
    len[0]--, len[1]--; /* the step's cache lengths before its append */
    if (st) fail = case_failf(r, "cascade over shared pages: %s (%s)", attngen_status_name(st), attngen_last_error());
    else fail = check_reference(&w, q, len, oc, "cascade over shared pages", r);
    for (size_t e = 0; !fail && e < (size_t)2 * w.H * w.d; e++)
      if (!(fabsf(oc[e] - o[e]) <= CASE_TOL * fmaxf(1.0f, fabsf(o[e]))))
        fail = case_failf(r, "cascade over shared pages: o[%zu] = %g, the step gave %g", e, (double)oc[e], (double)o[e]);
  }
  free(own_bt), free(oc);
  free(kn), free(vn), free(k2), free(v2), free(q), free(o);
  world_free(&w);
  return fail;
}

/* A windowed layer: the paged cache is a ring (attngen_ring_block_table) of window + 2 rows rounded up to pages, plus
 * the sink tokens' page; 2 sequences decode 1 or 3 tokens a step up to 118 rows (3+ wraps), each step the same bits
 * as on a contiguous cache of every row. */
static int scenario_ring(const test_case *c, case_result *r) {
  enum { T = 118, MAX_NEW = 3 };
  uint64_t seed = c->seed;
  const attngen_feature_values *f = &c->table->params.features;
  world w;
  if (world_init(&w, c, 2, T + 8, 0, &seed, r)) return 1;
  w.window = f->window, w.sink_tokens = f->sink_tokens;
  const int sink_pages = (w.sink_tokens + w.ps - 1) / w.ps;
  const int ring_pages = sink_pages + (w.window + MAX_NEW - 1 + w.ps - 1) / w.ps;
  int fail = 0;
  for (int b = 0; !fail && b < 2; b++) { /* each sequence's ring: its first pages of the shuffled ones */
    int32_t given[64];
    for (int i = 0; i < ring_pages; i++) given[i] = w.bt[b * w.max_pages + i];
    const int st = attngen_ring_block_table(w.ps, w.window, w.sink_tokens, MAX_NEW, given, ring_pages,
                                            w.bt + b * w.max_pages, w.max_pages);
    if (st) fail = case_failf(r, "attngen_ring_block_table: %s (%s)", attngen_status_name(st), attngen_last_error());
    if (!fail && w.bt[b * w.max_pages + ring_pages] != given[sink_pages])
      fail = case_failf(r, "ring page %d is %d, not the first ring page %d", ring_pages, (int)w.bt[b * w.max_pages + ring_pages],
                        (int)given[sink_pages]);
    /* one page fewer cannot hold window + max_new - 1 rows */
    if (!fail && attngen_ring_block_table(w.ps, w.window, w.sink_tokens, MAX_NEW, given, ring_pages - 1, given + 32, 4) !=
                     ATTNGEN_ERR_CAPACITY)
      fail = case_failf(r, "a ring of %d pages for window %d was not refused", ring_pages - 1, w.window);
  }
  int32_t len[2] = {0, 0};
  float *q = (float *)malloc((size_t)2 * MAX_NEW * w.H * w.d * sizeof(float)), *o = (float *)malloc((size_t)2 * MAX_NEW * w.H * w.d * sizeof(float));
  if (!fail && (!q || !o)) fail = case_failf(r, "out of memory");
  while (!fail && len[0] < T) {
    const int n = len[0] % 10 == 7 ? MAX_NEW : 1;
    fail = step_both(&w, ATTNGEN_PHASE_DECODE, len, n, 1, &seed, q, o, r);
    len[0] += n, len[1] += n;
  }
  if (!fail) { /* the last step, once more, against float64 (3+ wraps behind it) */
    fail = step_both(&w, ATTNGEN_PHASE_DECODE, len, 1, 1, &seed, q, o, r) || check_reference(&w, q, len, o, "ring decode", r);
  }
  free(q), free(o);
  world_free(&w);
  return fail;
}

/* ---- refusals: each call must return its status with a message and write nothing */

static int expect(int st, int want, const char *what, const float *o, const float *o0, size_t no, case_result *r) {
  if (st != want)
    return case_failf(r, "%s: got %s (%s), want %s", what, attngen_status_name(st), attngen_last_error(), attngen_status_name(want));
  if (want != ATTNGEN_OK && !attngen_last_error()[0]) return case_failf(r, "%s: no message", what);
  if (o && memcmp(o, o0, no * sizeof(float))) return case_failf(r, "%s: the output was written", what);
  return 0;
}

static int scenario_errors(const test_case *c, case_result *r) {
  uint64_t seed = c->seed;
  world w;
  if (world_init(&w, c, 2, 40, 2, &seed, r)) return 1;
  attngen_kernel kc, kp;
  const size_t no = (size_t)2 * w.H * w.d;
  float *q = randoms(no, &seed), *o = (float *)malloc(no * sizeof(float)), *o0 = (float *)malloc(no * sizeof(float));
  float *kn = randoms((size_t)2 * 40 * w.kvh * w.d, &seed);
  int fail = !q || !o || !o0 || !kn ? case_failf(r, "out of memory")
                                    : kernel_of(c, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_DECODE, 0, &kc, r) ||
                                          kernel_of(c, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_DECODE, w.ps, &kp, r);
  const int32_t zero[2] = {0, 0};
  if (!fail) fail = append_both(&w, &kc, &kp, zero, 30, kn, kn, r);
  if (!fail) {
    for (size_t i = 0; i < no; i++) o[i] = o0[i] = 1234.5f;
    attngen_args base;
    memset(&base, 0, sizeof base);
    set_args(&w, 1, &base);
    base.batch = 2, base.q_len = 1, base.kv_len = 30, base.q = q, base.o = o;
    attngen_args a = base;
    fail = expect(attngen_run(&kp, &a), ATTNGEN_OK, "a good call", NULL, NULL, 0, r);
    memcpy(o0, o, no * sizeof(float));
    const int32_t keep = w.bt[w.max_pages + 1];
    w.bt[w.max_pages + 1] = w.num_pages;
    a = base;
    if (!fail) fail = expect(attngen_run(&kp, &a), ATTNGEN_ERR_PAGE, "page index num_pages", o, o0, no, r);
    w.bt[w.max_pages + 1] = -1;
    if (!fail) fail = expect(attngen_run(&kp, &a), ATTNGEN_ERR_PAGE, "page index -1", o, o0, no, r);
    w.bt[w.max_pages + 1] = keep;
    a = base, a.pages.page_size = w.ps * 2;
    if (!fail) fail = expect(attngen_run(&kp, &a), ATTNGEN_ERR_SHAPE, "page_size not the kernel's", o, o0, no, r);
    a = base, a.pages.block_table = NULL;
    if (!fail) fail = expect(attngen_run(&kp, &a), ATTNGEN_ERR_NULL, "no block table", o, o0, no, r);
    a = base, a.kv_capacity = 40;
    if (!fail) fail = expect(attngen_run(&kp, &a), ATTNGEN_ERR_SIZE, "kv_capacity with pages", o, o0, no, r);
    a = base, a.pages.max_pages = 0;
    if (!fail) fail = expect(attngen_run(&kp, &a), ATTNGEN_ERR_SIZE, "max_pages 0", o, o0, no, r);
    a = base, a.kv_len = w.max_pages * w.ps + 1;
    if (!fail) fail = expect(attngen_run(&kp, &a), ATTNGEN_ERR_CAPACITY, "kv_len past the block table", o, o0, no, r);
    a = base, a.pages.num_pages = 1;
    if (!fail) fail = expect(attngen_run(&kp, &a), ATTNGEN_ERR_PAGE, "pages past num_pages", o, o0, no, r);
    a = base, a.pages.block_table = (const int32_t *)(const void *)o;
    if (!fail) fail = expect(attngen_run(&kp, &a), ATTNGEN_ERR_ALIAS, "block table overlapping o", o, o0, no, r);
    a = base;
    set_args(&w, 0, &a);
    a.pages = base.pages;
    if (!fail) fail = expect(attngen_run(&kc, &a), ATTNGEN_ERR_SHAPE, "pages on a contiguous kernel", o, o0, no, r);
    /* appends: a row whose page is not given (-1), or past the pools; nothing appended */
    kvt_cache before;
    if (!fail && kvt_clone(&before, &w.pc)) fail = case_failf(r, "out of memory");
    if (!fail) {
      const int32_t len[2] = {30, 30};
      attngen_append_args ap;
      memset(&ap, 0, sizeof ap);
      set_append(&w, 1, &ap);
      ap.batch = 2, ap.n_new = 3, ap.cache_len = len, ap.k_new = kn, ap.v_new = kn;
      const int p = 32 / w.ps; /* the page of row 32 in sequence 1 */
      const int32_t kept = w.bt[w.max_pages + p];
      w.bt[w.max_pages + p] = -1;
      fail = expect(attngen_kv_append(&kp, &ap), ATTNGEN_ERR_CAPACITY, "append into a missing page", NULL, NULL, 0, r);
      w.bt[w.max_pages + p] = w.num_pages + 5;
      if (!fail) fail = expect(attngen_kv_append(&kp, &ap), ATTNGEN_ERR_PAGE, "append past the pools", NULL, NULL, 0, r);
      w.bt[w.max_pages + p] = kept;
      ap.cache_len = zero, ap.n_new = w.max_pages * w.ps + 1;
      if (!fail) fail = expect(attngen_kv_append(&kp, &ap), ATTNGEN_ERR_CAPACITY, "append past max_pages", NULL, NULL, 0, r);
      /* a step whose attention reads a page that is not given: refused before the cache is written */
      attngen_step_args s;
      memset(&s, 0, sizeof s);
      set_append(&w, 1, &s.kv);
      s.kv.batch = 2, s.kv.n_new = 1, s.kv.cache_len = len, s.kv.k_new = kn, s.kv.v_new = kn, s.q = q, s.o = o;
      const int32_t k0 = w.bt[0];
      w.bt[0] = -1;
      if (!fail) fail = expect(attngen_step(&kp, &s), ATTNGEN_ERR_PAGE, "step over a missing page", o, o0, no, r);
      w.bt[0] = k0;
      if (!fail && !kvt_same(&before, &w.pc)) fail = case_failf(r, "a refused append or step wrote the pools");
      kvt_free(&before);
    }
    /* the ring helper's own refusals */
    int32_t pages[4] = {0, 1, 2, 3}, table[8];
    if (!fail) fail = expect(attngen_ring_block_table(3, 8, 0, 1, pages, 4, table, 8), ATTNGEN_ERR_SIZE, "ring page_size 3", NULL, NULL, 0, r);
    if (!fail) fail = expect(attngen_ring_block_table(4, 17, 0, 1, pages, 4, table, 8), ATTNGEN_ERR_CAPACITY, "ring too small", NULL, NULL, 0, r);
    if (!fail) fail = expect(attngen_ring_block_table(4, 8, 9, 1, pages, 4, table, 8), ATTNGEN_ERR_CAPACITY, "ring without room past its sinks", NULL, NULL, 0, r);
    if (!fail) fail = expect(attngen_ring_block_table(4, 8, 0, 1, NULL, 4, table, 8), ATTNGEN_ERR_NULL, "ring without pages", NULL, NULL, 0, r);
  }
  free(q), free(o), free(o0), free(kn);
  world_free(&w);
  return fail;
}

int paged_run(const test_case *c, case_result *r) {
  switch (c->variant) {
  case PAGED_STEP: return scenario_step(c, r);
  case PAGED_RUN: return scenario_run(c, r);
  case PAGED_SHARED: return scenario_shared(c, r);
  case PAGED_RING: return scenario_ring(c, r);
  case PAGED_ERRORS: return scenario_errors(c, r);
  }
  return case_failf(r, "unknown paged scenario %d", c->variant);
}

/* SPDX-License-Identifier: MIT */
/* The shared test-case list and checker (see cases.h).
 *
 * Why CASE_TOL = 1e-5, measured against max(1, max|ref|), is the right tolerance for fp32 kernels here
 * -----------------------------------------------------------------------------------------------------
 * Every output is a convex combination of V rows, so |out| <= max|v| <= 1 and the bound is in effect an
 * absolute 1e-5 ~= 168 u (u = 2^-24 ~= 6e-8, the fp32 unit roundoff).
 *  - Scores: s = scale * sum_e q_e k_e over d <= 512 terms, fp32 accumulation, |q|,|k| <= 1, scale = 1/sqrt(d).
 *    The scaled score has standard deviation ~1/3; the partial sums P_k have |P_k| ~ sqrt(k)/3, so the
 *    rounding errors (independent, zero-mean in practice: Higham & Mary's probabilistic bound) add up to
 *    ~ u * sqrt(sum_k k/9) / sqrt(d) ~ u sqrt(d) / 4 ~= 3e-7 for d = 512 (less with SIMD lanes, which keep
 *    partial sums shorter). The deterministic worst case d * u * scale * sum|q k| (~7e-4 at d = 512) needs
 *    every rounding to go the same way, which random inputs never produce.
 *  - Softmax: a score error ds_j perturbs p_j by a relative ~ds_j (plus a few u from exp and the division),
 *    so out = sum p_j v_j moves by <= ~2 max|ds| with |v| <= 1.
 *  - The weighted sum over n <= 257 keys (with online-softmax rescaling per block) adds ~ u sqrt(n) ~= 1e-6.
 *  Expected max error over the suite ~1e-6, i.e. about 10x below the tolerance; a kernel bug (wrong mask
 *  boundary, lost tail, bad rescale) produces errors of 1e-3 and up. Measured over the whole suite: 4.2e-7 on
 *  x86-64 (gcc and clang builds), 4.4e-7 on aarch64 under qemu (worst: the generic kernels at head_dim 512);
 *  log-sum-exp 1.1e-6. So the tolerance holds with a >20x margin and needs no loosening. The log-sum-exp is checked the same
 *  way per element: its absolute error is ~ds + u |lse|, compared with 1e-5 * max(1, |lse|).
 *  RANGE_LARGE cases use integer q/k with q scaled by F = 2^k and scale = 1: every product and partial sum
 *  is an integer multiple of F below 2^24, so the scores (~1e4) are exact in fp32 and distinct scores
 *  differ by >= F >= 64; softmax is then exact up to exp(-64), whatever exp/exp2 formulation a kernel uses,
 *  and only overflow handling (max subtraction) is under test. This includes the split-KV path (decode with a
 *  long cache): a merge that rounds a partial log-sum-exp of ~1e4 to fp32 (spacing 2^-10) perturbs the merge
 *  weights by up to ~5e-4 and fails here on purpose; keeping each split's max (exact) and sum apart does not.
 *  The measured maximum is printed by run_cases (last line but one) and by the Criterion suite's summary.
 *  RoPE (tables with `rope`; the step and append cases of rope_cases.c) keeps the same tolerance: q is rotated
 *  in fp32 while packed and k when appended, from cos/sin of a float64 angle, each element within ~5 u
 *  (|x0| + |x1|) / 2 of the float64 rotation (measured max 1.4e-7 for |x| <= 1, positions up to 2^31 - 1). That
 *  moves a score by ~u sqrt(d) |q||k| scale, the order of the accumulation error above, so the bound of 1e-5
 *  keeps its margin: measured 2.1e-7 over the RoPE cases, including a ragged batch decoded token by token over
 *  300 steps with appends (vs one causal prefill of the sequence and vs float64) and positions up to 2^20.
 *
 * RANGE_WIDE: |scores| up to SMAX = CASE_WIDE_SMAX = 30, and the tolerance derived for them
 * ------------------------------------------------------------------------------------------
 * Real models reach scaled scores of tens (sharp attention), far from the ~1/3 of unit inputs. These cases keep
 * k and v in [-1, 1], use the default scale, and multiply each query row by g so that its largest |score| over
 * the keys it may see is exactly SMAX (g <= 3 SMAX / (scale sqrt(d)), so the score's spread sigma_s = g scale
 * sqrt(d) / 3 stays <= SMAX even for a row whose raw scores happen to be tiny).
 *  - Score: the fp32 dot product's partial sums P_m are a random walk of spread sigma_s sqrt(m / d); their
 *    roundings add up to ds ~ u sqrt(sum_m P_m^2) <= u SMAX sqrt(d / 2) (rms; shorter with SIMD lanes). Unlike
 *    the unit case this grows with the score itself: |ds| ~ |s| u sqrt(d), about 5e-6 rms at d = 512.
 *  - Through exp: p_j = exp(s_j - m) / sum_k exp(s_k - m) moves by dp_j / p_j = ds_j - sum_k p_k ds_k, so
 *    out = sum_j p_j v_j moves by sum_j p_j v_j (ds_j - mean_p ds) = Cov_p(v, ds) <= sd_p(v) sd_p(ds) <= max |ds|
 *    (|v| <= 1). The max over the ~1e6 scores of a suite run is below 5 rms, so |dout| <= 5 u SMAX sqrt(d / 2)
 *    = 3.54 u SMAX sqrt(d). The exp of the rounded argument s_j - m (error u |s_j - m|) matters only for keys
 *    with a weight worth counting, |s_j - m| <~ 15, i.e. <~ 1e-6: inside the CASE_TOL budget, as are the exp
 *    ulps, the P.V sum and the division.
 *  - So CASE_TOL_WIDE(d) = CASE_TOL + 3.6 u SMAX sqrt(d): 3.7e-5 at d = 17, 6.2e-5 at d = 64, 8.3e-5 at
 *    d = 128, 1.1e-4 at d = 256, 1.6e-4 at d = 512. The log-sum-exp is checked against it the same way.
 *  Measured (x86-64, gcc and clang builds, 1029 wide cases: prefill, chunked prefill, decode and split-KV decode,
 *  AVX2 and scalar, specialized tables up to d = 320 and the generic kernel up to d = 512): at most 0.25-0.7
 *  u SMAX sqrt(d) per head_dim, e.g. 6.5e-6 at d = 64, 1.1e-5 at d = 128, 1.2e-5 at d = 256, 1.7e-5 at d = 320,
 *  1.3e-5 at d = 512; the closest case is 6.3x below its tolerance (d = 48), most are 7-12x below (aarch64 under
 *  qemu, NEON and scalar, 674 wide cases of the qemu subset: max 1.9e-5, closest 7x below). CASE_TOL alone
 *  (1e-5) would fail the d >= 128 cases; it is unchanged for every other range. run_cases and the Criterion
 *  summary print the wide cases' maximum on their own line.
 *
 * Soft-capped kernels (the SOFTCAP feature) add CASE_SOFTCAP_TOL(cap) = 2 cap CASE_TANH_ERR:
 *  - The score becomes cap * tanh(s / cap) through the ISA's vector tanh, (1 - e) / (1 + e) with e = exp(-2|x|).
 *    Its largest absolute error against float64 tanh, every float-grid step of [-20, 20] sampled 2^27 times per
 *    lane pattern: 1.37e-7 on AVX-512 and AVX2 (the same exp, so the same bits; NEON runs the same formula), 1.03e-7
 *    for the scalar tanhf. CASE_TANH_ERR = 1.4e-7.
 *  - Scaled by the cap, that is an absolute score error ds <= cap CASE_TANH_ERR; through the softmax (above) the
 *    output moves by at most sd_p(v) max|ds| <= 2 max|ds| with |v| <= 1. Cap 5: 1.4e-6; Gemma-2's 50: 1.4e-5.
 * ALiBi kernels add CASE_ALIBI_TOL(m) = 4 u m, m the largest |row max| of the biased scores:
 *  - The biased score s + slope (j - p) is one fp32 fma of an exact product-sum: error <= u |s + b|. The keys with a
 *    weight worth counting sit within ~15 of their row's max m_r, so their exponents s + b - m_r err by at most
 *    ~2 u |m_r| (the subtraction is exact near m_r), and the output (above) by at most 2 x that. Where the visible
 *    keys are all far from the query (a sequence's kv_lens well below its position) or the scores are large
 *    (range=large), |m_r| is in the tens to hundreds: a unit-range decode against kv_lens 1025 at position 2045,
 *    slope 0.088, has m_r ~ -90, measured 1.5e-5 against a bound of 2.2e-5 + CASE_TOL. The reference's
 *    |lse| + log(kv_len) bounds |m_r| from above (m_r <= lse <= m_r + log(keys)).
 * Windows and sink logits are exact (-inf, one more term of the sum).
 */
#include "cases.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_types.h"
#include "merge_cases.h"
#include "paged_cases.h"
#include "reference.h"
#include "rope_cases.h"

#if defined(__has_include)
#if __has_include("attngen_registry_test.h")
#include "attngen_registry_test.h" /* generated (attngen --registry test): each table header, TEST_TABLES(X) */
#endif
#endif
#ifndef TEST_TABLES
#define TEST_TABLES(X)
#endif

#define TT_ADDR(cname, CNAME) &attngen_table_##cname,
static const attngen_table *const g_tables[] = {TEST_TABLES(TT_ADDR) NULL};

const attngen_table *case_table(const char *model) {
  for (int i = 0; g_tables[i]; i++)
    if (strcmp(g_tables[i]->model, model) == 0) return g_tables[i];
  return NULL;
}

/* Each header's X-macro list, as data (CK_TABLE compares it with the table the .c file built). */
typedef struct {
  const char *name;
  int heads, kv_heads, head_dim;
  attngen_mask mask;
  attngen_phase phase;
  attngen_isa isa;
  attngen_kv_dtype kv_dtype;
} xentry;
#define XL_ENTRY(name, h, kvh, d, M, P, I, T) \
  {#name, h, kvh, d, ATTNGEN_MASK_##M, ATTNGEN_PHASE_##P, ATTNGEN_ISA_##I, ATTNGEN_KV_##T},
#define TT_XLIST(cname, CNAME) \
  static const xentry xl_##cname[] = {ATTNGEN_##CNAME##_KERNELS(XL_ENTRY){NULL, 0, 0, 0, ATTNGEN_MASK_NONE, \
                                                                         ATTNGEN_PHASE_PREFILL, ATTNGEN_ISA_SCALAR, \
                                                                         ATTNGEN_KV_F32}};
TEST_TABLES(TT_XLIST)
#define TT_XADDR(cname, CNAME) xl_##cname,
static const xentry *const g_xlists[] = {TEST_TABLES(TT_XADDR) NULL};

int cases_tables(const attngen_table *const **out) {
  *out = g_tables;
  return (int)(sizeof g_tables / sizeof g_tables[0]) - 1;
}

/* ------------------------------------------------------------------------------------------------ */
/* deterministic inputs */

typedef struct {
  uint64_t s;
} rng;

static uint32_t rng_next(rng *r) { /* splitmix64, upper half */
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (uint32_t)((z ^ (z >> 31)) >> 32);
}
static float rng_unit(rng *r) { /* [-1, 1), 24 significant bits: exact in fp32 */
  return (float)((int32_t)(rng_next(r) >> 8) - (1 << 23)) / (float)(1 << 23);
}
static int rng_int(rng *r, int lo, int hi) { return lo + (int)(rng_next(r) % (uint32_t)(hi - lo + 1)); }

/* F for RANGE_LARGE: a power of two putting typical |scores| near 1e4 (integers in [-4,4]: E[(qk)^2] = 400/9);
 * the largest possible |score| 16 * d * F stays below 2^24 for d <= 512. */
static float large_factor(int d) {
  double f = 1e4 / sqrt(d * 400.0 / 9.0);
  float p = 1.0f;
  while (p * 2.0f <= (float)f * 1.41421356f) p *= 2.0f;
  while (16.0 * d * p >= 16777216.0) p *= 0.5f;
  return p;
}

/* ------------------------------------------------------------------------------------------------ */
/* buffers with guards and sentinels */

#define GUARD 64
static const uint32_t SENTINEL = 0x7FBADBADu; /* outputs: an NaN pattern no kernel produces */
static const uint32_t POISON = 0x7FC0DEADu;   /* inputs never to be read: quiet NaN */

typedef struct {
  float *base; /* total floats; p = base + guard */
  size_t total;
  float *p;
  size_t n, guard;
} fbuf;

/* Outputs get GUARD sentinel floats on each side (writes there are detected). Inputs get none: their exact
 * size lets AddressSanitizer (make test-sanitize) see any read past the tensor. */
static int fbuf_alloc(fbuf *b, size_t n, size_t guard, uint32_t fill) {
  b->n = n;
  b->guard = guard;
  b->total = n + 2 * guard;
  b->base = malloc(b->total * sizeof(float));
  if (!b->base) return -1;
  for (size_t i = 0; i < b->total; i++) memcpy(&b->base[i], &fill, sizeof fill);
  b->p = b->base + guard;
  return 0;
}
static void fbuf_free(fbuf *b) {
  free(b->base);
  b->base = b->p = NULL;
}
static int fbuf_clone(fbuf *dst, const fbuf *src) {
  *dst = *src;
  dst->base = malloc(src->total * sizeof(float));
  if (!dst->base) return -1;
  memcpy(dst->base, src->base, src->total * sizeof(float));
  dst->p = dst->base + src->guard;
  return 0;
}

static int mask_reads_lens(attngen_mask m) {
  return (attngen_mask_features(m) & ATTNGEN_FEATURE_KV_LENS) != 0;
}

/* strides the test passes for a tensor of `rows` rows and `nh` heads (0 = leave it to the runtime) */
static attngen_strides layout_strides(case_layout L, int rows, int nh, int d, int is_out) {
  attngen_strides s = {0, 0, 0};
  switch (L) {
  case LAYOUT_DENSE:
    break;
  case LAYOUT_PADDED:
    s.head = d + 3 + is_out;
    s.seq = nh * s.head + 5;
    s.batch = rows * s.seq + 7;
    break;
  case LAYOUT_HEAD_MAJOR:
    s.seq = d + (is_out ? 2 : 0);
    s.head = rows * s.seq;
    s.batch = nh * s.head + (is_out ? 3 : 0);
    break;
  }
  return s;
}

static size_t tensor_extent(attngen_strides s, int batch, int rows, int nh, int d) {
  return (size_t)((batch - 1) * s.batch + (rows - 1) * s.seq + (nh - 1) * s.head + d);
}

typedef struct {
  attngen_shape shape;
  attngen_args a;
  fbuf q, k, v, o, lse;
  int32_t *kv_lens;
  attngen_strides qs, ks, vs, os; /* resolved */
  int cap;
  float table_scale; /* the table's `scale` parameter for its own shape (0: none): what a 0 args.scale means */
  const attngen_rope *rope; /* the table's RoPE for its own shape (NULL: none): the reference rotates q by it */
  const attngen_feature_values *feat; /* the table's feature values for its own shape (NULL: none) */
  float *sinks, *slopes;    /* SINKS: random logits [heads]; ALIBI without a table: attngen_alibi_slopes [heads] */
  int32_t *q_pos;           /* POS_RANDOM / POS_ZERO positions, [batch][q_len] */
  /* A cache of another storage type than fp32 (shape.kv_dtype): kv holds it, written through attngen_kv_append
   * from the fp32 rows generated in k and v, which then hold the dequantized stored values (what the kernels read,
   * and what the reference computes on); rows never to be read stay poisoned in both. Same strides (in elements). */
  kvt_cache kv;
  attngen_strides kss, vss; /* int8 scales, resolved */
  char err[512];            /* why fixture_init failed ("": out of memory) */
} fixture;

static void fixture_free(fixture *f) {
  fbuf_free(&f->q);
  fbuf_free(&f->k);
  fbuf_free(&f->v);
  fbuf_free(&f->o);
  fbuf_free(&f->lse);
  free(f->kv_lens);
  free(f->q_pos);
  free(f->sinks);
  free(f->slopes);
  kvt_free(&f->kv);
}

/* Strides of the int8 scales [batch][rows][nh][G] for a layout (0 = the runtime's dense default). */
static attngen_strides scale_layout(case_layout L, int rows, int nh, int G, int is_v) {
  attngen_strides s = {0, 0, 0};
  switch (L) {
  case LAYOUT_DENSE:
    break;
  case LAYOUT_PADDED:
    s.head = G + 1 + is_v;
    s.seq = nh * s.head + 2;
    s.batch = rows * s.seq + 3 + is_v;
    break;
  case LAYOUT_HEAD_MAJOR:
    s.seq = G;
    s.head = rows * s.seq;
    s.batch = nh * s.head;
    break;
  }
  return s;
}

/* The case's cache in its storage type: allocated like K and V (kn, vn elements; Ba sequences of ka rows), written
 * through attngen_kv_append (a generic kernel of the type, no RoPE: K is stored as given) one sequence at a time,
 * its used rows only; every stored row checked against the conversion references of kv_types.c bit for bit; then
 * the dequantized values replace the fp32 rows in f->k and f->v for the reference. */
static int fixture_typed(fixture *f, const test_case *c, int Ba, int ka, size_t kn, size_t vn) {
  const attngen_kv_dtype t = c->shape.kv_dtype;
  const int KVH = c->shape.kv_heads, D = c->shape.head_dim, B = c->batch, g = kvt_group(t, D), G = g ? D / g : 0;
  attngen_args *a = &f->a;
  size_t nks = 0, nvs = 0;
  if (g) {
    a->k_scale_stride = scale_layout(c->layout, f->cap, KVH, G, 0);
    a->v_scale_stride = scale_layout(c->layout, f->cap, KVH, G, 1);
    f->kss = ref_strides(a->k_scale_stride, f->cap, KVH, G);
    f->vss = ref_strides(a->v_scale_stride, f->cap, KVH, G);
    nks = tensor_extent(ref_strides(a->k_scale_stride, ka, KVH, G), Ba, ka, KVH, G);
    nvs = tensor_extent(ref_strides(a->v_scale_stride, ka, KVH, G), Ba, ka, KVH, G);
  }
  if (kvt_alloc(&f->kv, t, D, kn, vn, nks, nvs)) return -1;
  attngen_shape as = c->shape;
  as.mask = ATTNGEN_MASK_NONE, as.phase = ATTNGEN_PHASE_DECODE;
  attngen_kernel ak;
  int st = attngen_select_generic(&as, ATTNGEN_ISA_SCALAR, &ak);
  if (st != ATTNGEN_OK) {
    snprintf(f->err, sizeof f->err, "attngen_select_generic(%s cache): %s (%s)", attngen_kv_dtype_name(t),
             attngen_status_name(st), attngen_last_error());
    return -1;
  }
  for (int b = 0; b < B; b++) {
    const int used = mask_reads_lens(c->shape.mask) ? f->kv_lens[b] : c->kv_len;
    if (used == 0) continue;
    const int32_t zero = 0;
    const size_t ek = (size_t)(b * f->ks.batch), ev = (size_t)(b * f->vs.batch);
    const size_t eks = g ? (size_t)(b * f->kss.batch) : 0, evs = g ? (size_t)(b * f->vss.batch) : 0;
    attngen_append_args ap;
    memset(&ap, 0, sizeof ap);
    ap.batch = 1, ap.n_new = used, ap.kv_capacity = f->cap, ap.cache_len = &zero;
    ap.k_new = f->k.p + ek, ap.v_new = f->v.p + ev;
    ap.k_new_stride = (attngen_strides){0, f->ks.seq, f->ks.head};
    ap.v_new_stride = (attngen_strides){0, f->vs.seq, f->vs.head};
    kvt_set_append(&ap, &f->kv, ek, ev, eks, evs);
    ap.k_cache_stride = ap.k_new_stride, ap.v_cache_stride = ap.v_new_stride;
    if (g) {
      ap.k_cache_scale_stride = (attngen_strides){0, f->kss.seq, f->kss.head};
      ap.v_cache_scale_stride = (attngen_strides){0, f->vss.seq, f->vss.head};
    }
    st = attngen_kv_append(&ak, &ap);
    if (st != ATTNGEN_OK) {
      snprintf(f->err, sizeof f->err, "attngen_kv_append(%s cache, sequence %d, %d rows): %s (%s)",
               attngen_kv_dtype_name(t), b, used, attngen_status_name(st), attngen_last_error());
      return -1;
    }
    for (int j = 0; j < used; j++)
      for (int h = 0; h < KVH; h++)
        for (int w = 0; w < 2; w++) {
          const attngen_strides *ts = w ? &f->vs : &f->ks, *ss = w ? &f->vss : &f->kss;
          const size_t e = (size_t)(b * ts->batch + j * ts->seq + h * ts->head);
          const size_t sc = g ? (size_t)(b * ss->batch + j * ss->seq + h * ss->head) : 0;
          float *x = (w ? f->v.p : f->k.p) + e;
          char why[256];
          if (kvt_row_check(&f->kv, w, e, sc, x, why, sizeof why)) {
            snprintf(f->err, sizeof f->err, "attngen_kv_append(%s cache) stored row %d head %d of sequence %d: %s",
                     attngen_kv_dtype_name(t), j, h, b, why);
            return -1;
          }
          for (int col = 0; col < D; col++) x[col] = kvt_value(&f->kv, w, e + (size_t)col, sc, col);
        }
  }
  return 0;
}

/* slack_rows: extra rows allocated in every tensor (the error cases mutate sizes; if the runtime wrongly
 * accepted one, the kernel must still stay inside the allocation). */
static int fixture_init(fixture *f, const test_case *c, int slack_rows) {
  memset(f, 0, sizeof *f);
  const int H = c->shape.heads, KVH = c->shape.kv_heads, D = c->shape.head_dim, B = c->batch;
  const int cap = c->kv_capacity > 0 ? c->kv_capacity : c->kv_len;
  const int qa = c->q_len + slack_rows, ka = cap + slack_rows; /* rows allocated */
  f->shape = c->shape;
  f->cap = cap;
  attngen_args *a = &f->a;
  a->batch = B;
  a->q_len = c->q_len;
  a->kv_len = c->kv_len;
  a->kv_capacity = c->kv_capacity;
  a->scale = c->scale;
  if (c->table && c->table->heads == H && c->table->kv_heads == KVH && c->table->head_dim == D) {
    f->table_scale = c->table->params.scale;
    f->feat = &c->table->params.features;
  }
  a->window = c->window, a->sink_tokens = c->sink_tokens, a->softcap = c->softcap;
  if (c->shape.features & ATTNGEN_ATTN_SINKS) { /* logits around the scores' range, so they weigh: [-3, 3) */
    if (!(f->sinks = malloc(sizeof(float) * (size_t)H))) return -1;
    rng sr = {0x51ull ^ c->seed};
    for (int h = 0; h < H; h++) f->sinks[h] = 3.0f * rng_unit(&sr);
    a->sinks = f->sinks;
  }
  if ((c->shape.features & ATTNGEN_ATTN_ALIBI) && !(f->feat && f->feat->alibi_slopes)) {
    if (!(f->slopes = malloc(sizeof(float) * (size_t)H)) || attngen_alibi_slopes(H, 8.0, f->slopes)) return -1;
    a->alibi_slopes = f->slopes;
  }
  a->q_stride = layout_strides(c->layout, c->q_len, H, D, 0);
  a->k_stride = layout_strides(c->layout, cap, KVH, D, 0);
  a->v_stride = layout_strides(c->layout, cap, KVH, D, 0);
  a->o_stride = layout_strides(c->layout, c->q_len, H, D, 1);
  if (c->layout == LAYOUT_PADDED) { /* make V differ from K */
    a->v_stride.head += 1;
    a->v_stride.seq = KVH * a->v_stride.head + 2;
    a->v_stride.batch = cap * a->v_stride.seq + 1;
  }
  f->qs = ref_strides(a->q_stride, c->q_len, H, D);
  f->ks = ref_strides(a->k_stride, cap, KVH, D);
  f->vs = ref_strides(a->v_stride, cap, KVH, D);
  f->os = ref_strides(a->o_stride, c->q_len, H, D);
  /* allocation sizes: exactly what the strides address (error cases: plus slack rows and a slack batch) */
  const int Ba = slack_rows ? B + 1 : B;
  size_t qn = tensor_extent(ref_strides(a->q_stride, qa, H, D), Ba, qa, H, D);
  size_t kn = tensor_extent(ref_strides(a->k_stride, ka, KVH, D), Ba, ka, KVH, D);
  size_t vn = tensor_extent(ref_strides(a->v_stride, ka, KVH, D), Ba, ka, KVH, D);
  size_t on = tensor_extent(f->os, B, c->q_len, H, D);
  if (slack_rows) on = tensor_extent(ref_strides(a->o_stride, qa, H, D), B + 1, qa, H, D);
  size_t ln = (size_t)B * H * (c->q_len + slack_rows);
  if (fbuf_alloc(&f->q, qn, 0, POISON) || fbuf_alloc(&f->k, kn, 0, POISON) || fbuf_alloc(&f->v, vn, 0, POISON) ||
      fbuf_alloc(&f->o, on, GUARD, SENTINEL) || fbuf_alloc(&f->lse, ln, GUARD, SENTINEL))
    return -1;
  f->kv_lens = malloc(sizeof(int32_t) * (size_t)(B + 1));
  if (!f->kv_lens) return -1;
  for (int b = 0; b < B; b++) {
    int L = c->kv_len;
    if (c->kvlens == KVL_VARIED) {
      static const int pick[4] = {0, 1, 2, 3};
      switch (pick[b % 4]) {
      case 0: L = b == 0 ? c->kv_len : (b * 7919) % (c->kv_len + 1); break;
      case 1: L = 0; break;
      case 2: L = c->kv_len / 2 + 1; break;
      case 3: L = 1; break;
      }
      if (L > c->kv_len) L = c->kv_len;
    }
    f->kv_lens[b] = L;
  }
  a->kv_lens = c->kvlens == KVL_NULL ? NULL : f->kv_lens;
  f->rope = rope_of(c->table, &c->shape);
  if (f->rope && c->pos != POS_NATURAL) { /* RoPE: explicit query positions (random ones differ per sequence) */
    f->q_pos = malloc(sizeof(int32_t) * (size_t)B * (size_t)(c->q_len + slack_rows));
    if (!f->q_pos) return -1;
    rng pr = {0x905ull ^ c->seed};
    for (int i = 0; i < B * (c->q_len + slack_rows); i++) f->q_pos[i] = c->pos == POS_ZERO ? 0 : rng_int(&pr, 0, 1 << 20);
    a->q_pos = f->q_pos;
  }
  if (c->layout != LAYOUT_DENSE) { /* the optional shape check, with matching values */
    a->heads = H;
    a->kv_heads = KVH;
    a->head_dim = D;
  }

  rng r = {0x5EED0000ull ^ ((uint64_t)c->seed << 20)};
  /* int8 caches: RANGE_LARGE keys are integers in [-127, 127] with a +-127 in every scale group, so that every
   * scale is exactly 1 and the stored keys are the integers themselves; q = 64 * [-4, 4] keeps every partial sum
   * a multiple of 64 below 4 * 127 * 512 * 64 < 2^24 (exact in fp32), as the fp32 range does with its own F */
  const int i8group = kvt_group(c->shape.kv_dtype, D);
  const float F = i8group ? 64.0f : large_factor(D);
  for (int b = 0; b < B; b++)
    for (int i = 0; i < c->q_len; i++)
      for (int h = 0; h < H; h++)
        for (int e = 0; e < D; e++)
          f->q.p[b * f->qs.batch + i * f->qs.seq + h * f->qs.head + e] =
              c->range == RANGE_LARGE ? F * (float)rng_int(&r, -4, 4) : rng_unit(&r);
  for (int b = 0; b < B; b++) {
    /* rows a sequence never sees stay poisoned: spare capacity always, padded keys for padding masks */
    int used = mask_reads_lens(c->shape.mask) ? f->kv_lens[b] : c->kv_len;
    for (int j = 0; j < used; j++)
      for (int h = 0; h < KVH; h++)
        for (int e = 0; e < D; e++) {
          float kx = c->range != RANGE_LARGE ? rng_unit(&r)
                     : i8group ? (e % i8group == 0 ? (rng_next(&r) & 1 ? 127.0f : -127.0f) : (float)rng_int(&r, -127, 127))
                               : (float)rng_int(&r, -4, 4);
          f->k.p[b * f->ks.batch + j * f->ks.seq + h * f->ks.head + e] = kx;
          f->v.p[b * f->vs.batch + j * f->vs.seq + h * f->vs.head + e] = rng_unit(&r);
        }
  }
  if (c->shape.kv_dtype != ATTNGEN_KV_F32 && fixture_typed(f, c, Ba, ka, kn, vn)) return -1;
  if (c->range == RANGE_WIDE) { /* scale each q row so that its largest |score| over the keys it may see is SMAX */
    const double sc = c->scale != 0.0f ? c->scale : f->table_scale != 0.0f ? f->table_scale : 1.0 / sqrt((double)D);
    const double gmax = 3.0 * CASE_WIDE_SMAX / (sc * sqrt((double)D)); /* keeps the score's spread <= SMAX */
    for (int b = 0; b < B; b++) {
      const int used = mask_reads_lens(c->shape.mask) ? f->kv_lens[b] : c->kv_len;
      for (int i = 0; i < c->q_len; i++)
        for (int h = 0; h < H; h++) {
          float *q = &f->q.p[b * f->qs.batch + i * f->qs.seq + h * f->qs.head];
          const int kvh = h / (H / KVH);
          double mx = 0.0;
          for (int j = 0; j < used; j++) {
            const float *k = &f->k.p[b * f->ks.batch + j * f->ks.seq + kvh * f->ks.head];
            double dot = 0.0;
            for (int e = 0; e < D; e++) dot += (double)q[e] * (double)k[e];
            if (fabs(sc * dot) > mx) mx = fabs(sc * dot);
          }
          double g = mx > 0.0 ? CASE_WIDE_SMAX / mx : gmax;
          if (g > gmax) g = gmax;
          for (int e = 0; e < D; e++) q[e] = (float)(g * (double)q[e]);
        }
    }
  }
  a->q = f->q.p;
  a->k = f->k.p;
  a->v = f->v.p;
  if (c->shape.kv_dtype != ATTNGEN_KV_F32) kvt_set_args(a, &f->kv, 0, 0, 0, 0); /* k and v: the reference's copy */
  a->o = f->o.p;
  a->lse = c->want_lse ? f->lse.p : NULL;
  return 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* results */

int case_failf(case_result *r, const char *fmt, ...) {
  if (r->msg[0]) return 1; /* keep the first reason */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->msg, sizeof r->msg, fmt, ap);
  va_end(ap);
  return 1;
}

static int get_kernel(const test_case *c, attngen_kernel *k, case_result *r) {
  int st;
  if (c->via_select) {
    st = attngen_select(c->table, &c->shape, k);
    if (st != ATTNGEN_OK) return case_failf(r, "attngen_select: %s (%s)", attngen_status_name(st), attngen_last_error());
  } else if (c->table) {
    st = attngen_select_specialized(c->table, &c->shape, c->isa, k);
    if (st != ATTNGEN_OK)
      return case_failf(r, "attngen_select_specialized: %s (%s)", attngen_status_name(st), attngen_last_error());
    if (k->info != &c->table->kernels[c->kernel_index])
      return case_failf(r, "attngen_select_specialized returned %s, not the table entry %s", k->info ? k->info->name : "NULL",
                   c->table->kernels[c->kernel_index].name);
  } else {
    st = attngen_select_generic(&c->shape, c->isa, k);
    if (st != ATTNGEN_OK)
      return case_failf(r, "attngen_select_generic: %s (%s)", attngen_status_name(st), attngen_last_error());
    /* one generic kernel per (phase, ISA): heads, kv_heads, head_dim and mask come from the bound shape */
    if (!k->info || k->info->isa != c->isa || k->info->phase != c->shape.phase || k->shape.heads != c->shape.heads ||
        k->shape.kv_heads != c->shape.kv_heads || k->shape.head_dim != c->shape.head_dim ||
        k->shape.mask != c->shape.mask || k->shape.phase != c->shape.phase)
      return case_failf(r, "attngen_select_generic returned the wrong kernel or shape (%s)", k->info ? k->info->name : "NULL");
  }
  if (!k->info->fn) return case_failf(r, "kernel %s has no function", k->info->name);
  return 0;
}

static int is_nan_or_inf(float x) { return isnan(x) || isinf(x); }

/* Compares f's output (and lse) with the reference and checks that nothing outside the written region moved. */
static int check_output(const test_case *c, const fixture *f, const double *ref, const double *ref_lse,
                        case_result *r) {
  const int H = c->shape.heads, D = c->shape.head_dim, B = c->batch, Q = c->q_len;
  double maxref = 0.0;
  for (size_t i = 0, n = (size_t)B * Q * H * D; i < n; i++)
    if (fabs(ref[i]) > maxref) maxref = fabs(ref[i]);
  const double norm = maxref > 1.0 ? maxref : 1.0;
  unsigned char *written = calloc(f->o.total, 1);
  if (!written) return case_failf(r, "out of memory");
  double worst = 0.0;
  int wb = 0, wi = 0, wh = 0, we = 0;
  for (int b = 0; b < B; b++)
    for (int i = 0; i < Q; i++)
      for (int h = 0; h < H; h++) {
        const int empty = isinf(ref_lse[((size_t)b * H + h) * Q + i]);
        for (int e = 0; e < D; e++) {
          ptrdiff_t off = b * f->os.batch + i * f->os.seq + h * f->os.head + e;
          written[GUARD + off] = 1;
          float got = f->o.p[off];
          double want = ref[(((size_t)b * Q + i) * H + h) * D + e];
          if (isnan(want)) { /* a test bug, not a kernel bug: the reference must never be NaN */
            case_failf(r, "reference is NaN at b=%d i=%d h=%d e=%d", b, i, h, e);
            free(written);
            return 1;
          }
          if (is_nan_or_inf(got)) {
            case_failf(r, "non-finite output %g at b=%d i=%d h=%d e=%d (ref %.9g)%s", (double)got, b, i, h, e, want,
                  isnan(got) ? " (NaN: unwritten sentinel or NaN result)" : "");
            free(written);
            return 1;
          }
          if (empty && got != 0.0f) {
            case_failf(r, "row with no visible key must be zero: got %.9g at b=%d i=%d h=%d e=%d", (double)got, b, i, h, e);
            free(written);
            return 1;
          }
          double err = fabs((double)got - want) / norm;
          if (err > worst) {
            worst = err;
            wb = b, wi = i, wh = h, we = e;
          }
        }
      }
  r->max_err = worst > r->max_err ? worst : r->max_err;
  r->checked = 1;
  double tol = c->range == RANGE_WIDE ? CASE_TOL_WIDE(D) : CASE_TOL; /* see the top of this file */
  if (c->shape.features & ATTNGEN_ATTN_SOFTCAP) { /* the vector tanh's error, scaled by the cap (top of this file) */
    const float cap = f->a.softcap != 0.0f ? f->a.softcap : f->feat ? f->feat->softcap : 0.0f;
    tol += CASE_SOFTCAP_TOL(cap);
  }
  if (c->shape.features & ATTNGEN_ATTN_ALIBI) { /* one fp32 rounding of each biased score (top of this file) */
    double m = 0.0; /* the largest |row max of the biased scores|: |m| <= |lse| + log(kv_len) */
    for (size_t i = 0, n = (size_t)B * H * Q; i < n; i++)
      if (!isinf(ref_lse[i]) && fabs(ref_lse[i]) + log((double)c->kv_len) > m) m = fabs(ref_lse[i]) + log((double)c->kv_len);
    tol += CASE_ALIBI_TOL(m);
  }
  r->tol = tol;
  if (worst > tol) {
    ptrdiff_t off = wb * f->os.batch + wi * f->os.seq + wh * f->os.head + we;
    case_failf(r, "max error %.3g > %.3g at b=%d i=%d h=%d e=%d: got %.9g want %.9g (kv_lens[b]=%d)", worst, tol, wb,
          wi, wh, we, (double)f->o.p[off], ref[(((size_t)wb * Q + wi) * H + wh) * D + we],
          f->a.kv_lens ? f->a.kv_lens[wb] : -1);
    free(written);
    return 1;
  }
  for (size_t t = 0; t < f->o.total; t++) {
    if (written[t]) continue;
    if (memcmp(&f->o.base[t], &SENTINEL, sizeof SENTINEL) != 0) {
      ptrdiff_t off = (ptrdiff_t)t - GUARD;
      case_failf(r, "output modified outside the written region at float offset %td (%s)", off,
            off < 0 ? "before the tensor" : (size_t)off >= f->o.n ? "after the tensor" : "stride gap");
      free(written);
      return 1;
    }
  }
  free(written);

  if (c->want_lse) {
    const size_t n = (size_t)B * H * Q;
    double lw = 0.0;
    for (int b = 0; b < B; b++)
      for (int h = 0; h < H; h++)
        for (int i = 0; i < Q; i++) {
          size_t idx = ((size_t)b * H + h) * Q + i;
          float got = f->lse.p[idx];
          double want = ref_lse[idx];
          if (isinf(want)) {
            if (!(isinf(got) && got < 0))
              return case_failf(r, "lse of a row with no visible key must be -inf: got %g at b=%d h=%d i=%d", (double)got,
                           b, h, i);
            continue;
          }
          if (is_nan_or_inf(got))
            return case_failf(r, "non-finite lse %g at b=%d h=%d i=%d (ref %.9g)", (double)got, b, h, i, want);
          double err = fabs((double)got - want) / (fabs(want) > 1.0 ? fabs(want) : 1.0);
          if (err > lw) lw = err;
          if (err > tol)
            return case_failf(r, "lse error %.3g > %.3g at b=%d h=%d i=%d: got %.9g want %.9g", err, tol, b, h, i,
                         (double)got, want);
        }
    if (lw > r->max_lse_err) r->max_lse_err = lw;
    for (size_t t = 0; t < f->lse.total; t++) {
      if (t >= GUARD && t < GUARD + n) continue;
      if (memcmp(&f->lse.base[t], &SENTINEL, sizeof SENTINEL) != 0)
        return case_failf(r, "lse buffer modified outside [batch][heads][q_len] at offset %td", (ptrdiff_t)t - GUARD);
    }
  }
  return 0;
}

static int compute_ref(const fixture *f, double **ref, double **ref_lse) {
  const attngen_args *a = &f->a;
  *ref = malloc(sizeof(double) * (size_t)a->batch * a->q_len * f->shape.heads * f->shape.head_dim);
  *ref_lse = malloc(sizeof(double) * (size_t)a->batch * a->q_len * f->shape.heads);
  if (!*ref || !*ref_lse) return -1;
  attngen_args ra = *a; /* the documented scale rule: the call's, else the table's, else 1/sqrt(head_dim) */
  if (ra.scale == 0.0f) ra.scale = f->table_scale;
  if (f->feat) { /* and the features' values: the call's, else the table's */
    if (ra.window == 0) ra.window = f->feat->window;
    if (ra.sink_tokens == 0) ra.sink_tokens = f->feat->sink_tokens;
    if (ra.softcap == 0.0f) ra.softcap = f->feat->softcap;
    if (!ra.alibi_slopes) ra.alibi_slopes = f->feat->alibi_slopes;
  }
  ra.k = f->k.p, ra.v = f->v.p; /* fp32, or the dequantized values of a typed cache (same strides) */
  ref_attention_rope(&f->shape, &ra, f->rope, NULL, *ref, *ref_lse); /* K as stored (a RoPE cache: rotated) */
  return 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* CK_NUMERIC */

static int run_numeric(const test_case *c, case_result *r) {
  attngen_kernel k;
  if (get_kernel(c, &k, r)) return 1;
  fixture f;
  double *ref = NULL, *ref_lse = NULL;
  int fail = 0;
  if (fixture_init(&f, c, 0) || compute_ref(&f, &ref, &ref_lse)) {
    fail = case_failf(r, "%s", f.err[0] ? f.err : "out of memory");
  } else {
    int st = attngen_run(&k, &f.a);
    if (st != ATTNGEN_OK)
      fail = case_failf(r, "attngen_run: %s (%s)", attngen_status_name(st), attngen_last_error());
    else
      fail = check_output(c, &f, ref, ref_lse, r);
  }
  free(ref);
  free(ref_lse);
  fixture_free(&f);
  return fail;
}

/* ------------------------------------------------------------------------------------------------ */
/* CK_THREADS */

typedef struct {
  attngen_plan *plan;
  size_t nitems;
  int thread, nthreads;
  int interleave; /* 1: items i with i % nthreads == thread, one at a time; 0: a contiguous block */
  int status;
} plan_worker;

static void *plan_worker_main(void *p) {
  plan_worker *w = p;
  w->status = ATTNGEN_OK;
  if (w->interleave) {
    for (size_t i = (size_t)w->thread; i < w->nitems && w->status == ATTNGEN_OK; i += (size_t)w->nthreads)
      w->status = attngen_plan_run(w->plan, i, i + 1, w->thread);
  } else {
    size_t per = (w->nitems + (size_t)w->nthreads - 1) / (size_t)w->nthreads;
    size_t b = per * (size_t)w->thread, e = b + per;
    if (e > w->nitems) e = w->nitems;
    if (b < e) w->status = attngen_plan_run(w->plan, b, e, w->thread);
  }
  return NULL;
}

/* mode 0: items in reverse order, one by one, thread 0; 1: contiguous blocks on real threads;
 * 2: interleaved single items on real threads */
static int run_plan(const attngen_kernel *k, const attngen_args *a, int nthreads, int mode, case_result *r) {
  attngen_plan *plan = NULL;
  int st = attngen_plan_create(k, a, nthreads, &plan);
  if (st != ATTNGEN_OK || !plan)
    return case_failf(r, "attngen_plan_create(nthreads=%d): %s (%s)", nthreads, attngen_status_name(st), attngen_last_error());
  size_t n = attngen_plan_items(plan);
  (void)attngen_plan_scratch_bytes(plan);
  if (n == 0) {
    attngen_plan_destroy(plan);
    return case_failf(r, "plan with nthreads=%d has no items", nthreads);
  }
  if (mode == 0) {
    for (size_t i = n; i-- > 0 && st == ATTNGEN_OK;) st = attngen_plan_run(plan, i, i + 1, 0);
  } else {
    pthread_t th[8];
    plan_worker w[8];
    for (int t = 0; t < nthreads; t++) {
      w[t] = (plan_worker){plan, n, t, nthreads, mode == 2, ATTNGEN_OK};
      if (pthread_create(&th[t], NULL, plan_worker_main, &w[t]) != 0) {
        for (int u = 0; u < t; u++) pthread_join(th[u], NULL);
        attngen_plan_destroy(plan);
        return case_failf(r, "pthread_create failed");
      }
    }
    for (int t = 0; t < nthreads; t++) {
      pthread_join(th[t], NULL);
      if (w[t].status != ATTNGEN_OK && st == ATTNGEN_OK) st = w[t].status;
    }
  }
  if (st != ATTNGEN_OK) {
    attngen_plan_destroy(plan);
    return case_failf(r, "attngen_plan_run (nthreads=%d mode=%d): %s (%s)", nthreads, mode, attngen_status_name(st),
                 attngen_last_error());
  }
  st = attngen_plan_finish(plan);
  attngen_plan_destroy(plan);
  if (st != ATTNGEN_OK)
    return case_failf(r, "attngen_plan_finish (nthreads=%d): %s (%s)", nthreads, attngen_status_name(st), attngen_last_error());
  return 0;
}

/* The prefill K/V repack (kernel->work.pack_kv_min_q): the runtime copies token-major K/V rows head-major once per
 * call. The same K/V handed over head-major (nothing to copy) must give the same bits, and a plan for the case's
 * own layout must hold the copy exactly when q_len reaches pack_kv_min_q (so the copy path is known to run). */
static int check_repack(const test_case *c, const attngen_kernel *k, const fixture *f, const fbuf *o0,
                        case_result *r) {
  const attngen_kv_dtype t = c->shape.kv_dtype;
  const int B = c->batch, KVH = c->shape.kv_heads, D = c->shape.head_dim, cap = f->cap;
  const int g = kvt_group(t, D), G = g ? D / g : 0, typed = t != ATTNGEN_KV_F32;
  const size_t n = (size_t)B * KVH * cap * D, ns = (size_t)B * KVH * cap * G, by = (size_t)kvt_bytes(t);
  kvt_cache h; /* the same K/V (any type), head-major: [b][kv head][cap][D], scales [b][kv head][cap][G] */
  fbuf o;
  int fail = 0;
  if (kvt_alloc(&h, t, D, n, n, ns, ns)) return case_failf(r, "out of memory");
  if (fbuf_clone(&o, o0)) {
    kvt_free(&h);
    return case_failf(r, "out of memory");
  }
  for (int b = 0; b < B; b++)
    for (int hh = 0; hh < KVH; hh++)
      for (int j = 0; j < cap; j++) {
        const size_t dst = (((size_t)b * KVH + hh) * cap + j) * D, sdst = (((size_t)b * KVH + hh) * cap + j) * G;
        const size_t ek = (size_t)(b * f->ks.batch + hh * f->ks.head + j * f->ks.seq);
        const size_t ev = (size_t)(b * f->vs.batch + hh * f->vs.head + j * f->vs.seq);
        if (!typed) {
          memcpy(h.k + dst * by, f->a.k + ek, sizeof(float) * D);
          memcpy(h.v + dst * by, f->a.v + ev, sizeof(float) * D);
          continue;
        }
        memcpy(h.k + dst * by, f->kv.k + ek * by, by * D);
        memcpy(h.v + dst * by, f->kv.v + ev * by, by * D);
        if (g) {
          memcpy(h.ks + sdst, f->kv.ks + (b * f->kss.batch + hh * f->kss.head + j * f->kss.seq), sizeof(float) * G);
          memcpy(h.vs + sdst, f->kv.vs + (b * f->vss.batch + hh * f->vss.head + j * f->vss.seq), sizeof(float) * G);
        }
      }
  attngen_args a = f->a;
  kvt_set_args(&a, &h, 0, 0, 0, 0);
  a.k_stride = (attngen_strides){(ptrdiff_t)KVH * cap * D, D, (ptrdiff_t)cap * D};
  a.v_stride = a.k_stride;
  if (g) {
    a.k_scale_stride = (attngen_strides){(ptrdiff_t)KVH * cap * G, G, (ptrdiff_t)cap * G};
    a.v_scale_stride = a.k_scale_stride;
  }
  a.o = o.p;
  a.lse = NULL;
  int st = attngen_run(k, &a);
  if (st != ATTNGEN_OK)
    fail = case_failf(r, "head-major K/V: %s (%s)", attngen_status_name(st), attngen_last_error());
  else if (memcmp(o.base, f->o.base, o.total * sizeof(float)) != 0)
    fail = case_failf(r, "head-major K/V (no repack) and the case's layout give different outputs");
  attngen_plan *p_case = NULL, *p_head = NULL;
  if (!fail && (attngen_plan_create(k, &f->a, 1, &p_case) || attngen_plan_create(k, &a, 1, &p_head)))
    fail = case_failf(r, "plan: %s", attngen_last_error());
  if (!fail) {
    const int min_q = k->work.pack_kv_min_q;
    const int head_major = f->ks.seq == D && f->vs.seq == D; /* rows already contiguous per head: kept in place */
    const size_t copy = 2 * (size_t)B * KVH * (size_t)c->kv_len * D * sizeof(float);
    const size_t extra = attngen_plan_scratch_bytes(p_case) - attngen_plan_scratch_bytes(p_head);
    if (typed) { /* a prefill converts any other type to an fp32 copy, whatever the layout: the same memory */
      if (extra != 0)
        fail = case_failf(r, "%s prefill: the plan holds %zu more bytes for the case's layout than for head-major K/V",
                          attngen_kv_dtype_name(t), extra);
      else if (attngen_plan_scratch_bytes(p_head) < copy)
        fail = case_failf(r, "%s prefill: the plan holds %zu bytes, less than the fp32 copy of K/V (%zu)",
                          attngen_kv_dtype_name(t), attngen_plan_scratch_bytes(p_head), copy);
    } else if (min_q > 0 && c->q_len >= min_q && !head_major && extra < copy)
      fail = case_failf(r, "q_len %d >= pack_kv_min_q %d but the plan holds %zu extra bytes, not the %zu of a K/V copy",
                        c->q_len, min_q, extra, copy);
    if (!typed && (min_q <= 0 || c->q_len < min_q || head_major) && extra != 0)
      fail = case_failf(r, "no K/V repack expected (q_len %d, pack_kv_min_q %d) but the plan holds %zu extra bytes",
                        c->q_len, min_q, extra);
  }
  attngen_plan_destroy(p_case);
  attngen_plan_destroy(p_head);
  fbuf_free(&o);
  kvt_free(&h);
  return fail;
}

/* The decode head split follows the kernel's numbers (work.head_split_min_*, chosen by the plan): with thresholds
 * every part meets, a plan on more threads than items cuts each item's kv heads into ceil(threads / items) parts (at
 * most one per kv head); with both 0 it never cuts. The cut output is bit-identical to attngen_run's. */
static int check_head_split(const test_case *c, const attngen_kernel *k, const fixture *f, const fbuf *o0,
                            case_result *r) {
  enum { NTHREADS = 4 };
  attngen_kernel never = *k, always = *k;
  never.work.head_split_min_bytes = never.work.head_split_min_flop = 0;
  always.work.head_split_min_bytes = 1;
  always.work.head_split_min_flop = 0;
  attngen_plan *p_never = NULL, *p_always = NULL;
  int fail = 0;
  if (attngen_plan_create(&never, &f->a, NTHREADS, &p_never) ||
      attngen_plan_create(&always, &f->a, NTHREADS, &p_always))
    fail = case_failf(r, "head split plan: %s", attngen_last_error());
  if (!fail) {
    const size_t items = attngen_plan_items(p_never), kvh = (size_t)c->shape.kv_heads;
    size_t parts = items < NTHREADS ? (NTHREADS + items - 1) / items : 1;
    if (parts > kvh) parts = kvh;
    const size_t part_heads = (kvh + parts - 1) / parts, want = items * ((kvh + part_heads - 1) / part_heads);
    if (attngen_plan_items(p_always) != want)
      fail = case_failf(r, "head split at every part size: %zu items on %d threads, expected %zu (%zu items of all "
                        "%zu kv heads without it)", attngen_plan_items(p_always), NTHREADS, want, items, kvh);
  }
  attngen_plan_destroy(p_never);
  attngen_plan_destroy(p_always);
  fbuf o;
  if (!fail && fbuf_clone(&o, o0)) return case_failf(r, "out of memory");
  if (!fail) {
    attngen_args a = f->a;
    a.o = o.p;
    a.lse = NULL;
    const int st = attngen_run_parallel(&always, &a, NTHREADS);
    if (st != ATTNGEN_OK)
      fail = case_failf(r, "head split run: %s (%s)", attngen_status_name(st), attngen_last_error());
    else if (memcmp(o.base, f->o.base, o.total * sizeof(float)) != 0)
      fail = case_failf(r, "the output cut by kv heads on %d threads differs from attngen_run's", NTHREADS);
    fbuf_free(&o);
  }
  return fail;
}

static int run_threads(const test_case *c, case_result *r) {
  attngen_kernel k;
  if (get_kernel(c, &k, r)) return 1;
  fixture f;
  double *ref = NULL, *ref_lse = NULL;
  if (fixture_init(&f, c, 0) || compute_ref(&f, &ref, &ref_lse)) {
    free(ref);
    free(ref_lse);
    fixture_free(&f);
    return case_failf(r, "%s", f.err[0] ? f.err : "out of memory");
  }
  /* the pristine (sentinel-only) output buffers every variant starts from */
  fbuf o0, l0;
  int fail = fbuf_clone(&o0, &f.o) || fbuf_clone(&l0, &f.lse);
  if (fail) case_failf(r, "out of memory");
  int st = fail ? ATTNGEN_OK : attngen_run(&k, &f.a);
  if (!fail && st != ATTNGEN_OK) fail = case_failf(r, "attngen_run: %s (%s)", attngen_status_name(st), attngen_last_error());
  if (!fail) fail = check_output(c, &f, ref, ref_lse, r);
  static const struct {
    const char *what;
    int nthreads, plan_mode; /* plan_mode -1: attngen_run_parallel */
  } variants[] = {
      {"attngen_run_parallel(1)", 1, -1}, {"attngen_run_parallel(2)", 2, -1}, {"attngen_run_parallel(3)", 3, -1},
      {"plan(1 thread, items in reverse)", 1, 0}, {"plan(2 threads, blocks)", 2, 1},
      {"plan(3 threads, interleaved items)", 3, 2}, {"plan(3 threads, items in reverse on thread 0)", 3, 0},
  };
  for (size_t vi = 0; !fail && vi < sizeof variants / sizeof variants[0]; vi++) {
    fbuf o, l;
    if (fbuf_clone(&o, &o0) || fbuf_clone(&l, &l0)) {
      fail = case_failf(r, "out of memory");
      break;
    }
    attngen_args a = f.a;
    a.o = o.p;
    a.lse = c->want_lse ? l.p : NULL;
    if (variants[vi].plan_mode < 0) {
      st = attngen_run_parallel(&k, &a, variants[vi].nthreads);
      if (st != ATTNGEN_OK)
        fail = case_failf(r, "%s: %s (%s)", variants[vi].what, attngen_status_name(st), attngen_last_error());
    } else {
      fail = run_plan(&k, &a, variants[vi].nthreads, variants[vi].plan_mode, r);
    }
    if (!fail && memcmp(o.base, f.o.base, o.total * sizeof(float)) != 0) {
      size_t t = 0;
      while (memcmp(&o.base[t], &f.o.base[t], sizeof(float)) == 0) t++;
      fail = case_failf(r, "%s: output differs from attngen_run at float offset %td: %.9g vs %.9g", variants[vi].what,
                   (ptrdiff_t)t - GUARD, (double)o.base[t], (double)f.o.base[t]);
    }
    if (!fail && memcmp(l.base, f.lse.base, l.total * sizeof(float)) != 0) {
      size_t t = 0;
      while (memcmp(&l.base[t], &f.lse.base[t], sizeof(float)) == 0) t++;
      fail = case_failf(r, "%s: lse differs from attngen_run at offset %td: %.9g vs %.9g", variants[vi].what,
                   (ptrdiff_t)t - GUARD, (double)l.base[t], (double)f.lse.base[t]);
    }
    fbuf_free(&o);
    fbuf_free(&l);
  }
  if (!fail && c->shape.phase == ATTNGEN_PHASE_PREFILL) fail = check_repack(c, &k, &f, &o0, r);
  if (!fail && c->shape.phase == ATTNGEN_PHASE_DECODE && k.work.kv_heads_per_item == 0)
    fail = check_head_split(c, &k, &f, &o0, r);
  fbuf_free(&o0);
  fbuf_free(&l0);
  free(ref);
  free(ref_lse);
  fixture_free(&f);
  return fail;
}

/* ------------------------------------------------------------------------------------------------ */
/* CK_ERRORS */

typedef struct {
  fixture *f;
  fbuf o0, l0; /* pristine copies */
  case_result *r;
  int fail;
} err_ctx;

static int status_in(int st, const int *want, int nwant) {
  for (int i = 0; i < nwant; i++)
    if (st == want[i]) return 1;
  return 0;
}

/* want: list terminated by 1 (no status is positive); an empty list (just 1) accepts any error */
static void expect_status(err_ctx *x, const char *what, int st, const int *want) {
  if (x->fail) return;
  int nwant = 0;
  while (want[nwant] != 1) nwant++;
  if (st == ATTNGEN_OK || (nwant > 0 && !status_in(st, want, nwant))) {
    x->fail = case_failf(x->r, "%s: returned %s (%d), expected %s%s", what, attngen_status_name(st), st,
                    nwant ? attngen_status_name(want[0]) : "an error",
                    nwant > 1 ? " (or an equivalent code)" : "");
    return;
  }
  const char *m = attngen_last_error();
  if (!m || !m[0]) {
    x->fail = case_failf(x->r, "%s: %s but attngen_last_error() is empty", what, attngen_status_name(st));
    return;
  }
  if (memcmp(x->f->o.base, x->o0.base, x->o0.total * sizeof(float)) != 0)
    x->fail = case_failf(x->r, "%s: returned %s but wrote the output", what, attngen_status_name(st));
  else if (memcmp(x->f->lse.base, x->l0.base, x->l0.total * sizeof(float)) != 0)
    x->fail = case_failf(x->r, "%s: returned %s but wrote lse", what, attngen_status_name(st));
}

#define WANT(...) ((const int[]){__VA_ARGS__, 1})
#define ANY_ERROR ((const int[]){1})

/* The K/V fields of attngen_args, in attngen.h's order: k, v, then k_<field>, v_<field> of each encoding
 * (attngen_spec.h's ATTNGEN_KV_ENCODING_LIST: f16, bf16, i8, ...), then the scales. Field i < KV_SCALES belongs to
 * encoding i / 2; the scales to every type with scale groups. */
enum { KV_SCALES = 2 * ATTNGEN_KV_ENC_COUNT_, KV_FIELDS = KV_SCALES + 2 };
#define KV_FIELD_NAMES_(F, f, api, stored, scale_max) "k_" #f, "v_" #f,
static const char *const kv_field_names[KV_FIELDS] = {"k", "v", ATTNGEN_KV_ENCODING_LIST(KV_FIELD_NAMES_) "k_scale",
                                                      "v_scale"};
static const void **kv_field(attngen_args *a, int i) {
#define KV_FIELD_ADDRS_(F, f, api, stored, scale_max) (const void **)&a->k_##f, (const void **)&a->v_##f,
  const void **p[KV_FIELDS] = {(const void **)&a->k, (const void **)&a->v,
                               ATTNGEN_KV_ENCODING_LIST(KV_FIELD_ADDRS_)(const void **)&a->k_scale,
                               (const void **)&a->v_scale};
  return p[i];
}
static int kv_field_of(attngen_kv_dtype t, int i) {
  return i < KV_SCALES ? i / 2 == (int)attngen_kv_dtype_encoding(t) : kvt_group(t, 64) != 0;
}
/* the K (v = 0) or V (1) field the kernel of type t reads */
static const void **kv_main(attngen_args *a, attngen_kv_dtype t, int v) {
  return kv_field(a, 2 * (int)attngen_kv_dtype_encoding(t) + v);
}

/* Refusals of the storage type's fields (every type, fp32 included): a field of another type set as well ->
 * ATTNGEN_ERR_DTYPE, a field of the type NULL -> ATTNGEN_ERR_NULL, each with a message naming the field; a cache of
 * another type instead; the scales' strides and aliasing; the threaded entries; selections of an unknown type or a
 * head_dim the type's groups do not divide; then the typed append and step (kv_types.c). Nothing is written. */
static void kv_type_errors(err_ctx *x, const test_case *c, const attngen_kernel *k, const attngen_args *base) {
  const attngen_kv_dtype t = c->shape.kv_dtype;
  const int g = kvt_group(t, c->shape.head_dim);
  fixture *f = x->f;
  attngen_args a;
  char what[200];
  if (t == ATTNGEN_KV_F32) { /* a zero-initialized shape means an fp32 cache */
    attngen_shape z;
    attngen_kernel kz;
    memset(&z, 0, sizeof z);
    z.heads = c->shape.heads, z.kv_heads = c->shape.kv_heads, z.head_dim = c->shape.head_dim;
    z.mask = c->shape.mask, z.phase = c->shape.phase;
    const int st = c->table ? attngen_select(c->table, &z, &kz) : attngen_select_generic(&z, c->isa, &kz);
    if (!x->fail && (st != ATTNGEN_OK || kz.info->kv_dtype != ATTNGEN_KV_F32 || kz.shape.kv_dtype != ATTNGEN_KV_F32))
      x->fail = case_failf(x->r, "a zero-initialized attngen_shape: %s, kernel %s (want an fp32 one)",
                           attngen_status_name(st), st ? attngen_last_error() : kz.info->name);
  }
  { /* attngen_args_set_kv: exactly the type's fields set, every other one cleared; refusals change nothing */
    attngen_args before;
    a = *base;
    for (int i = 0; i < KV_FIELDS; i++) *kv_field(&a, i) = f->q.p;
    if (attngen_args_set_kv(&a, t, f->k.p, f->v.p, g ? f->q.p : NULL, g ? f->q.p : NULL) != ATTNGEN_OK)
      x->fail = case_failf(x->r, "attngen_args_set_kv(%s): %s", attngen_kv_dtype_name(t), attngen_last_error());
    for (int i = 0; i < KV_FIELDS && !x->fail; i++)
      if ((*kv_field(&a, i) != NULL) != kv_field_of(t, i))
        x->fail = case_failf(x->r, "attngen_args_set_kv(%s) left %s %s", attngen_kv_dtype_name(t), kv_field_names[i],
                             *kv_field(&a, i) ? "set" : "NULL");
    if (!x->fail && (*kv_main(&a, t, 0) != f->k.p || *kv_main(&a, t, 1) != f->v.p))
      x->fail = case_failf(x->r, "attngen_args_set_kv(%s): K/V not the pointers given", attngen_kv_dtype_name(t));
    memcpy(&before, &a, sizeof before); /* padding included: memcmp below */
    expect_status(x, "attngen_args_set_kv(not a type)",
                  attngen_args_set_kv(&a, (attngen_kv_dtype)ATTNGEN_KV_COUNT_, f->k.p, f->v.p, NULL, NULL),
                  WANT(ATTNGEN_ERR_DTYPE));
    if (!g)
      expect_status(x, "attngen_args_set_kv(scales for a type without)",
                    attngen_args_set_kv(&a, t, f->k.p, f->v.p, f->q.p, NULL), WANT(ATTNGEN_ERR_DTYPE));
    expect_status(x, "attngen_args_set_kv(NULL)", attngen_args_set_kv(NULL, t, f->k.p, f->v.p, NULL, NULL),
                  WANT(ATTNGEN_ERR_NULL));
    if (!x->fail && memcmp(&a, &before, sizeof a))
      x->fail = case_failf(x->r, "a refused attngen_args_set_kv changed the args");
  }
  for (int i = 0; i < KV_FIELDS && !x->fail; i++) {
    a = *base;
    const void **fp = kv_field(&a, i);
    int st;
    if (kv_field_of(t, i)) {
      *fp = NULL;
      snprintf(what, sizeof what, "%s kernel, %s = NULL", attngen_kv_dtype_name(t), kv_field_names[i]);
      st = attngen_run(k, &a);
      expect_status(x, what, st, WANT(ATTNGEN_ERR_NULL));
    } else {
      *fp = f->q.p; /* any readable memory: a refused call reads nothing */
      snprintf(what, sizeof what, "%s kernel, %s set as well", attngen_kv_dtype_name(t), kv_field_names[i]);
      st = attngen_run(k, &a);
      expect_status(x, what, st, WANT(ATTNGEN_ERR_DTYPE));
    }
    if (!x->fail && !kvt_names_field(attngen_last_error(), kv_field_names[i]))
      x->fail = case_failf(x->r, "%s: the message does not name %s: \"%s\"", what, kv_field_names[i], attngen_last_error());
  }
  /* the K/V of another type in place of the kernel's: ATTNGEN_ERR_DTYPE (the wrong type is named before the
   * kernel's missing fields) */
  a = *base;
  *kv_main(&a, t, 0) = NULL, *kv_main(&a, t, 1) = NULL, a.k_scale = a.v_scale = NULL;
  if (t == ATTNGEN_KV_F32) a.k_f16 = (const attngen_f16 *)(const void *)f->k.p, a.v_f16 = (const attngen_f16 *)(const void *)f->v.p;
  else a.k = f->k.p, a.v = f->v.p;
  snprintf(what, sizeof what, "%s kernel given only a %s cache", attngen_kv_dtype_name(t), t == ATTNGEN_KV_F32 ? "f16" : "f32");
  expect_status(x, what, attngen_run(k, &a), WANT(ATTNGEN_ERR_DTYPE));
  /* the threaded entries check the same */
  a = *base;
  a.v_bf16 = t == ATTNGEN_KV_BF16 ? NULL : (const attngen_bf16 *)(const void *)f->q.p;
  expect_status(x, t == ATTNGEN_KV_BF16 ? "attngen_run_parallel(v_bf16 = NULL)" : "attngen_run_parallel(v_bf16 set)",
                attngen_run_parallel(k, &a, 2), t == ATTNGEN_KV_BF16 ? WANT(ATTNGEN_ERR_NULL) : WANT(ATTNGEN_ERR_DTYPE));
  {
    attngen_plan *plan = NULL;
    a = *base;
    a.k_i8 = g ? NULL : (const int8_t *)f->q.p;
    expect_status(x, g ? "attngen_plan_create(k_i8 = NULL)" : "attngen_plan_create(k_i8 set)", attngen_plan_create(k, &a, 2, &plan),
                  g ? WANT(ATTNGEN_ERR_NULL) : WANT(ATTNGEN_ERR_DTYPE));
    if (plan) attngen_plan_destroy(plan);
  }
  if (g) { /* the scales: strides, overlap with the outputs */
    a = *base;
    a.k_scale_stride = f->kss, a.k_scale_stride.seq = -1;
    expect_status(x, "k_scale_stride.seq < 0", attngen_run(k, &a), WANT(ATTNGEN_ERR_STRIDE));
    a = *base;
    a.v_scale_stride = f->vss, a.v_scale_stride.batch = -1;
    expect_status(x, "v_scale_stride.batch < 0", attngen_run(k, &a), WANT(ATTNGEN_ERR_STRIDE));
    attngen_plan *plan = NULL;
    a = *base;
    a.o = (float *)(uintptr_t)base->k_scale;
    expect_status(x, "o == k_scale", attngen_plan_create(k, &a, 1, &plan), WANT(ATTNGEN_ERR_ALIAS));
    if (plan) attngen_plan_destroy(plan), plan = NULL;
    a = *base;
    a.lse = (float *)(uintptr_t)base->v_scale;
    expect_status(x, "lse == v_scale", attngen_plan_create(k, &a, 1, &plan), WANT(ATTNGEN_ERR_ALIAS));
    if (plan) attngen_plan_destroy(plan);
  }
  /* selection: an unknown type; a grouped type on a head_dim its groups do not divide */
  {
    attngen_kernel out;
    attngen_shape s2 = c->shape;
    s2.kv_dtype = (attngen_kv_dtype)ATTNGEN_KV_COUNT_;
    expect_status(x, "attngen_select_generic(kv_dtype = ATTNGEN_KV_COUNT_)", attngen_select_generic(&s2, c->isa, &out),
                  ANY_ERROR);
    s2.kv_dtype = (attngen_kv_dtype)-1;
    expect_status(x, "attngen_select(kv_dtype = -1)", attngen_select(c->table, &s2, &out), ANY_ERROR);
    s2 = c->shape;
    s2.kv_dtype = ATTNGEN_KV_INT8_G64;
    s2.head_dim = 96;
    expect_status(x, "attngen_select_generic(int8_g64, head_dim 96)", attngen_select_generic(&s2, c->isa, &out),
                  WANT(ATTNGEN_ERR_UNSUPPORTED));
    s2.kv_dtype = ATTNGEN_KV_INT8_G32;
    s2.head_dim = 48;
    expect_status(x, "attngen_select_generic(int8_g32, head_dim 48)", attngen_select_generic(&s2, c->isa, &out),
                  WANT(ATTNGEN_ERR_UNSUPPORTED));
    if (c->table) { /* a type the table lacks: no specialized kernel, and attngen_select falls back to the generic one */
      attngen_kv_dtype other = ATTNGEN_KV_COUNT_;
      for (int u = 0; u < ATTNGEN_KV_COUNT_ && other == ATTNGEN_KV_COUNT_; u++) {
        int have = 0;
        for (int i = 0; i < c->table->count; i++) have |= c->table->kernels[i].kv_dtype == (attngen_kv_dtype)u;
        if (!have && kvt_fits((attngen_kv_dtype)u, c->shape.head_dim)) other = (attngen_kv_dtype)u;
      }
      if (other != ATTNGEN_KV_COUNT_) {
        s2 = c->shape;
        s2.kv_dtype = other;
        snprintf(what, sizeof what, "attngen_select_specialized(a %s cache, which the table lacks)", attngen_kv_dtype_name(other));
        expect_status(x, what, attngen_select_specialized(c->table, &s2, c->isa, &out), WANT(ATTNGEN_ERR_UNSUPPORTED));
        int st = attngen_select(c->table, &s2, &out);
        if (!x->fail && (st != ATTNGEN_OK || out.info->kv_dtype != other || out.shape.kv_dtype != other || out.info->heads))
          x->fail = case_failf(x->r, "attngen_select(a %s cache the table lacks): %s, %s (want the generic %s kernel)",
                               attngen_kv_dtype_name(other), attngen_status_name(st), st ? attngen_last_error() : out.info->name,
                               attngen_kv_dtype_name(other));
      }
    }
  }
  if (!x->fail && kvt_append_errors(k, x->r)) x->fail = 1;
}

static int run_errors(const test_case *c, case_result *r) {
  attngen_kernel k;
  if (get_kernel(c, &k, r)) return 1;
  fixture f;
  err_ctx x = {&f, {0}, {0}, r, 0};
  if (fixture_init(&f, c, 16) || fbuf_clone(&x.o0, &f.o) || fbuf_clone(&x.l0, &f.lse)) {
    case_failf(r, "%s", f.err[0] ? f.err : "out of memory");
    fixture_free(&f);
    fbuf_free(&x.o0);
    fbuf_free(&x.l0);
    return 1;
  }
  const attngen_args base = f.a;
  const attngen_shape *sh = &c->shape;
  attngen_args a;
  const int pad = mask_reads_lens(sh->mask);

  /* attngen_run with one mutation of the valid args */
#define RUN_WITH(what, mutation, want)                                                                               \
  do {                                                                                                               \
    a = base;                                                                                                        \
    mutation;                                                                                                        \
    expect_status(&x, what, attngen_run(&k, &a), want);                                                              \
  } while (0)

  expect_status(&x, "attngen_run(NULL kernel)", attngen_run(NULL, &base), WANT(ATTNGEN_ERR_NULL));
  expect_status(&x, "attngen_run(NULL args)", attngen_run(&k, NULL), WANT(ATTNGEN_ERR_NULL));
  RUN_WITH("q = NULL", a.q = NULL, WANT(ATTNGEN_ERR_NULL));
  RUN_WITH("k = NULL", *kv_main(&a, sh->kv_dtype, 0) = NULL, WANT(ATTNGEN_ERR_NULL));
  RUN_WITH("v = NULL", *kv_main(&a, sh->kv_dtype, 1) = NULL, WANT(ATTNGEN_ERR_NULL));
  RUN_WITH("o = NULL", a.o = NULL, WANT(ATTNGEN_ERR_NULL));
  RUN_WITH("batch = 0", a.batch = 0, WANT(ATTNGEN_ERR_SIZE));
  RUN_WITH("batch = -1", a.batch = -1, WANT(ATTNGEN_ERR_SIZE));
  RUN_WITH("q_len = 0", a.q_len = 0, WANT(ATTNGEN_ERR_SIZE));
  RUN_WITH("q_len = -3", a.q_len = -3, WANT(ATTNGEN_ERR_SIZE));
  RUN_WITH("kv_len = 0", a.kv_len = 0, WANT(ATTNGEN_ERR_SIZE));
  RUN_WITH("kv_len = -1", a.kv_len = -1, WANT(ATTNGEN_ERR_SIZE));
  RUN_WITH("kv_capacity = -1", a.kv_capacity = -1, WANT(ATTNGEN_ERR_SIZE));
  RUN_WITH("kv_len > kv_capacity", (a.kv_capacity = base.kv_len, a.kv_len = base.kv_len + 1),
           WANT(ATTNGEN_ERR_CAPACITY));
  if (sh->phase == ATTNGEN_PHASE_DECODE) /* "too large" (SIZE) or "not this kernel's shape" (SHAPE): both fit */
    RUN_WITH("decode q_len = ATTNGEN_DECODE_MAX_Q + 1", a.q_len = ATTNGEN_DECODE_MAX_Q + 1,
             WANT(ATTNGEN_ERR_SIZE, ATTNGEN_ERR_SHAPE));
  if (pad) {
    RUN_WITH("kv_lens = NULL with a padding mask", a.kv_lens = NULL, WANT(ATTNGEN_ERR_LENGTHS));
    int32_t bad[64];
    memcpy(bad, base.kv_lens, sizeof(int32_t) * (size_t)base.batch);
    bad[base.batch - 1] = -1;
    RUN_WITH("kv_lens[last] = -1", a.kv_lens = bad, WANT(ATTNGEN_ERR_LENGTHS));
    bad[base.batch - 1] = base.kv_len + 1;
    RUN_WITH("kv_lens[last] = kv_len + 1", a.kv_lens = bad, WANT(ATTNGEN_ERR_LENGTHS));
  }
  /* attention features: a value for a kernel without the feature, a kernel with one and no or a bad value */
  const unsigned ft = sh->features;
  if (ft & ATTNGEN_ATTN_WINDOW) {
    RUN_WITH("window = -1", a.window = -1, WANT(ATTNGEN_ERR_SIZE));
    RUN_WITH("sink_tokens = -1", a.sink_tokens = -1, WANT(ATTNGEN_ERR_SIZE));
  } else {
    RUN_WITH("window = 8 without the window feature", a.window = 8, WANT(ATTNGEN_ERR_SHAPE));
  }
  if (ft & ATTNGEN_ATTN_SOFTCAP) {
    RUN_WITH("softcap = -1", a.softcap = -1.0f, WANT(ATTNGEN_ERR_SIZE));
    RUN_WITH("softcap = inf", a.softcap = INFINITY, WANT(ATTNGEN_ERR_SIZE));
  } else {
    RUN_WITH("softcap = 30 without the softcap feature", a.softcap = 30.0f, WANT(ATTNGEN_ERR_SHAPE));
  }
  if (ft & ATTNGEN_ATTN_SINKS) RUN_WITH("sinks = NULL", a.sinks = NULL, WANT(ATTNGEN_ERR_NULL));
  else RUN_WITH("sinks without the sinks feature", a.sinks = f.q.p, WANT(ATTNGEN_ERR_SHAPE));
  if (!(ft & ATTNGEN_ATTN_ALIBI))
    RUN_WITH("alibi_slopes without the alibi feature", a.alibi_slopes = f.q.p, WANT(ATTNGEN_ERR_SHAPE));
  { /* the features' shapes and values, on generic kernels (no table to give values) */
    attngen_kernel gk;
    attngen_shape gs = *sh;
    float slopes[4];
    gs.features = 1u << 30;
    expect_status(&x, "attngen_select_generic(unknown feature bit)", attngen_select_generic(&gs, ATTNGEN_ISA_SCALAR, &gk),
                  WANT(ATTNGEN_ERR_SHAPE));
    gs.features = ATTNGEN_ATTN_WINDOW, gs.mask = ATTNGEN_MASK_PADDING;
    expect_status(&x, "attngen_select_generic(window with the padding mask)",
                  attngen_select_generic(&gs, ATTNGEN_ISA_SCALAR, &gk), WANT(ATTNGEN_ERR_UNSUPPORTED));
    a = base;
    a.window = a.sink_tokens = 0, a.softcap = 0.0f, a.sinks = a.alibi_slopes = NULL;
    static const struct { unsigned bit; int want; const char *what; } none[] = {
        {ATTNGEN_ATTN_SOFTCAP, ATTNGEN_ERR_SIZE, "generic soft-cap kernel without softcap"},
        {ATTNGEN_ATTN_ALIBI, ATTNGEN_ERR_NULL, "generic ALiBi kernel without slopes"},
        {ATTNGEN_ATTN_SINKS, ATTNGEN_ERR_NULL, "generic sinks kernel without sinks"},
        {ATTNGEN_ATTN_WINDOW, ATTNGEN_ERR_SIZE, "generic window kernel without window"}}; /* causal masks only */
    for (int i = 0; i < 4; i++) {
      gs = *sh;
      gs.features = none[i].bit;
      if (attngen_select_generic(&gs, ATTNGEN_ISA_SCALAR, &gk) == ATTNGEN_OK)
        expect_status(&x, none[i].what, attngen_run(&gk, &a), WANT(none[i].want));
    }
    expect_status(&x, "attngen_alibi_slopes(heads 0)", attngen_alibi_slopes(0, 8.0, slopes), WANT(ATTNGEN_ERR_SIZE));
    expect_status(&x, "attngen_alibi_slopes(max_bias 0)", attngen_alibi_slopes(4, 0.0, slopes), WANT(ATTNGEN_ERR_SIZE));
    expect_status(&x, "attngen_alibi_slopes(out NULL)", attngen_alibi_slopes(4, 8.0, NULL), WANT(ATTNGEN_ERR_NULL));
  }
  RUN_WITH("q_stride.head < 0", (a.q_stride = f.qs, a.q_stride.head = -(ptrdiff_t)sh->head_dim),
           WANT(ATTNGEN_ERR_STRIDE));
  RUN_WITH("k_stride.seq < 0", (a.k_stride = f.ks, a.k_stride.seq = -f.ks.seq), WANT(ATTNGEN_ERR_STRIDE));
  RUN_WITH("o_stride.batch < 0", (a.o_stride = f.os, a.o_stride.batch = -1), WANT(ATTNGEN_ERR_STRIDE));
  if (sh->heads > 1)
    RUN_WITH("o_stride.head = head_dim - 1 (output heads overlap)",
             (a.o_stride = f.os, a.o_stride.head = sh->head_dim - 1), WANT(ATTNGEN_ERR_STRIDE));
  if (base.q_len > 1)
    RUN_WITH("o_stride.seq = heads * head_dim - 1 (output rows overlap)",
             (a.o_stride = f.os, a.o_stride.seq = (ptrdiff_t)sh->heads * sh->head_dim - 1), WANT(ATTNGEN_ERR_STRIDE));
  if (base.batch > 1)
    RUN_WITH("o_stride.batch = 1 (output sequences overlap)", (a.o_stride = f.os, a.o_stride.batch = 1),
             WANT(ATTNGEN_ERR_STRIDE));

  /* the optional shape fields of args disagree with the kernel */
  RUN_WITH("args.heads != kernel heads", a.heads = sh->heads + sh->kv_heads, WANT(ATTNGEN_ERR_SHAPE));
  RUN_WITH("args.head_dim != kernel head_dim", a.head_dim = sh->head_dim + 1, WANT(ATTNGEN_ERR_SHAPE));
  RUN_WITH("args.kv_heads != kernel kv_heads", a.kv_heads = sh->kv_heads == sh->heads ? 1 : sh->heads,
           WANT(ATTNGEN_ERR_SHAPE));
  if (c->table) {
    /* selection: a shape the table lacks; and attngen_select picks this table's kernel family */
    attngen_shape s2 = *sh;
    s2.head_dim = sh->head_dim + 1;
    attngen_kernel out;
    expect_status(&x, "attngen_select_specialized(shape not in table)",
                  attngen_select_specialized(c->table, &s2, c->isa, &out), WANT(ATTNGEN_ERR_UNSUPPORTED));
    int st = attngen_select(c->table, sh, &out);
    if (!x.fail && st != ATTNGEN_OK)
      x.fail = case_failf(r, "attngen_select(table shape): %s (%s)", attngen_status_name(st), attngen_last_error());
    if (!x.fail && (!out.info || out.info->heads != sh->heads || out.info->kv_heads != sh->kv_heads ||
                    out.info->head_dim != sh->head_dim || out.info->mask != sh->mask || out.info->phase != sh->phase))
      x.fail = case_failf(r, "attngen_select(table shape) did not pick a specialized kernel of that shape (got %s)",
                     out.info ? out.info->name : "NULL");
    if (!x.fail && !((attngen_cpu_isas() >> out.info->isa) & 1u))
      x.fail = case_failf(r, "attngen_select picked %s, whose ISA this CPU lacks", out.info->name);
  }
  /* generic selection errors */
  {
    attngen_kernel out;
    attngen_shape s2 = *sh;
    s2.head_dim = ATTNGEN_MAX_HEAD_DIM + 1;
    expect_status(&x, "attngen_select_generic(head_dim 513)", attngen_select_generic(&s2, c->isa, &out),
                  WANT(ATTNGEN_ERR_UNSUPPORTED));
    s2 = *sh;
    s2.head_dim = 0;
    expect_status(&x, "attngen_select_generic(head_dim 0)", attngen_select_generic(&s2, c->isa, &out),
                  WANT(ATTNGEN_ERR_SIZE));
    s2 = *sh;
    s2.heads = 0;
    expect_status(&x, "attngen_select_generic(heads 0)", attngen_select_generic(&s2, c->isa, &out),
                  WANT(ATTNGEN_ERR_SIZE));
    s2 = *sh;
    s2.heads = 6;
    s2.kv_heads = 4;
    expect_status(&x, "attngen_select_generic(heads % kv_heads != 0)", attngen_select_generic(&s2, c->isa, &out),
                  WANT(ATTNGEN_ERR_UNSUPPORTED));
    expect_status(&x, "attngen_select_generic(NULL shape)", attngen_select_generic(NULL, c->isa, &out),
                  WANT(ATTNGEN_ERR_NULL));
    unsigned isas = attngen_cpu_isas();
    for (int i = 0; i < ATTNGEN_ISA_COUNT_; i++)
      if (!((isas >> i) & 1u)) {
        char what[96];
        snprintf(what, sizeof what, "attngen_select_generic on %s, which this CPU lacks", attngen_isa_name((attngen_isa)i));
        expect_status(&x, what, attngen_select_generic(sh, (attngen_isa)i, &out), ANY_ERROR);
      }
  }
  /* the threaded entries validate too */
  a = base;
  a.q = NULL;
  expect_status(&x, "attngen_run_parallel(q = NULL)", attngen_run_parallel(&k, &a, 2), WANT(ATTNGEN_ERR_NULL));
  a = base;
  a.kv_len = 0;
  expect_status(&x, "attngen_run_parallel(kv_len = 0)", attngen_run_parallel(&k, &a, 3), WANT(ATTNGEN_ERR_SIZE));
  {
    attngen_plan *plan = NULL;
    a = base;
    a.o = NULL;
    expect_status(&x, "attngen_plan_create(o = NULL)", attngen_plan_create(&k, &a, 2, &plan), WANT(ATTNGEN_ERR_NULL));
    if (plan) attngen_plan_destroy(plan);
  }
  if (!x.fail) {
    const char *n = attngen_status_name(ATTNGEN_ERR_STRIDE);
    if (!n || !n[0]) x.fail = case_failf(r, "attngen_status_name(ATTNGEN_ERR_STRIDE) is empty");
  }
  /* sizes whose arithmetic would overflow, unbounded thread counts, aliasing outputs.
   * Asked through attngen_plan_create, which writes nothing: a wrong acceptance never runs a kernel on them.
   * (tests/fuzz_args.c, make test-fuzz, has these and more under ASan + UBSan.) */
#define PLAN_WITH(what, mutation, nthreads, want)                                                                    \
  do {                                                                                                               \
    attngen_plan *plan_ = NULL;                                                                                      \
    a = base;                                                                                                        \
    mutation;                                                                                                        \
    int st_ = attngen_plan_create(&k, &a, nthreads, &plan_);                                                         \
    if (plan_) attngen_plan_destroy(plan_);                                                                          \
    expect_status(&x, what, st_, want);                                                                              \
  } while (0)
  PLAN_WITH("kv_len = kv_capacity = INT_MAX", (a.kv_len = INT_MAX, a.kv_capacity = INT_MAX), 1, WANT(ATTNGEN_ERR_SIZE));
  PLAN_WITH("kv_capacity = INT_MAX", a.kv_capacity = INT_MAX, 1, WANT(ATTNGEN_ERR_SIZE));
  PLAN_WITH("kv_len = INT_MAX (kv_capacity 0)", (a.kv_len = INT_MAX, a.kv_capacity = 0), 1, WANT(ATTNGEN_ERR_SIZE));
  PLAN_WITH("q_len = INT_MAX", a.q_len = INT_MAX, 1, WANT(ATTNGEN_ERR_SIZE));
  PLAN_WITH("o batch stride = PTRDIFF_MAX / 2 + 1", (a.o_stride = f.os, a.o_stride.batch = PTRDIFF_MAX / 2 + 1), 1,
            WANT(ATTNGEN_ERR_SIZE));
  PLAN_WITH("q seq stride = PTRDIFF_MAX", (a.q_stride = f.qs, a.q_stride.seq = PTRDIFF_MAX), 1, WANT(ATTNGEN_ERR_SIZE));
  PLAN_WITH("k batch stride = PTRDIFF_MAX", (a.k_stride = f.ks, a.k_stride.batch = PTRDIFF_MAX), 1,
            WANT(ATTNGEN_ERR_SIZE));
  PLAN_WITH("attngen_plan_create(nthreads = 1 << 20)", (void)0, 1 << 20, WANT(ATTNGEN_ERR_SIZE));
  PLAN_WITH("attngen_plan_create(nthreads = ATTNGEN_MAX_THREADS + 1)", (void)0, ATTNGEN_MAX_THREADS + 1,
            WANT(ATTNGEN_ERR_SIZE));
  PLAN_WITH("lse inside o", a.lse = f.o.p + 1, 1, WANT(ATTNGEN_ERR_ALIAS));
  PLAN_WITH("o == q", a.o = (float *)(uintptr_t)base.q, 1, WANT(ATTNGEN_ERR_ALIAS));
  PLAN_WITH("o == k", a.o = (float *)(uintptr_t)*kv_main(&a, sh->kv_dtype, 0), 1, WANT(ATTNGEN_ERR_ALIAS));
  PLAN_WITH("o inside v",
            a.o = (float *)(uintptr_t)((const char *)*kv_main(&a, sh->kv_dtype, 1) + kvt_bytes(sh->kv_dtype)), 1,
            WANT(ATTNGEN_ERR_ALIAS));
  PLAN_WITH("lse == q", a.lse = (float *)(uintptr_t)base.q, 1, WANT(ATTNGEN_ERR_ALIAS));
#undef PLAN_WITH
  { /* an ISA value outside the enum is refused (it is used as a shift count) */
    attngen_kernel out;
    expect_status(&x, "attngen_select_specialized(isa = 33)",
                  attngen_select_specialized(c->table, sh, (attngen_isa)33, &out), WANT(ATTNGEN_ERR_UNSUPPORTED));
    if (!x.fail && !strstr(attngen_last_error(), "33"))
      x.fail = case_failf(r, "attngen_select_specialized(isa = 33): message \"%s\" does not name the value",
                     attngen_last_error());
  }
  /* an args shape error shows only the fields the caller set */
  RUN_WITH("args.heads wrong, kv_heads and head_dim unset", (a.heads = sh->heads + sh->kv_heads, a.kv_heads = 0,
                                                              a.head_dim = 0), WANT(ATTNGEN_ERR_SHAPE));
  if (!x.fail && (strstr(attngen_last_error(), "kv0") || strstr(attngen_last_error(), " d0")))
    x.fail = case_failf(r, "args shape error shows unset fields as 0: \"%s\"", attngen_last_error());
  kv_type_errors(&x, c, &k, &base);
  /* and the untouched args still work */
  if (!x.fail) {
    int st = attngen_run(&k, &base);
    if (st != ATTNGEN_OK)
      x.fail = case_failf(r, "valid args after the error checks: %s (%s)", attngen_status_name(st), attngen_last_error());
  }
#undef RUN_WITH
  fbuf_free(&x.o0);
  fbuf_free(&x.l0);
  fixture_free(&f);
  return x.fail;
}

/* ------------------------------------------------------------------------------------------------ */
/* CK_ALLOC: attngen_alloc gives 64-byte alignment, 2 MiB from 2 MiB up (huge pages; ATTNGEN_HUGEPAGES=0: 64 bytes
 * and no mark), every byte asked for, NULL with a message for 0 or an impossible size. Then the case's decode
 * kernel reads K/V from such memory (an MHA cache of 4 MiB each, head-major: the layout huge pages help most) and
 * must give the same bits as on malloc'd copies. */

static int alloc_check(case_result *r, size_t bytes, size_t align, const char *what) {
  unsigned char *p = (unsigned char *)attngen_alloc(bytes);
  if (!p) return case_failf(r, "attngen_alloc(%zu) %s: NULL (%s)", bytes, what, attngen_last_error());
  if ((uintptr_t)p % align != 0) {
    attngen_free(p);
    return case_failf(r, "attngen_alloc(%zu) %s: %p is not %zu-byte aligned", bytes, what, (void *)p, align);
  }
  memset(p, 0xA5, bytes); /* every byte is ours (ASan/valgrind would see an overrun) */
  if (p[0] != 0xA5 || p[bytes - 1] != 0xA5) {
    attngen_free(p);
    return case_failf(r, "attngen_alloc(%zu) %s: the memory does not hold what was written", bytes, what);
  }
  attngen_free(p);
  return 0;
}

static int run_alloc(const test_case *c, case_result *r) {
  const size_t mib2 = (size_t)2 << 20;
  const char *old = getenv("ATTNGEN_HUGEPAGES");
  char saved[32] = "";
  int fail = 0;
  if (old) snprintf(saved, sizeof saved, "%s", old);
  attngen_free(NULL);
  if (attngen_alloc(0) || !strstr(attngen_last_error(), "bytes is 0"))
    return case_failf(r, "attngen_alloc(0): want NULL and a message, got '%s'", attngen_last_error());
  if (attngen_alloc(SIZE_MAX - 100) || !strstr(attngen_last_error(), "attngen_alloc"))
    return case_failf(r, "attngen_alloc(SIZE_MAX - 100): want NULL and a message, got '%s'", attngen_last_error());
  unsetenv("ATTNGEN_HUGEPAGES");
  if ((fail = alloc_check(r, 1, 64, "")) || (fail = alloc_check(r, 1000, 64, "")) ||
      (fail = alloc_check(r, mib2 - 1, 64, "(below 2 MiB)")) || (fail = alloc_check(r, mib2, mib2, "(2 MiB)")) ||
      (fail = alloc_check(r, 5 * mib2 + 3, mib2, "(10 MiB + 3)")))
    goto out;
  setenv("ATTNGEN_HUGEPAGES", "0", 1);
  if ((fail = alloc_check(r, 5 * mib2 + 3, 64, "with ATTNGEN_HUGEPAGES=0"))) goto out;
  unsetenv("ATTNGEN_HUGEPAGES");

  { /* the case's decode kernel on attngen_alloc'd head-major K/V == on malloc'd copies, bit for bit */
    const attngen_shape *sh = &c->shape;
    const int kvl = (int)(mib2 * 2 / sizeof(float) / ((size_t)sh->kv_heads * (size_t)sh->head_dim));
    const size_t nkv = (size_t)kvl * (size_t)sh->kv_heads * (size_t)sh->head_dim, nq = (size_t)sh->heads * sh->head_dim;
    attngen_kernel k;
    int st = c->table ? attngen_select_specialized(c->table, sh, c->isa, &k) : attngen_select_generic(sh, c->isa, &k);
    if (st != ATTNGEN_OK) {
      fail = case_failf(r, "select %s: %s (%s)", attngen_isa_name(c->isa), attngen_status_name(st), attngen_last_error());
      goto out;
    }
    float *ka = (float *)attngen_alloc(nkv * sizeof(float)), *va = (float *)attngen_alloc(nkv * sizeof(float));
    float *km = (float *)malloc(nkv * sizeof(float)), *vm = (float *)malloc(nkv * sizeof(float));
    float *q = (float *)malloc(nq * sizeof(float)), *o1 = (float *)calloc(nq, sizeof(float)),
          *o2 = (float *)calloc(nq, sizeof(float));
    if (!ka || !va || !km || !vm || !q || !o1 || !o2) {
      fail = case_failf(r, "out of memory");
    } else {
      uint32_t s = c->seed | 1u;
      for (size_t i = 0; i < nkv; i++) {
        s = s * 1664525u + 1013904223u;
        km[i] = ka[i] = (float)(s >> 8) * 0x1p-23f - 1.0f;
        s = s * 1664525u + 1013904223u;
        vm[i] = va[i] = (float)(s >> 8) * 0x1p-23f - 1.0f;
      }
      for (size_t i = 0; i < nq; i++) q[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
      attngen_args a;
      memset(&a, 0, sizeof a);
      a.batch = 1, a.q_len = 1, a.kv_len = kvl, a.q = q, a.k = ka, a.v = va, a.o = o1;
      a.k_stride.seq = a.v_stride.seq = sh->head_dim; /* head-major */
      a.k_stride.head = a.v_stride.head = (ptrdiff_t)kvl * sh->head_dim;
      a.k_stride.batch = a.v_stride.batch = (ptrdiff_t)nkv;
      if ((st = attngen_run(&k, &a)) == ATTNGEN_OK) {
        a.k = km, a.v = vm, a.o = o2;
        st = attngen_run(&k, &a);
      }
      if (st != ATTNGEN_OK)
        fail = case_failf(r, "%s: %s (%s)", k.info->name, attngen_status_name(st), attngen_last_error());
      else if (memcmp(o1, o2, nq * sizeof(float)) != 0)
        fail = case_failf(r, "%s: output on attngen_alloc'd K/V differs from the same K/V in malloc'd memory",
                          k.info->name);
      else
        for (size_t i = 0; i < nq && !fail; i++)
          if (!(o1[i] == o1[i]) || o1[i] < -1.0f || o1[i] > 1.0f) /* a convex mix of V rows in [-1, 1] */
            fail = case_failf(r, "%s: output %zu is %g, outside V's range", k.info->name, i, (double)o1[i]);
    }
    attngen_free(ka), attngen_free(va);
    free(km), free(vm), free(q), free(o1), free(o2);
  }
out:
  if (saved[0]) setenv("ATTNGEN_HUGEPAGES", saved, 1);
  else unsetenv("ATTNGEN_HUGEPAGES");
  return fail;
}

/* ------------------------------------------------------------------------------------------------ */
/* CK_TABLE */

static int isa_compiled(attngen_isa i) { /* what a generated .c file keeps on this architecture (from the spec) */
#define COMPILED(E, name, compiled, check) if (i == ATTNGEN_ISA_##E) return compiled;
  ATTNGEN_ISA_LIST(COMPILED)
#undef COMPILED
  return 0;
}

static int run_table(const test_case *c, case_result *r) {
  const attngen_table *t = c->table;
  const xentry *xl = NULL;
  for (int i = 0; g_tables[i]; i++)
    if (g_tables[i] == t) xl = g_xlists[i];
  if (!xl) return case_failf(r, "table not registered");
  if (!t->model || !t->model[0] || !t->generator_version || !t->generator_version[0])
    return case_failf(r, "table without model name or generator version");
  if (t->abi != ATTNGEN_ABI) return case_failf(r, "table ABI %d, runtime ABI %d", t->abi, ATTNGEN_ABI);
  {
    /* a table from a generator with another ABI is refused by name, never misread */
    attngen_table other = *t;
    attngen_kernel k;
    attngen_shape sh = {t->heads, t->kv_heads, t->head_dim, ATTNGEN_MASK_NONE, ATTNGEN_PHASE_PREFILL, ATTNGEN_KV_F32, 0, 0};
    other.abi = ATTNGEN_ABI + 1;
    int st = attngen_select(&other, &sh, &k);
    if (st != ATTNGEN_ERR_UNSUPPORTED || !strstr(attngen_last_error(), "ABI"))
      return case_failf(r, "attngen_select accepted a table with ABI %d (status %d, message '%s')", other.abi, st,
                   attngen_last_error());
    st = attngen_select_specialized(&other, &sh, ATTNGEN_ISA_SCALAR, &k);
    if (st != ATTNGEN_ERR_UNSUPPORTED || !strstr(attngen_last_error(), "ABI"))
      return case_failf(r, "attngen_select_specialized accepted a table with ABI %d (status %d)", other.abi, st);
  }
  if (t->params.features.alibi_slopes) { /* the generator's slopes: the reference's rule rounded once, and the runtime's */
    float rt[ATTNGEN_MAX_HEADS];
    const double mb = t->params.features.alibi_max_bias;
    if (attngen_alibi_slopes(t->heads, mb, rt) != ATTNGEN_OK)
      return case_failf(r, "attngen_alibi_slopes(%d, %g): %s", t->heads, mb, attngen_last_error());
    for (int h = 0; h < t->heads; h++)
      if (t->params.features.alibi_slopes[h] != (float)ref_alibi_slope(t->heads, mb, h) ||
          rt[h] != t->params.features.alibi_slopes[h])
        return case_failf(r, "ALiBi slope of head %d: table %.9g, runtime %.9g, reference %.17g", h,
                          (double)t->params.features.alibi_slopes[h], (double)rt[h], ref_alibi_slope(t->heads, mb, h));
  }
  int expect = 0;
  for (const xentry *x = xl; x->name; x++) {
    if (!isa_compiled(x->isa)) continue;
    expect++;
    int found = 0;
    for (int i = 0; i < t->count; i++) {
      const attngen_kernel_info *k = &t->kernels[i];
      if (!k->name || strcmp(k->name, x->name) != 0) continue;
      found++;
      if (k->heads != x->heads || k->kv_heads != x->kv_heads || k->head_dim != x->head_dim || k->mask != x->mask ||
          k->phase != x->phase || k->isa != x->isa || k->kv_dtype != x->kv_dtype)
        return case_failf(r, "table entry %s disagrees with the X-macro list", x->name);
      if (!k->fn || k->work_fn || k->work.q_tile <= 0 || k->work.row_stride <= 0 || k->work.keys_per_tile <= 0 ||
          k->work.scratch_floats == 0)
        return case_failf(r, "table entry %s lacks fn or a work cut", x->name);
      char want[160], tail[24], dt[24] = ""; /* an fp32 cache adds nothing to the name, another type _<type> after the phase */
      if (x->kv_dtype != ATTNGEN_KV_F32) snprintf(dt, sizeof dt, "_%s", attngen_kv_dtype_name(x->kv_dtype));
      char feats[64] = ""; /* the attention features after the mask, in spec order */
#define CASE_FEATURE_SUFFIX(F, name) \
  if (k->features & ATTNGEN_ATTN_##F) strcat(feats, "_" #name);
      ATTNGEN_ATTN_LIST(CASE_FEATURE_SUFFIX)
#undef CASE_FEATURE_SUFFIX
      snprintf(want, sizeof want, "attn_h%d_kv%d_d%d_%s%s_%s%s", x->heads, x->kv_heads, x->head_dim,
               attngen_mask_name(x->mask), feats, attngen_phase_name(x->phase), dt);
      snprintf(tail, sizeof tail, "__%s", attngen_isa_name(x->isa));
      /* between them nothing, or _<kind> for a kind of layers whose code differs from an earlier kind's */
      const size_t nw = strlen(want), nt = strlen(tail), nn = strlen(x->name);
      int spelled = nn >= nw + nt && !strncmp(x->name, want, nw) && !strcmp(x->name + nn - nt, tail);
      if (spelled && nn > nw + nt) {
        spelled = x->name[nw] == '_' && x->name[nw + 1] >= 'a' && x->name[nw + 1] <= 'z';
        for (size_t i = nw + 1; spelled && i < nn - nt; i++)
          spelled = (x->name[i] >= 'a' && x->name[i] <= 'z') || (x->name[i] >= '0' && x->name[i] <= '9') || x->name[i] == '_';
      }
      if (!spelled)
        return case_failf(r, "kernel name %s does not spell its parameters (%s[_<kind>]%s)", x->name, want, tail);
    }
    if (found != 1) return case_failf(r, "X-macro kernel %s appears %d times in the table", x->name, found);
  }
  int listed = 0; /* kernels over a paged cache are in the table only */
  for (int i = 0; i < t->count; i++) listed += t->kernels[i].page_size == 0;
  if (expect != listed)
    return case_failf(r, "table has %d kernels, the X-macro list %d for the ISAs compiled here", listed, expect);
  return 0;
}

int case_run(const test_case *c, case_result *r) {
  memset(r, 0, sizeof *r);
  switch (c->kind) {
  case CK_NUMERIC: return run_numeric(c, r);
  case CK_THREADS: return run_threads(c, r);
  case CK_ERRORS: return run_errors(c, r);
  case CK_TABLE: return run_table(c, r);
  case CK_STEP: return rope_run_step(c, r);
  case CK_APPEND: return rope_run_append(c, r);
  case CK_ALLOC: return run_alloc(c, r);
  case CK_CONVERT: return kvt_run_convert(c, r);
  case CK_MERGE: return merge_run(c, r);
  case CK_PAGED: return paged_run(c, r);
  }
  return case_failf(r, "unknown case kind");
}

/* ------------------------------------------------------------------------------------------------ */
/* names */

void case_name(const test_case *c, char *buf, size_t n) {
  static const char *kinds[] = {"numeric", "threads", "errors", "table", "step", "append", "alloc", "convert", "merge",
                                "paged"};
  char dt[24] = ""; /* the storage type as kernel names spell it: nothing for fp32, _<type> after the phase */
  if (c->shape.kv_dtype != ATTNGEN_KV_F32) snprintf(dt, sizeof dt, "_%s", attngen_kv_dtype_name(c->shape.kv_dtype));
  if (c->kind == CK_CONVERT) {
    snprintf(buf, n, "convert %s", kvt_convert_name(c->variant));
    return;
  }
  if (c->kind == CK_PAGED) {
    snprintf(buf, n, "paged %s %s/h%d_kv%d_d%d%s_paged%d__%s%s%s", paged_case_name(c->variant), c->model, c->shape.heads,
             c->shape.kv_heads, c->shape.head_dim, dt, c->shape.page_size, attngen_isa_name(c->isa),
             c->layout == LAYOUT_HEAD_MAJOR ? " head-major" : "", c->batch > 1 ? " threads" : "");
    return;
  }
  if (c->kind == CK_MERGE) {
    if (merge_uses_kernels(c->variant))
      snprintf(buf, n, "merge %s generic/h%d_kv%d_d%d__%s", merge_case_name(c->variant), c->shape.heads,
               c->shape.kv_heads, c->shape.head_dim, attngen_isa_name(c->isa));
    else
      snprintf(buf, n, "merge %s", merge_case_name(c->variant));
    return;
  }
  if (c->kind == CK_ALLOC) {
    snprintf(buf, n, "alloc attngen_alloc/attngen_free, then generic/h%d_kv%d_d%d_%s_%s__%s on its memory",
             c->shape.heads, c->shape.kv_heads, c->shape.head_dim, attngen_mask_name(c->shape.mask),
             attngen_phase_name(c->shape.phase), attngen_isa_name(c->isa));
    return;
  }
  if (c->kind == CK_TABLE) {
    snprintf(buf, n, "table %s (%d kernels)", c->model, c->table->count);
    return;
  }
  if (c->kind == CK_STEP || c->kind == CK_APPEND) {
    const attngen_rope *rp = rope_of(c->table, &c->shape);
    snprintf(buf, n, "%s %s/%s h%d_kv%d_d%d%s %s %s %s rope=%s", kinds[c->kind], c->model,
             c->via_select ? "select" : attngen_isa_name(c->isa), c->shape.heads, c->shape.kv_heads, c->shape.head_dim,
             dt, attngen_mask_name(c->shape.mask), c->kind == CK_STEP ? "prefill+decode" : attngen_phase_name(c->shape.phase),
             c->kind == CK_STEP ? rope_step_name(c->variant) : "errors+precision",
             rp ? (rp->style == ATTNGEN_ROPE_INTERLEAVED ? "interleaved" : "half") : "none");
    return;
  }
  static const char *layouts[] = {"dense", "padded", "head-major"};
  static const char *lens[] = {"null", "full", "varied"};
  static const char *ranges[] = {"unit", "large", "wide"};
  char kname[160];
  if (c->via_select)
    snprintf(kname, sizeof kname, "%s/select(h%d_kv%d_d%d_%s_%s%s)", c->model, c->shape.heads, c->shape.kv_heads,
             c->shape.head_dim, attngen_mask_name(c->shape.mask), attngen_phase_name(c->shape.phase), dt);
  else if (c->table)
    snprintf(kname, sizeof kname, "%s/%s", c->model, c->table->kernels[c->kernel_index].name);
  else
    snprintf(kname, sizeof kname, "generic/h%d_kv%d_d%d_%s_%s%s__%s", c->shape.heads, c->shape.kv_heads,
             c->shape.head_dim, attngen_mask_name(c->shape.mask), attngen_phase_name(c->shape.phase), dt,
             attngen_isa_name(c->isa));
  snprintf(buf, n, "%s %s mask=%s b=%d q=%d kv=%d cap=%d kv_lens=%s layout=%s range=%s lse=%d scale=%g", kinds[c->kind],
           kname, attngen_mask_name(c->shape.mask), c->batch, c->q_len, c->kv_len, c->kv_capacity, lens[c->kvlens],
           layouts[c->layout], ranges[c->range], c->want_lse, (double)c->scale);
  if (c->pos == POS_RANDOM && strlen(buf) + 16 < n) strcat(buf, " pos=random");
#define CASE_FEATURE_NAME(F, name) \
  if ((c->shape.features & ATTNGEN_ATTN_##F) && strlen(buf) + 16 < n) strcat(buf, " +" #name);
  ATTNGEN_ATTN_LIST(CASE_FEATURE_NAME)
#undef CASE_FEATURE_NAME
}

/* ------------------------------------------------------------------------------------------------ */
/* the list */

typedef struct {
  test_case *v;
  int n, cap;
} vec;

/* Keeps the cases from `first` on whose rank among them is a multiple of k (the first included). */
static void keep_every(vec *v, int first, int k) {
  int kept = first;
  for (int i = first; i < v->n; i++)
    if ((i - first) % k == 0) v->v[kept++] = v->v[i];
  v->n = kept;
}

static void push(vec *v, test_case c) {
  if (v->n == v->cap) {
    v->cap = v->cap ? 2 * v->cap : 1024;
    test_case *nv = realloc(v->v, sizeof(test_case) * (size_t)v->cap);
    if (!nv) abort();
    v->v = nv;
  }
  c.seed = (uint32_t)v->n * 2654435761u + 12345u;
  v->v[v->n++] = c;
}

static void mk(vec *v, test_case base, int batch, int q, int kv, int cap, case_kvlens kl, case_layout layout,
               case_range range, int lse) {
  test_case c = base;
  c.batch = batch;
  c.q_len = q;
  c.kv_len = kv;
  c.kv_capacity = cap;
  c.kvlens = (kl == KVL_NULL && mask_reads_lens(base.shape.mask)) ? KVL_FULL : kl;
  c.layout = layout;
  c.range = range;
  c.scale = range == RANGE_LARGE ? 1.0f : 0.0f;
  c.want_lse = lse;
  /* RoPE tables: exact large scores only without rotation, so those ranges put every query at position 0. A RoPE
   * whose cos and sin carry a factor (YaRN's attention factor) still scales q there, by a non-integer rounded in
   * fp32, which voids RANGE_LARGE's premise of exact integer scores: those tables run the unit and wide ranges
   * (whose tolerances allow for the rounding), and RANGE_LARGE's max subtraction runs on every other table, through
   * the same kernel code (the factor is data in the cos/sin table, never in a kernel). */
  const attngen_rope *rope = rope_of(base.table, &base.shape);
  if (range == RANGE_LARGE && rope && rope->cs_scale != 1.0) return;
  if (range != RANGE_UNIT && rope) c.pos = POS_ZERO;
  push(v, c);
}

/* The numeric cases for one kernel. level 2: the specialized kernels (every pair of lengths); 1: the generic
 * kernel on its extra shapes; 0: the generic kernel on the test tables' shapes (fewer long prefills). */
/* The numeric cases of a kernel reading a cache of another storage type than fp32 (specialized or generic): prefill,
 * chunked prefill (q_len < kv_len) and q_len > kv_len; decode with q_len 1, 4 and 8; padded and head-major strides
 * (the int8 scales with their own), a sequence with no key, large and wide scores, split-KV decode (one sequence,
 * 1030 and 1500 keys, head-major too). The qemu subset keeps one of each kind (and serves the fp32 kernels of a
 * table of several types there: their code is every fp32 table's). */
static void add_numeric_typed(vec *v, test_case b, case_subset subset) {
  const int q = subset == CASES_QEMU;
  b.kind = CK_NUMERIC;
  if (b.shape.phase == ATTNGEN_PHASE_PREFILL) {
    mk(v, b, 1, 33, 33, 0, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, 1);     /* prefill */
    mk(v, b, 1, 7, 130, 0, KVL_FULL, LAYOUT_DENSE, RANGE_UNIT, 1);     /* chunked prefill */
    mk(v, b, 3, 7, 33, 40, KVL_VARIED, LAYOUT_PADDED, RANGE_UNIT, 1);  /* kv_lens 33, 0, 17; spare capacity */
    mk(v, b, 2, 33, 33, 0, KVL_VARIED, LAYOUT_HEAD_MAJOR, RANGE_UNIT, 1);
    mk(v, b, 2, 7, 33, 0, KVL_VARIED, LAYOUT_DENSE, RANGE_LARGE, 1);
    if (q) return;
    mk(v, b, 1, 1, 1, 0, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, 0);
    mk(v, b, 1, 130, 130, 0, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, 0);   /* several query tiles */
    mk(v, b, 1, 33, 7, 0, KVL_FULL, LAYOUT_DENSE, RANGE_UNIT, 1);      /* q_len > kv_len */
    mk(v, b, 2, 17, 130, 0, KVL_VARIED, LAYOUT_DENSE, RANGE_WIDE, 1);
  } else {
    mk(v, b, 1, 1, 130, 139, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, 1);   /* one query */
    mk(v, b, 1, 4, 33, 42, KVL_FULL, LAYOUT_DENSE, RANGE_UNIT, 1);     /* four */
    mk(v, b, 3, 4, 33, 40, KVL_VARIED, LAYOUT_PADDED, RANGE_UNIT, 1);
    mk(v, b, 2, 3, 33, 48, KVL_FULL, LAYOUT_HEAD_MAJOR, RANGE_UNIT, 1);
    mk(v, b, 1, 1, 1030, 1040, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, 1); /* split-KV */
    mk(v, b, 2, 8, 33, 40, KVL_VARIED, LAYOUT_DENSE, RANGE_LARGE, 1);
    if (q) return;
    mk(v, b, 1, 1, 1, 10, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, 1);
    mk(v, b, 1, 8, 257, 266, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, 0);
    mk(v, b, 1, 1, 300, 310, KVL_NULL, LAYOUT_HEAD_MAJOR, RANGE_UNIT, 0); /* rows contiguous per head: long tiles */
    mk(v, b, 1, 4, 1500, 1500, KVL_FULL, LAYOUT_HEAD_MAJOR, RANGE_UNIT, 1); /* split-KV on a head-major cache */
    mk(v, b, 1, 2, 1030, 1040, KVL_NULL, LAYOUT_DENSE, RANGE_WIDE, 1);  /* split-KV with large scores */
  }
}

/* A window kernel's decode with a window of 1100 keys passed per call: past 2 x split_min_keys, so the runtime cuts
 * the window's keys (not the cache's) among splits, the first also holding the sink tokens, and merges them with
 * the sink logits joining once. */
static void add_window_splits(vec *v, test_case b) {
  if (!(b.shape.features & ATTNGEN_ATTN_WINDOW) || b.shape.phase != ATTNGEN_PHASE_DECODE) return;
  b.window = 1100;
  mk(v, b, 1, 1, 2049, 2100, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, 1);
  mk(v, b, 3, 4, 2049, 2100, KVL_VARIED, LAYOUT_PADDED, RANGE_UNIT, 1); /* kv_lens 2049, 0, 1025 */
}

static void add_numeric(vec *v, test_case b, case_subset subset, int level) {
  static const int L[] = {1, 7, 33, 130, 257};
  b.kind = CK_NUMERIC;
  add_window_splits(v, b);
  if (b.shape.kv_dtype != ATTNGEN_KV_F32) {
    add_numeric_typed(v, b, subset);
    return;
  }
  if (subset == CASES_QEMU) {
    if (b.shape.phase == ATTNGEN_PHASE_PREFILL) {
      mk(v, b, 1, 1, 1, 0, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, 1);
      mk(v, b, 1, 33, 33, 0, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, 0);
      mk(v, b, 1, 130, 130, 0, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, 1); /* several query tiles */
      mk(v, b, 1, 7, 130, 0, KVL_FULL, LAYOUT_DENSE, RANGE_UNIT, 1);   /* chunked prefill, kv past a tile */
      mk(v, b, 1, 33, 7, 0, KVL_FULL, LAYOUT_DENSE, RANGE_UNIT, 1);    /* q_len > kv_len */
      mk(v, b, 3, 7, 33, 40, KVL_VARIED, LAYOUT_PADDED, RANGE_UNIT, 1); /* incl. a sequence with 0 keys */
      mk(v, b, 2, 7, 7, 0, KVL_VARIED, LAYOUT_HEAD_MAJOR, RANGE_UNIT, 1);
      mk(v, b, 1, 7, 33, 0, KVL_FULL, LAYOUT_DENSE, RANGE_LARGE, 1);
      mk(v, b, 1, 17, 130, 0, KVL_FULL, LAYOUT_DENSE, RANGE_WIDE, 1);
    } else {
      mk(v, b, 1, 1, 1, 10, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, 1);
      mk(v, b, 1, 8, 7, 16, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, 0);
      mk(v, b, 1, 3, 33, 42, KVL_FULL, LAYOUT_DENSE, RANGE_UNIT, 1);
      mk(v, b, 1, 2, 130, 139, KVL_FULL, LAYOUT_DENSE, RANGE_UNIT, 0);
      mk(v, b, 1, 5, 257, 266, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, 1);
      mk(v, b, 3, 4, 33, 40, KVL_VARIED, LAYOUT_PADDED, RANGE_UNIT, 1);
      mk(v, b, 2, 3, 7, 16, KVL_FULL, LAYOUT_HEAD_MAJOR, RANGE_UNIT, 1);
      mk(v, b, 1, 1, 257, 266, KVL_NULL, LAYOUT_HEAD_MAJOR, RANGE_UNIT, 0); /* rows contiguous per head: long tiles */
      mk(v, b, 1, 8, 33, 40, KVL_FULL, LAYOUT_DENSE, RANGE_LARGE, 1);
      mk(v, b, 3, 2, 1030, 1040, KVL_VARIED, LAYOUT_DENSE, RANGE_UNIT, 1); /* split-KV */
      mk(v, b, 1, 4, 1500, 1500, KVL_FULL, LAYOUT_DENSE, RANGE_LARGE, 1);
      mk(v, b, 1, 2, 1030, 1040, KVL_FULL, LAYOUT_DENSE, RANGE_WIDE, 1); /* split-KV */
      mk(v, b, 1, 8, 600, 610, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, 1); /* kv heads cut among threads (below) */
    }
    return;
  }
  if (b.shape.phase == ATTNGEN_PHASE_PREFILL) {
    /* prefill (q_len == kv_len) and chunked prefill (q_len < kv_len) */
    int n = 0;
    for (int qi = 0; qi < 5; qi++)
      for (int ki = qi; ki < 5; ki++) {
        int keep = level == 2 || qi == ki || (qi == 1 && ki == 2) || (qi == 0 && ki == 4);
        if (level == 0 && L[ki] > 33 && !(qi == 0 && ki == 4)) keep = 0;
        if (keep) mk(v, b, 1, L[qi], L[ki], 0, qi == ki ? KVL_NULL : KVL_FULL, LAYOUT_DENSE, RANGE_UNIT, n++ & 1);
      }
    mk(v, b, 1, 33, 130, 140, KVL_FULL, LAYOUT_PADDED, RANGE_UNIT, 1); /* spare capacity, padded strides */
    mk(v, b, 1, 33, 7, 0, KVL_FULL, LAYOUT_DENSE, RANGE_UNIT, 1);      /* q_len > kv_len */
    if (level == 2) mk(v, b, 1, 130, 1, 0, KVL_FULL, LAYOUT_DENSE, RANGE_UNIT, 0);
    mk(v, b, 3, 33, 33, 40, KVL_VARIED, LAYOUT_PADDED, RANGE_UNIT, 1); /* kv_lens 33, 0, 17 */
    mk(v, b, 4, 7, 130, 0, KVL_VARIED, LAYOUT_DENSE, RANGE_UNIT, 0);   /* kv_lens 130, 0, 66, 1 */
    mk(v, b, 2, level ? 130 : 33, level ? 130 : 33, 0, KVL_VARIED, LAYOUT_HEAD_MAJOR, RANGE_UNIT, 1);
    mk(v, b, 2, 33, 33, 0, KVL_VARIED, LAYOUT_DENSE, RANGE_LARGE, 1);
    mk(v, b, 1, 7, 130, 0, KVL_FULL, LAYOUT_PADDED, RANGE_LARGE, 1);
    /* |scores| up to CASE_WIDE_SMAX: fp32 rounding grows with the score (tolerance at the top of this file) */
    mk(v, b, 2, 33, 130, 0, KVL_VARIED, LAYOUT_DENSE, RANGE_WIDE, 1);
    if (level) mk(v, b, 1, 130, 130, 0, KVL_NULL, LAYOUT_PADDED, RANGE_WIDE, 0);
  } else {
    /* decode: q_len 1..8 against a cache with spare capacity */
    static const int P[][2] = {{1, 1}, {2, 7}, {3, 33}, {4, 130}, {5, 257}, {6, 7}, {7, 33}, {8, 1}, {8, 257}, {1, 130}};
    if (level == 2) {
      for (int q = 1; q <= ATTNGEN_DECODE_MAX_Q; q++)
        for (int ki = 0; ki < 5; ki++)
          mk(v, b, 1, q, L[ki], L[ki] + 9, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, (q + ki) & 1);
    } else {
      for (int i = 0; i < 10; i++)
        mk(v, b, 1, P[i][0], P[i][1], P[i][1] + 9, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, i & 1);
    }
    mk(v, b, 3, 4, 130, 160, KVL_VARIED, LAYOUT_PADDED, RANGE_UNIT, 1);
    mk(v, b, 5, 1, 33, 40, KVL_VARIED, LAYOUT_DENSE, RANGE_UNIT, 0);
    mk(v, b, 2, 3, 33, 48, KVL_FULL, LAYOUT_HEAD_MAJOR, RANGE_UNIT, 1);
    /* rows contiguous per head (head-major): tiles of keys_contig keys, row-wise Q·Kᵀ; several tiles, the last short */
    mk(v, b, 1, 1, 300, 310, KVL_NULL, LAYOUT_HEAD_MAJOR, RANGE_UNIT, 0);
    mk(v, b, 2, 5, 257, 266, KVL_VARIED, LAYOUT_HEAD_MAJOR, RANGE_WIDE, 1);
    mk(v, b, 2, 8, 33, 40, KVL_VARIED, LAYOUT_DENSE, RANGE_LARGE, 1);
    mk(v, b, 1, 1, 257, 260, KVL_FULL, LAYOUT_PADDED, RANGE_LARGE, 0);
    /* long caches: the runtime splits the KV range (split-KV partials merged through the log-sum-exp) */
    mk(v, b, 1, 1, 1030, 1040, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, 1);
    mk(v, b, 3, 8, 2049, 2100, KVL_VARIED, LAYOUT_PADDED, RANGE_UNIT, 0); /* kv_lens 2049, 0, 1025 */
    mk(v, b, 2, 4, 1500, 1500, KVL_VARIED, LAYOUT_HEAD_MAJOR, RANGE_LARGE, 1);
    mk(v, b, 2, 8, 257, 266, KVL_FULL, LAYOUT_DENSE, RANGE_WIDE, 1);
    mk(v, b, 1, 4, 1030, 1040, KVL_NULL, LAYOUT_DENSE, RANGE_WIDE, 1); /* split-KV with large scores */
    /* one sequence, one KV chunk, 8 queries: with 2-3 threads the runtime cuts the kv heads among items (shapes
     * with 2+ kv heads and enough work per part: t-gqa4, t-gqa7), which the thread variants must not tell apart */
    mk(v, b, 1, 8, 600, 610, KVL_NULL, LAYOUT_DENSE, RANGE_UNIT, 0);
  }
}

static void add_threads(vec *v, test_case b, case_subset subset) {
  b.kind = CK_THREADS;
  int big = subset == CASES_QEMU ? 130 : 257;
  if (b.shape.phase == ATTNGEN_PHASE_PREFILL) {
    mk(v, b, 2, big / 2 + 1, big, 0, KVL_VARIED, LAYOUT_DENSE, RANGE_UNIT, 1);
    mk(v, b, 1, 3, big, 0, KVL_FULL, LAYOUT_PADDED, RANGE_UNIT, 0); /* one query tile: no K/V repack */
  }
  else {
    mk(v, b, 2, 3, big, big + 40, KVL_VARIED, LAYOUT_PADDED, RANGE_UNIT, 1);
    /* split-KV: kv_lens 2049, 0, 1025 (under qemu 1100, 0, 551: still cut in two, in half the emulated time) */
    const int split = subset == CASES_QEMU ? 1100 : 2049;
    mk(v, b, 3, 2, split, split + 51, KVL_VARIED, LAYOUT_DENSE, RANGE_UNIT, 1);
  }
}

static void add_errors(vec *v, test_case b) {
  b.kind = CK_ERRORS;
  if (b.shape.phase == ATTNGEN_PHASE_PREFILL)
    mk(v, b, 2, 7, 7, 0, KVL_FULL, LAYOUT_DENSE, RANGE_UNIT, 1);
  else
    mk(v, b, 2, 2, 7, 9, KVL_FULL, LAYOUT_DENSE, RANGE_UNIT, 1);
}

/* The attention features of the table's kernel of that name (the header's list does not carry them). */
static unsigned features_named(const attngen_table *t, const char *name) {
  for (int i = 0; i < t->count; i++)
    if (strcmp(t->kernels[i].name, name) == 0) return t->kernels[i].features;
  return 0;
}

/* Preference of an ISA (the spec lists the best first): higher is better. */
static int isa_rank(attngen_isa i) {
  int rank = ATTNGEN_ISA_COUNT_;
#define RANK(E, ...) if (i == ATTNGEN_ISA_##E) return rank; rank--;
  ATTNGEN_ISA_LIST(RANK)
#undef RANK
  return 0;
}

/* The KV-cache cases of one table (tests/rope_cases.c), per storage type the table has: the step scenarios on the
 * causal (and causal_padding) prefill + decode kernels of every ISA this CPU runs and through attngen_select (RoPE
 * tables; a table without RoPE once, on its best ISA), and the append's precision and errors (fp32). A cache of
 * another type runs decode-1x300 on every ISA and through attngen_select, and every other scenario on the best
 * ISA. A RoPE table without a type runs decode-1x300 of it through attngen_select (the generic fallback of the
 * type, which must rotate by the table's RoPE). Under qemu (a slow float64 reference) only the best ISA's (NEON's)
 * decode-1x300 per type: the runtime around it is the same C as natively, and the numeric cases run the NEON
 * kernels at positions up to 2^20 and on head-major caches. */
static void add_kv_cache(vec *v, const attngen_table *tab, const xentry *xl, unsigned isas, case_subset subset) {
  const int has_rope = tab->params.rope.style != ATTNGEN_ROPE_NONE;
  int best = ATTNGEN_ISA_SCALAR, appended = 0;
  for (int i = 0; i < ATTNGEN_ISA_COUNT_; i++)
    if (((isas >> i) & 1u) && isa_rank((attngen_isa)i) > isa_rank((attngen_isa)best)) best = i;
  int causal_both = 0; /* the header lists causal prefill and decode kernels (of any type) */
  for (const xentry *x = xl; x->name; x++)
    for (const xentry *y = xl; y->name; y++)
      causal_both |= x->mask == ATTNGEN_MASK_CAUSAL && y->mask == ATTNGEN_MASK_CAUSAL &&
                     x->phase == ATTNGEN_PHASE_PREFILL && y->phase == ATTNGEN_PHASE_DECODE;
  for (int t = 0; t < ATTNGEN_KV_COUNT_; t++) {
    const attngen_kv_dtype dt = (attngen_kv_dtype)t;
    const int typed = dt != ATTNGEN_KV_F32;
    int have = 0, done_plain = 0;
    for (const xentry *x = xl; x->name; x++) have |= x->kv_dtype == dt;
    if (!have) {
      if (typed && has_rope && causal_both && subset == CASES_FULL && kvt_fits(dt, tab->head_dim)) {
        test_case b;
        memset(&b, 0, sizeof b);
        b.table = tab;
        b.model = tab->model;
        b.shape = (attngen_shape){tab->heads, tab->kv_heads, tab->head_dim, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_PREFILL, dt, tab->kernels[0].features, 0};
        b.via_select = 1;
        b.kind = CK_STEP;
        b.variant = STEP_DECODE1;
        push(v, b);
      }
      continue;
    }
    for (int isa = ATTNGEN_ISA_COUNT_ - 1; isa >= -1; isa--) { /* -1: attngen_select */
      for (int m = 0; m < 2; m++) {
        const attngen_mask mask = m ? ATTNGEN_MASK_CAUSAL_PADDING : ATTNGEN_MASK_CAUSAL;
        int ip = -1, id = -1;
        if (isa >= 0) {
          if (!((isas >> isa) & 1u)) continue;
          for (int i = 0; i < tab->count; i++) {
            const attngen_kernel_info *ki = &tab->kernels[i];
            if (ki->mask != mask || ki->isa != (attngen_isa)isa || ki->kv_dtype != dt || !ki->fn || ki->page_size) continue;
            if (ki->phase == ATTNGEN_PHASE_PREFILL) ip = i;
            else id = i;
          }
        } else {
          for (const xentry *x = xl; x->name; x++)
            if (x->mask == mask && x->kv_dtype == dt) {
              if (x->phase == ATTNGEN_PHASE_PREFILL) ip = 0;
              else id = 0;
            }
        }
        if (ip < 0 || id < 0) continue;
        test_case b;
        memset(&b, 0, sizeof b);
        b.table = tab;
        b.model = tab->model;
        b.kernel_index = ip;
        b.shape = (attngen_shape){tab->heads, tab->kv_heads, tab->head_dim, mask, ATTNGEN_PHASE_PREFILL, dt, tab->kernels[0].features, 0};
        b.isa = isa >= 0 ? (attngen_isa)isa : ATTNGEN_ISA_SCALAR;
        b.via_select = isa < 0;
        b.kind = CK_STEP;
        if (subset == CASES_QEMU) {
          if (has_rope && isa == best && !m) {
            b.variant = STEP_DECODE1;
            push(v, b);
          }
        } else if (has_rope) {
          for (int s = 0; s < STEP_COUNT_; s++)
            if (s == STEP_DECODE1 || (!m && isa >= 0 && (typed ? isa == best : s != STEP_LONG || isa == best))) {
              b.variant = s;
              push(v, b);
            }
        } else if (!done_plain && isa >= 0) {
          b.variant = STEP_DECODE1;
          push(v, b);
          done_plain = 1;
        }
        if (!appended && !typed && isa >= 0) { /* kernel-independent: once per table, with its decode kernel */
          b.kind = CK_APPEND;
          b.kernel_index = id;
          b.shape.phase = ATTNGEN_PHASE_DECODE;
          push(v, b);
          appended = 1;
        }
      }
    }
  }
}

/* The CK_PAGED cases of paged decode kernel ki (the n-th of its table): a step sequence on each (ISA, type, page
 * size), head-major pages and threads on every other one; attngen_run over 1100 keys and the shared prompt on some;
 * a windowed table's ring. Under qemu: NEON only, no run-1100 (its float64 reference is long there). */
static void add_paged(vec *v, const attngen_table *tab, const attngen_kernel_info *ki, case_subset subset, int n) {
  if (subset == CASES_QEMU && ki->isa != ATTNGEN_ISA_NEON) return;
  test_case b;
  memset(&b, 0, sizeof b);
  b.kind = CK_PAGED;
  b.table = tab;
  b.model = tab->model;
  b.shape = (attngen_shape){ki->heads, ki->kv_heads, ki->head_dim, ki->mask, ki->phase, ki->kv_dtype, ki->features,
                            ki->page_size};
  b.isa = ki->isa;
  b.seed = 0x9a6e0000u + (uint32_t)n * 7919u;
  b.batch = 1;
  if (ki->features & ATTNGEN_ATTN_WINDOW) {
    b.variant = PAGED_RING;
    b.layout = n % 2 ? LAYOUT_HEAD_MAJOR : LAYOUT_DENSE;
    push(v, b);
    return;
  }
  b.variant = PAGED_STEP;
  b.layout = n % 2 ? LAYOUT_HEAD_MAJOR : LAYOUT_DENSE;
  b.batch = n % 3 == 1 ? 2 : 1; /* threads */
  push(v, b);
  b.batch = 1;
  b.layout = LAYOUT_DENSE;
  if (subset != CASES_QEMU && n % 2 == 0) {
    b.variant = PAGED_RUN;
    b.layout = n % 4 == 2 ? LAYOUT_HEAD_MAJOR : LAYOUT_DENSE;
    push(v, b);
  }
  if (ki->kv_dtype == ATTNGEN_KV_F32 || ki->kv_dtype == ATTNGEN_KV_INT8) {
    b.variant = PAGED_SHARED;
    b.layout = LAYOUT_DENSE;
    push(v, b);
  }
  if (n == 0) {
    b.variant = PAGED_ERRORS;
    push(v, b);
  }
}

/* shapes only the generic kernels see: head_dim 1, odd small dims, the maximum 512 */
static const int extra_shapes[][3] = {{2, 1, 1}, {6, 3, 17}, {2, 2, 512}, {5, 5, 3}};

int cases_build(case_subset subset, test_case **out) {
  vec v = {NULL, 0, 0};
  const unsigned isas = attngen_cpu_isas();
  int shapes[64][3], nshapes = 0;

  for (int variant = 0; variant < CONV_COUNT_; variant++) { /* the conversions, once */
    test_case b;
    memset(&b, 0, sizeof b);
    b.kind = CK_CONVERT;
    b.model = "runtime";
    b.variant = variant;
    push(&v, b);
  }
  for (int variant = 0; variant < MERGE_COUNT_; variant++) /* merged partial states: on every ISA when kernels run */
    for (int isa = 0; isa < ATTNGEN_ISA_COUNT_; isa++) {
      if (!((isas >> isa) & 1u) || (!merge_uses_kernels(variant) && isa > 0)) continue;
      test_case b;
      memset(&b, 0, sizeof b);
      b.kind = CK_MERGE;
      b.model = "runtime";
      b.shape = (attngen_shape){4, 2, 64, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_PREFILL, ATTNGEN_KV_F32, 0, 0};
      b.isa = (attngen_isa)isa;
      b.variant = variant;
      push(&v, b);
    }
  for (int t = 0; g_tables[t]; t++) {
    const attngen_table *tab = g_tables[t];
    {
      test_case b;
      memset(&b, 0, sizeof b);
      b.kind = CK_TABLE;
      b.table = tab;
      b.model = tab->model;
      push(&v, b);
    }
    int npaged = 0; /* a table with paged kernels: its CK_PAGED cases (its other kernels are other tables' too) */
    for (int i = 0; i < tab->count; i++) {
      const attngen_kernel_info *ki = &tab->kernels[i];
      if (ki->page_size && ((isas >> ki->isa) & 1u) && ki->phase == ATTNGEN_PHASE_DECODE && ki->mask == ATTNGEN_MASK_CAUSAL)
        add_paged(&v, tab, ki, subset, npaged++);
    }
    if (npaged) continue;
    int mixed = 0; /* a table of several storage types */
    for (int i = 1; i < tab->count; i++) mixed |= tab->kernels[i].kv_dtype != tab->kernels[0].kv_dtype;
    int best[ATTNGEN_KV_COUNT_][ATTNGEN_PHASE_COUNT_][ATTNGEN_MASK_COUNT_]; /* per storage type */
    for (int d = 0; d < ATTNGEN_KV_COUNT_; d++)
      for (int p = 0; p < ATTNGEN_PHASE_COUNT_; p++)
        for (int m = 0; m < ATTNGEN_MASK_COUNT_; m++) best[d][p][m] = -1;
    for (int i = 0; i < tab->count; i++) {
      const attngen_kernel_info *ki = &tab->kernels[i];
      if (!((isas >> ki->isa) & 1u) || !ki->fn) continue;
      test_case b;
      memset(&b, 0, sizeof b);
      b.table = tab;
      b.model = tab->model;
      b.kernel_index = i;
      b.shape = (attngen_shape){ki->heads, ki->kv_heads, ki->head_dim, ki->mask, ki->phase, ki->kv_dtype, ki->features, 0};
      b.isa = ki->isa;
      const int first = v.n;
      if (subset == CASES_QEMU && mixed) add_numeric_typed(&v, b, subset); /* its fp32 kernels: as any other table's */
      else add_numeric(&v, b, subset, 2);
      if (rope_of(tab, &b.shape)) { /* explicit positions up to 2^20, different per sequence */
        b.kind = CK_NUMERIC;
        b.pos = POS_RANDOM;
        if (ki->phase == ATTNGEN_PHASE_PREFILL) mk(&v, b, 2, 33, 130, 0, KVL_VARIED, LAYOUT_DENSE, RANGE_UNIT, 1);
        else mk(&v, b, 3, 4, 130, 160, KVL_VARIED, LAYOUT_PADDED, RANGE_UNIT, 1);
        b.pos = POS_NATURAL;
      }
      /* under qemu a table's scalar kernel runs every third of its cases: it is the portable C that the native gcc
       * and clang runs check case for case (NEON's run them all) */
      if (subset == CASES_QEMU && ki->isa == ATTNGEN_ISA_SCALAR) keep_every(&v, first, 3);
      int *bp = &best[ki->kv_dtype][ki->phase][ki->mask];
      if (*bp < 0 || isa_rank(ki->isa) > isa_rank(tab->kernels[*bp].isa)) *bp = i;
      int known = 0;
      for (int s = 0; s < nshapes; s++)
        known |= shapes[s][0] == ki->heads && shapes[s][1] == ki->kv_heads && shapes[s][2] == ki->head_dim;
      if (!known && nshapes < 60) {
        shapes[nshapes][0] = ki->heads;
        shapes[nshapes][1] = ki->kv_heads;
        shapes[nshapes][2] = ki->head_dim;
        nshapes++;
      }
    }
    /* attngen_select on every (mask, phase) of the header's list, whether or not this CPU has a specialized
     * kernel for it: the fallback to the generic kernel must compute the same thing (the table's params) */
    for (const xentry *x = g_xlists[t]; x->name; x++) {
      int dup = 0;
      for (const xentry *y = g_xlists[t]; y < x; y++)
        dup |= y->mask == x->mask && y->phase == x->phase && y->kv_dtype == x->kv_dtype;
      if (dup) continue;
      test_case b;
      memset(&b, 0, sizeof b);
      b.table = tab;
      b.model = tab->model;
      b.via_select = 1;
      b.shape = (attngen_shape){x->heads, x->kv_heads, x->head_dim, x->mask, x->phase, x->kv_dtype,
                                features_named(tab, x->name), 0};
      b.isa = x->isa;
      const int first = v.n;
      add_numeric(&v, b, subset, 0);
      /* under qemu every third: the NEON kernels it selects run every case of their own above */
      if (subset == CASES_QEMU) keep_every(&v, first, 3);
    }
    /* threads and errors on the best ISA, per storage type: prefill with causal_padding (else any mask), decode
     * with padding */
    static const attngen_mask thr_mask[ATTNGEN_PHASE_COUNT_] = {ATTNGEN_MASK_CAUSAL_PADDING, ATTNGEN_MASK_PADDING};
    for (int d = 0; d < ATTNGEN_KV_COUNT_; d++)
    for (int p = 0; p < ATTNGEN_PHASE_COUNT_; p++) {
      int i = best[d][p][thr_mask[p]];
      for (int m = 0; i < 0 && m < ATTNGEN_MASK_COUNT_; m++) i = best[d][p][m];
      if (i < 0) continue;
      const attngen_kernel_info *ki = &tab->kernels[i];
      test_case b;
      memset(&b, 0, sizeof b);
      b.table = tab;
      b.model = tab->model;
      b.kernel_index = i;
      b.shape = (attngen_shape){ki->heads, ki->kv_heads, ki->head_dim, ki->mask, ki->phase, ki->kv_dtype, ki->features, 0};
      b.isa = ki->isa;
      add_threads(&v, b, subset);
      add_errors(&v, b);
    }
    add_kv_cache(&v, tab, g_xlists[t], isas, subset);
  }

  /* generic kernels: every shape of the test tables (lighter) and the extra shapes, every mask, phase, ISA. The
   * qemu subset runs them on NEON only: the scalar generic kernels are portable C that the native gcc and clang
   * runs already cover case for case, and the tables' scalar kernels still run under qemu. It also takes every
   * third shape of the tables (the tables' own NEON kernels run every shape there) and every extra shape. */
  int ngen = nshapes + (int)(sizeof extra_shapes / sizeof extra_shapes[0]);
  for (int s = 0; s < ngen; s++) {
    const int *sp = s < nshapes ? shapes[s] : extra_shapes[s - nshapes];
    if (subset == CASES_QEMU && s < nshapes && s % 3) continue;
    for (int isa = 0; isa < ATTNGEN_ISA_COUNT_; isa++) {
      if (!((isas >> isa) & 1u) || (subset == CASES_QEMU && isa == ATTNGEN_ISA_SCALAR)) continue;
      for (int p = 0; p < ATTNGEN_PHASE_COUNT_; p++)
        for (int m = 0; m < ATTNGEN_MASK_COUNT_; m++) {
          test_case b;
          memset(&b, 0, sizeof b);
          b.model = "generic";
          b.shape = (attngen_shape){sp[0], sp[1], sp[2], (attngen_mask)m, (attngen_phase)p, ATTNGEN_KV_F32, 0, 0};
          b.isa = (attngen_isa)isa;
          add_numeric(&v, b, subset, s >= nshapes && sp[2] <= 64 ? 1 : 0);
          /* every attention feature at once, values from the call (no table): the window (and its sinks) on the
           * causal masks only; an extra shape each, the tables' shapes test them through their own kernels */
          if (s == nshapes + 1 || s == nshapes + 3) { /* h6 kv3 d17 and h5 d3: GQA, 5 heads (not a power of 2) */
            const int causal = (attngen_mask_features((attngen_mask)m) & ATTNGEN_FEATURE_CAUSAL) != 0;
            b.shape.features = ATTNGEN_ATTN_SOFTCAP | ATTNGEN_ATTN_ALIBI | ATTNGEN_ATTN_SINKS |
                               (causal ? ATTNGEN_ATTN_WINDOW : 0);
            b.window = (b.shape.features & ATTNGEN_ATTN_WINDOW) ? 29 : 0;
            b.sink_tokens = (b.shape.features & ATTNGEN_ATTN_WINDOW) ? 3 : 0;
            b.softcap = (b.shape.features & ATTNGEN_ATTN_SOFTCAP) ? 4.0f : 0.0f;
            add_numeric(&v, b, subset, 0);
          }
        }
    }
  }
  /* generic kernels of the other storage types: every type x ISA x phase, every mask on MHA d64 and GQA 4 d128,
   * none / causal / padding on the tail shapes each type allows (head_dim 40, 17, 80; int8_g32: 96 = 3 groups;
   * int8_g64: 192 = 3 groups). The qemu subset: d64 and d128, masks none / causal / padding, NEON only (as above). */
  {
    static const int tshapes[][3] = {{4, 4, 64}, {8, 2, 128}, {6, 3, 40}, {2, 1, 17}, {4, 1, 80}, {3, 1, 96}, {2, 1, 192}};
    for (int t = 1; t < ATTNGEN_KV_COUNT_; t++) {
      const attngen_kv_dtype dt = (attngen_kv_dtype)t;
      for (int s = 0; s < (int)(sizeof tshapes / sizeof tshapes[0]); s++) {
        const int *sp = tshapes[s];
        if (!kvt_fits(dt, sp[2]) || (s >= 2 && subset == CASES_QEMU)) continue;
        if ((s == 5 && dt != ATTNGEN_KV_INT8_G32) || (s == 6 && dt != ATTNGEN_KV_INT8_G64)) continue;
        for (int isa = 0; isa < ATTNGEN_ISA_COUNT_; isa++) {
          if (!((isas >> isa) & 1u) || (subset == CASES_QEMU && isa == ATTNGEN_ISA_SCALAR)) continue;
          for (int p = 0; p < ATTNGEN_PHASE_COUNT_; p++)
            for (int m = 0; m < ATTNGEN_MASK_COUNT_; m++) {
              if ((s >= 2 || subset == CASES_QEMU) && m > ATTNGEN_MASK_PADDING) continue;
              test_case b;
              memset(&b, 0, sizeof b);
              b.model = "generic";
              b.shape = (attngen_shape){sp[0], sp[1], sp[2], (attngen_mask)m, (attngen_phase)p, dt, 0, 0};
              b.isa = (attngen_isa)isa;
              add_numeric(&v, b, subset, 0);
            }
        }
      }
    }
  }
  /* generic threads/errors: best ISA, two shapes; per storage type, threads on GQA 4 d128 and errors on h4 kv2 d64 */
  {
    attngen_isa best = ATTNGEN_ISA_SCALAR;
    for (int i = 0; i < ATTNGEN_ISA_COUNT_; i++)
      if (((isas >> i) & 1u) && isa_rank((attngen_isa)i) > isa_rank(best)) best = (attngen_isa)i;
    for (int i = 0; i < ATTNGEN_ISA_COUNT_; i++) {
      if (!((isas >> i) & 1u)) continue;
      for (int p = 0; p < ATTNGEN_PHASE_COUNT_; p++) {
        test_case b;
        memset(&b, 0, sizeof b);
        b.model = "generic";
        b.shape = (attngen_shape){6, 3, 17, p ? ATTNGEN_MASK_CROSS : ATTNGEN_MASK_CAUSAL, (attngen_phase)p, ATTNGEN_KV_F32, 0, 0};
        b.isa = (attngen_isa)i;
        add_errors(&v, b);
        if (i == (int)best) {
          if (p == ATTNGEN_PHASE_DECODE) { /* attngen_alloc, and the generic MHA decode kernel on its memory */
            test_case m = b;
            m.kind = CK_ALLOC;
            m.shape = (attngen_shape){8, 8, 128, ATTNGEN_MASK_NONE, ATTNGEN_PHASE_DECODE, ATTNGEN_KV_F32, 0, 0};
            m.seed = 77;
            push(&v, m);
          }
          add_threads(&v, b, subset);
          b.shape = (attngen_shape){4, 1, 80, p ? ATTNGEN_MASK_NONE : ATTNGEN_MASK_CAUSAL_PADDING, (attngen_phase)p, ATTNGEN_KV_F32, 0, 0};
          add_threads(&v, b, subset);
          for (int t = 1; t < ATTNGEN_KV_COUNT_; t++) {
            b.shape = (attngen_shape){8, 2, 128, p ? ATTNGEN_MASK_PADDING : ATTNGEN_MASK_CAUSAL_PADDING, (attngen_phase)p,
                                      (attngen_kv_dtype)t, 0, 0};
            add_threads(&v, b, subset);
            b.shape = (attngen_shape){4, 2, 64, p ? ATTNGEN_MASK_CROSS : ATTNGEN_MASK_CAUSAL, (attngen_phase)p,
                                      (attngen_kv_dtype)t, 0, 0};
            add_errors(&v, b);
          }
        }
      }
    }
  }
  *out = v.v;
  return v.n;
}

/* SPDX-License-Identifier: MIT */
/* Argument fuzzer for the attngen runtime (make test-fuzz; built with -fsanitize=address,undefined
 * -fno-sanitize-recover=all, so any overflow, out-of-bounds access or other UB stops the run).
 *
 * 1. Deterministic checks: sizes whose arithmetic would overflow, an unbounded thread count, an out-of-range
 *    ISA, outputs overlapping inputs or each other, ATTNGEN_ISA values that must not be ignored silently, the
 *    message of an args shape error (only the fields the caller set), and each bad attention feature value.
 * 2. A bounded random loop. Each iteration builds a small problem (a specialized kernel of the linked test
 *    tables or a generic kernel with a random shape; every mask; prefill, chunked prefill, decode, split-KV
 *    decode; random strides, including default fields, gaps, head-major, overlapping input rows, shared
 *    q/k/v buffers, all tensors in one arena, huge strides on dimensions of size 1), then sometimes mutates it
 *    (NULL pointers; 0, negative, INT_MIN, INT_MAX, ATTNGEN_MAX_LEN + 1 sizes; PTRDIFF_MIN/MAX strides;
 *    o = q, o inside q, lse inside o, kv_lens inside o, outputs shifted onto a neighbour; kv_lens out of range;
 *    NaN/inf/negative scale; wrong optional shape fields; bad thread counts; NULL or mismatched kernels).
 *    An oracle written from the rules of attngen.h (not from the runtime's sources) says whether the call must be
 *    accepted, must be refused, or may be either (output strides that interleave without touching).
 *      - accepted calls (attngen_run, attngen_run_parallel or the plan API with items in random order) are
 *        compared with the float64 reference (tests/reference.c) at the suite's tolerance CASE_TOL, rows
 *        with no visible key must be exact zeros / -inf, and nothing but the output elements may change
 *        (outputs sit in canary-filled guard zones; inputs are allocated to their exact extent, so ASan
 *        reports any read past them);
 *      - refused calls must return a negative status, set a new non-empty attngen_last_error(), and leave
 *        every buffer byte-identical. attngen_plan_create is asked first (it writes nothing), so an invalid
 *        call the runtime wrongly accepts is reported without running a kernel on it.
 *    Every third iteration also draws attention features' values (window, sink_tokens, softcap, alibi_slopes,
 *    sinks: 0, NULL, negative, huge, NaN, a value for a kernel without the feature) against a kernel with random
 *    features (feature_iteration: its own rules and tolerance).
 *    Iteration i draws everything from (seed, i) only: FUZZ_ITERS=N replays exactly, FUZZ_ONLY=i one iteration.
 * Environment: FUZZ_SECONDS (default 60), FUZZ_SEED (default 0x5EEDF0220, printed), FUZZ_ITERS, FUZZ_ONLY,
 * FUZZ_VERBOSE=1 (one line per iteration). Exit status 1 on any failure. */
#define _GNU_SOURCE /* sched_setaffinity: a child confined to one CPU runs the thread pool */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attngen.h"
#include "cases.h" /* CASE_TOL */
#include "reference.h"

/* The linked test tables: -D'FUZZ_TABLES(X)=X(t_tail_h2_d17) X(...)' from tests/tests.mk. */
#ifndef FUZZ_TABLES
#define FUZZ_TABLES(X)
#endif
#define FT_DECL(c) extern const attngen_table attngen_table_##c;
FUZZ_TABLES(FT_DECL)
#define FT_ADDR(c) &attngen_table_##c,
static const attngen_table *const g_tables[] = {FUZZ_TABLES(FT_ADDR) NULL};

typedef __int128 i128;

/* ------------------------------------------------------------------------------------------------ */
/* random numbers: splitmix64 */

typedef struct {
  uint64_t s;
} rng;

static uint64_t rnd(rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static int rint_(rng *r, int lo, int hi) { return lo + (int)(rnd(r) % (uint64_t)((int64_t)hi - lo + 1)); }
static int pct(rng *r, int p) { return (int)(rnd(r) % 100) < p; }
static float runit(rng *r) { return (float)((int32_t)(rnd(r) >> 40) - (1 << 23)) / (float)(1 << 23); }
#define PICK(r, arr) ((arr)[rnd(r) % (sizeof(arr) / sizeof((arr)[0]))])

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------------------------------------------ */
/* failures */

static long g_failures;
static char g_ctx[1024]; /* what the current iteration or regression is */

static void failf(const char *fmt, ...) {
  va_list ap;
  g_failures++;
  if (g_failures > 50) return; /* enough to diagnose */
  fprintf(stderr, "FAIL %s: ", g_ctx);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

static int mask_reads_lens(attngen_mask m) {
  return (attngen_mask_features(m) & ATTNGEN_FEATURE_KV_LENS) != 0;
}

/* A message no call under test can produce: set before each call, so a refused call must replace it. */
static const char *set_sentinel_error(void) {
  attngen_shape s = {2, 1, ATTNGEN_MAX_HEAD_DIM + 7, ATTNGEN_MASK_NONE, ATTNGEN_PHASE_PREFILL, ATTNGEN_KV_F32, 0, 0};
  attngen_kernel k;
  (void)attngen_select_generic(&s, ATTNGEN_ISA_SCALAR, &k);
  return attngen_last_error();
}
static char g_sentinel[512];

static void expect_refused(const char *what, int st, int want /* 0: any error */) {
  const char *m = attngen_last_error();
  if (st >= 0) {
    failf("%s: returned %s (%d), expected an error", what, attngen_status_name(st), st);
    return;
  }
  if (want && st != want) failf("%s: returned %s (%d), expected %s (%d)", what, attngen_status_name(st), st,
                                attngen_status_name(want), want);
  if (!m || !m[0]) failf("%s: refused with %s but attngen_last_error() is empty", what, attngen_status_name(st));
  else if (strcmp(m, g_sentinel) == 0)
    failf("%s: refused with %s but attngen_last_error() still holds an older message", what, attngen_status_name(st));
}

/* ------------------------------------------------------------------------------------------------ */
/* buffers: each a malloc'ed block with optional guard zones */

#define GUARD 64
#define MAX_BLOCKS 8
static const uint32_t CANARY = 0x7FBADBADu; /* outputs and guards: a NaN no kernel produces */
static const uint32_t POISON = 0x7FC0DEADu; /* inputs never to be read (spare capacity, gaps, padded keys) */

typedef struct {
  float *base; /* total floats */
  float *snap;
  size_t total;
} blk;

typedef struct {
  blk b[MAX_BLOCKS];
  int n;
} arena;

static float *blk_new(arena *ar, size_t n, size_t guard, uint32_t fill) {
  blk *b = &ar->b[ar->n];
  b->total = n + 2 * guard;
  b->base = malloc(b->total * sizeof(float) + 1);
  b->snap = NULL;
  if (!b->base) {
    fprintf(stderr, "fuzz: out of memory\n");
    exit(2);
  }
  for (size_t i = 0; i < b->total; i++) memcpy(&b->base[i], &fill, sizeof fill);
  ar->n++;
  return b->base + guard;
}
static void arena_snap(arena *ar) {
  for (int i = 0; i < ar->n; i++) {
    blk *b = &ar->b[i];
    free(b->snap);
    b->snap = malloc(b->total * sizeof(float) + 1);
    if (!b->snap) exit(2);
    memcpy(b->snap, b->base, b->total * sizeof(float));
  }
}
static void arena_free(arena *ar) {
  for (int i = 0; i < ar->n; i++) {
    free(ar->b[i].base);
    free(ar->b[i].snap);
  }
  ar->n = 0;
}
/* Is [p, p + bytes) inside one block? */
static int arena_holds(const arena *ar, const void *p, i128 bytes) {
  uintptr_t u = (uintptr_t)p;
  for (int i = 0; i < ar->n; i++) {
    uintptr_t lo = (uintptr_t)ar->b[i].base, hi = lo + ar->b[i].total * sizeof(float);
    if (u >= lo && u <= hi && (i128)(hi - u) >= bytes) return 1;
  }
  return 0;
}
/* Index of the block holding float pointer p, or -1 (and *off its float offset). */
static int arena_find(const arena *ar, const void *p, size_t *off) {
  uintptr_t u = (uintptr_t)p;
  for (int i = 0; i < ar->n; i++) {
    uintptr_t lo = (uintptr_t)ar->b[i].base, hi = lo + ar->b[i].total * sizeof(float);
    if (u >= lo && u < hi) {
      *off = (u - lo) / sizeof(float);
      return i;
    }
  }
  return -1;
}
/* First float that differs from the snapshot, outside the positions marked in allow[block] (may be NULL). */
static int arena_changed(const arena *ar, unsigned char *const *allow, int *blk_out, size_t *off_out) {
  for (int i = 0; i < ar->n; i++) {
    const blk *b = &ar->b[i];
    if (!allow || !allow[i]) {
      if (memcmp(b->base, b->snap, b->total * sizeof(float)) == 0) continue;
    }
    for (size_t t = 0; t < b->total; t++) {
      if (allow && allow[i] && allow[i][t]) continue;
      if (memcmp(&b->base[t], &b->snap[t], sizeof(float)) != 0) {
        *blk_out = i;
        *off_out = t;
        return 1;
      }
    }
  }
  return 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* the oracle: the rules of attngen.h, written independently of runtime/attngen_args.c */

enum { MUST_ACCEPT = 0, EITHER = 1, MUST_REFUSE = 2 };

typedef struct {
  i128 b, s, h;
} rstrides;

/* the dense default of one field (attngen.h: head = head_dim, seq = nheads * head_dim, batch = rows * seq) */
static rstrides resolve(attngen_strides s, i128 rows, i128 nh, i128 d) {
  rstrides r;
  r.h = s.head ? (i128)s.head : d;
  r.s = s.seq ? (i128)s.seq : nh * d;
  r.b = s.batch ? (i128)s.batch : rows * r.s;
  return r;
}
static i128 extent(rstrides s, i128 B, i128 R, i128 H, i128 D) {
  return (B - 1) * s.b + (R - 1) * s.s + (H - 1) * s.h + D;
}

typedef struct {
  int verdict;
  char why[200];
  /* filled when the sizes are sane (verdict != MUST_REFUSE or refused late): */
  i128 eq, ek, ev, eo, el;
  rstrides qs, ks, vs, os;
} oracle_out;

static int refuse(oracle_out *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(o->why, sizeof o->why, fmt, ap);
  va_end(ap);
  o->verdict = MUST_REFUSE;
  return MUST_REFUSE;
}

static int ranges_overlap(const void *a, i128 abytes, const void *b, i128 bbytes) {
  i128 alo = (i128)(uintptr_t)a, blo = (i128)(uintptr_t)b;
  return alo < blo + bbytes && blo < alo + abytes;
}

/* Do the output elements [B][Q][H][D] at strides s ever share an address? (brute force over the extent) */
static int outputs_collide(rstrides s, int B, int Q, int H, int D, i128 ext) {
  size_t n = (size_t)ext;
  unsigned char *seen = calloc(n, 1);
  int hit = 0;
  if (!seen) exit(2);
  for (int b = 0; b < B && !hit; b++)
    for (int i = 0; i < Q && !hit; i++)
      for (int h = 0; h < H && !hit; h++) {
        size_t off = (size_t)(b * s.b + i * s.s + h * s.h);
        for (int e = 0; e < D; e++) {
          if (seen[off + (size_t)e]) {
            hit = 1;
            break;
          }
          seen[off + (size_t)e] = 1;
        }
      }
  free(seen);
  return hit;
}

/* The simple sufficient rule: sorted by stride, each dimension of size > 1 steps over the whole block below. */
static int outputs_nested(rstrides s, int B, int Q, int H, int D) {
  i128 st[3] = {s.h, s.s, s.b};
  int n[3] = {H, Q, B};
  for (int i = 0; i < 3; i++)
    for (int j = i + 1; j < 3; j++)
      if (st[j] < st[i]) {
        i128 t = st[i];
        st[i] = st[j];
        st[j] = t;
        int u = n[i];
        n[i] = n[j];
        n[j] = u;
      }
  i128 span = D;
  for (int i = 0; i < 3; i++) {
    if (n[i] <= 1) continue;
    if (st[i] < span) return 0;
    span = st[i] * n[i];
  }
  return 1;
}

/* lens_count: how many kv_lens entries may be read (the oracle never reads past the caller's array). */
/* plan: the call is attngen_plan_create(..., nthreads, ...) (attngen_run_parallel caps any nthreads instead) */
static int oracle(const attngen_kernel *kern, const attngen_args *a, int plan, int nthreads, int lens_count,
                  oracle_out *o) {
  memset(o, 0, sizeof *o);
  o->verdict = MUST_ACCEPT;
  if (!kern || !kern->info) return refuse(o, "no kernel");
  if (!a) return refuse(o, "no args");
  const attngen_kernel_info *info = kern->info;
  const attngen_shape *s = &kern->shape;
  if (s->heads <= 0 || s->kv_heads <= 0 || s->head_dim <= 0) return refuse(o, "shape sizes not positive");
  if (s->heads % s->kv_heads) return refuse(o, "heads not a multiple of kv_heads");
  if (s->head_dim > ATTNGEN_MAX_HEAD_DIM) return refuse(o, "head_dim above the maximum");
#ifdef ATTNGEN_MAX_HEADS
  if (s->heads > ATTNGEN_MAX_HEADS) return refuse(o, "heads above the maximum");
#endif
  if ((unsigned)s->mask >= ATTNGEN_MASK_COUNT_ || (unsigned)s->phase >= ATTNGEN_PHASE_COUNT_)
    return refuse(o, "mask or phase out of range");
  if ((unsigned)s->kv_dtype >= ATTNGEN_KV_COUNT_) return refuse(o, "kv_dtype out of range");
  if (info->phase != s->phase) return refuse(o, "kernel phase differs from the bound shape");
  if (info->kv_dtype != s->kv_dtype) return refuse(o, "kernel storage type differs from the bound shape");
  if (info->heads && (info->heads != s->heads || info->kv_heads != s->kv_heads || info->head_dim != s->head_dim ||
                      info->mask != s->mask))
    return refuse(o, "specialized kernel differs from the bound shape");
  if ((a->heads && a->heads != s->heads) || (a->kv_heads && a->kv_heads != s->kv_heads) ||
      (a->head_dim && a->head_dim != s->head_dim))
    return refuse(o, "optional shape fields disagree");
  if (!a->q || !a->k || !a->v || !a->o) return refuse(o, "NULL tensor");
  /* the loop's kernels read fp32 caches: any field of another storage type set is refused (ATTNGEN_ERR_DTYPE) */
  if (a->k_f16 || a->v_f16 || a->k_bf16 || a->v_bf16 || a->k_i8 || a->v_i8 || a->k_scale || a->v_scale)
    return refuse(o, "a K/V field of another storage type set");
  if (a->batch <= 0 || a->q_len <= 0 || a->kv_len <= 0 || a->kv_capacity < 0) return refuse(o, "non-positive size");
  if (a->q_len > ATTNGEN_MAX_LEN || a->kv_len > ATTNGEN_MAX_LEN || a->kv_capacity > ATTNGEN_MAX_LEN)
    return refuse(o, "length above ATTNGEN_MAX_LEN");
  if (a->kv_capacity > 0 && a->kv_len > a->kv_capacity) return refuse(o, "kv_len > kv_capacity");
  if (s->phase == ATTNGEN_PHASE_DECODE && a->q_len > ATTNGEN_DECODE_MAX_Q) return refuse(o, "decode q_len > 8");
  if (!(a->scale >= 0.0f) || isinf(a->scale)) return refuse(o, "bad scale");
  const int lens = mask_reads_lens(s->mask);
  if (lens && !a->kv_lens) return refuse(o, "kv_lens NULL");
  const attngen_strides *st[4] = {&a->q_stride, &a->k_stride, &a->v_stride, &a->o_stride};
  for (int i = 0; i < 4; i++)
    if (st[i]->batch < 0 || st[i]->seq < 0 || st[i]->head < 0) return refuse(o, "negative stride");
  const i128 B = a->batch, H = s->heads, KVH = s->kv_heads, D = s->head_dim;
  const i128 cap = a->kv_capacity > 0 ? a->kv_capacity : a->kv_len;
  o->qs = resolve(a->q_stride, a->q_len, H, D);
  o->ks = resolve(a->k_stride, cap, KVH, D);
  o->vs = resolve(a->v_stride, cap, KVH, D);
  o->os = resolve(a->o_stride, a->q_len, H, D);
  /* a default the runtime cannot represent saturates at PTRDIFF_MAX; that only matters for a used dimension */
  const i128 maxf = (i128)(PTRDIFF_MAX / (ptrdiff_t)sizeof(float));
  rstrides *rs[4] = {&o->qs, &o->ks, &o->vs, &o->os};
  for (int i = 0; i < 4; i++) {
    if (rs[i]->s > PTRDIFF_MAX) rs[i]->s = PTRDIFF_MAX;
    if (rs[i]->b > PTRDIFF_MAX) rs[i]->b = PTRDIFF_MAX;
  }
  o->eq = extent(o->qs, B, a->q_len, H, D);
  o->ek = extent(o->ks, B, a->kv_len, KVH, D);
  o->ev = extent(o->vs, B, a->kv_len, KVH, D);
  o->eo = extent(o->os, B, a->q_len, H, D);
  o->el = a->lse ? B * H * a->q_len : 0;
  if (o->eq > maxf || o->ek > maxf || o->ev > maxf || o->eo > maxf || o->el > maxf)
    return refuse(o, "a tensor spans more than PTRDIFF_MAX bytes");
  const i128 top = (i128)UINTPTR_MAX;
  if ((i128)(uintptr_t)a->q + 4 * o->eq > top || (i128)(uintptr_t)a->k + 4 * o->ek > top ||
      (i128)(uintptr_t)a->v + 4 * o->ev > top || (i128)(uintptr_t)a->o + 4 * o->eo > top ||
      (a->lse && (i128)(uintptr_t)a->lse + 4 * o->el > top))
    return refuse(o, "a tensor runs past the address space");
  /* outputs must not overlap inputs or each other (whole address ranges) */
  const void *in[4] = {a->q, a->k, a->v, lens ? (const void *)a->kv_lens : NULL};
  const i128 inb[4] = {4 * o->eq, 4 * o->ek, 4 * o->ev, lens ? 4 * B : 0};
  static const char *in_name[4] = {"q", "k", "v", "kv_lens"};
  for (int i = 0; i < 4; i++) {
    if (!in[i]) continue;
    if (ranges_overlap(a->o, 4 * o->eo, in[i], inb[i])) return refuse(o, "o overlaps %s", in_name[i]);
    if (a->lse && ranges_overlap(a->lse, 4 * o->el, in[i], inb[i])) return refuse(o, "lse overlaps %s", in_name[i]);
  }
  if (a->lse && ranges_overlap(a->o, 4 * o->eo, a->lse, 4 * o->el)) return refuse(o, "o and lse overlap");
  /* output rows must not overlap */
  if (o->eo <= ((i128)1 << 26)) {
    if (outputs_collide(o->os, a->batch, a->q_len, s->heads, s->head_dim, o->eo))
      return refuse(o, "output rows overlap");
    if (!outputs_nested(o->os, a->batch, a->q_len, s->heads, s->head_dim)) {
      o->verdict = EITHER;
      snprintf(o->why, sizeof o->why, "output rows interleave without touching");
    }
  } else if (!outputs_nested(o->os, a->batch, a->q_len, s->heads, s->head_dim)) {
    o->verdict = EITHER;
    snprintf(o->why, sizeof o->why, "huge interleaved output");
  }
  if (lens) {
    if (a->batch > lens_count) {
      o->verdict = -1; /* cannot be judged without reading past the caller's array: not run */
      return -1;
    }
    for (int b = 0; b < a->batch; b++)
      if (a->kv_lens[b] < 0 || a->kv_lens[b] > a->kv_len) return refuse(o, "kv_lens[%d] out of range", b);
  }
  if (plan && (nthreads < 1 || nthreads > ATTNGEN_MAX_THREADS)) return refuse(o, "nthreads %d", nthreads);
  return o->verdict;
}

/* ------------------------------------------------------------------------------------------------ */
/* checking an accepted call */

static double g_max_err, g_max_lse_err;

static void mark(unsigned char **allow, const arena *ar, const float *p) {
  size_t off;
  int bi = arena_find(ar, p, &off);
  if (bi >= 0) allow[bi][off] = 1;
}

/* Compares the outputs of an accepted call with the reference, and checks nothing else changed. */
static void check_accepted(const arena *ar, const attngen_shape *sh, const attngen_args *a, const oracle_out *or) {
  const int B = a->batch, Q = a->q_len, H = sh->heads, D = sh->head_dim;
  double *ref = malloc(sizeof(double) * (size_t)B * Q * H * D), *ref_lse = malloc(sizeof(double) * (size_t)B * H * Q);
  unsigned char *allow[MAX_BLOCKS] = {0};
  if (!ref || !ref_lse) exit(2);
  ref_attention(sh, a, ref, ref_lse);
  for (int i = 0; i < ar->n; i++) {
    allow[i] = calloc(ar->b[i].total, 1);
    if (!allow[i]) exit(2);
  }
  double maxref = 1.0, worst = 0.0, worst_lse = 0.0;
  /* A NaN in the reference: a key the row sees holds NaN. Inputs are filled finite, so only a mutation that lays the
   * same buffers out anew (kv_capacity = 0 with default strides) makes a call read the POISON between them; that
   * call is valid and its NaN K/V are data. The row must then be NaN too, and rows sharing its tiles may be NaN
   * (0 x NaN in P.V for a key they do not see: README, "NaN and Inf in K/V"); rows that see no key stay zero. */
  int nan_in = 0;
  for (size_t i = 0, n = (size_t)B * Q * H * D; i < n; i++) {
    if (isnan(ref[i])) nan_in = 1;
    else if (fabs(ref[i]) > maxref) maxref = fabs(ref[i]);
  }
  int bad = 0;
  for (int b = 0; b < B && !bad; b++)
    for (int i = 0; i < Q && !bad; i++)
      for (int h = 0; h < H && !bad; h++) {
        const int empty = isinf(ref_lse[((size_t)b * H + h) * Q + i]);
        const float *row = a->o + (ptrdiff_t)(b * or->os.b + i * or->os.s + h * or->os.h);
        for (int e = 0; e < D; e++) {
          const double want = ref[(((size_t)b * Q + i) * H + h) * D + e];
          const float got = row[e];
          mark(allow, ar, &row[e]);
          if (isnan(want)) {
            if (!isnan(got)) {
              failf("a visible key holds NaN (reference NaN), got %.9g at b=%d i=%d h=%d e=%d", (double)got, b, i, h, e);
              bad = 1;
              break;
            }
            continue;
          }
          if (nan_in && !empty && isnan(got)) continue; /* a row sharing a tile with a NaN V row (see above) */
          if (isnan(got) || isinf(got)) {
            failf("non-finite output %g at b=%d i=%d h=%d e=%d (ref %.9g)", (double)got, b, i, h, e, want);
            bad = 1;
            break;
          }
          if (empty && got != 0.0f) {
            failf("row with no visible key must be zero: %.9g at b=%d i=%d h=%d e=%d", (double)got, b, i, h, e);
            bad = 1;
            break;
          }
          const double err = fabs((double)got - want) / maxref;
          if (err > worst) worst = err;
          if (err > CASE_TOL) {
            failf("error %.3g > %.0e at b=%d i=%d h=%d e=%d: got %.9g want %.9g", err, CASE_TOL, b, i, h, e,
                  (double)got, want);
            bad = 1;
            break;
          }
        }
      }
  if (a->lse && !bad)
    for (size_t idx = 0, n = (size_t)B * H * Q; idx < n; idx++) {
      const float got = a->lse[idx];
      const double want = ref_lse[idx];
      mark(allow, ar, &a->lse[idx]);
      if (isnan(want)) {
        if (!isnan(got)) {
          failf("lse: a visible key holds NaN (reference NaN), got %g at %zu", (double)got, idx);
          break;
        }
        continue;
      }
      if (isinf(want)) {
        if (!(isinf(got) && got < 0)) {
          failf("lse of a row with no visible key must be -inf, got %g at %zu", (double)got, idx);
          break;
        }
        continue;
      }
      const double err = fabs((double)got - want) / (fabs(want) > 1.0 ? fabs(want) : 1.0);
      if (!(err <= CASE_TOL)) {
        failf("lse error %.3g at %zu: got %.9g want %.9g", err, idx, (double)got, want);
        break;
      }
      if (err > worst_lse) worst_lse = err;
    }
  int bi;
  size_t off;
  if (!bad && arena_changed(ar, allow, &bi, &off))
    failf("accepted call modified block %d at float %zu, which is no output element", bi, off);
  if (worst > g_max_err) g_max_err = worst;
  if (worst_lse > g_max_lse_err) g_max_lse_err = worst_lse;
  for (int i = 0; i < ar->n; i++) free(allow[i]);
  free(ref);
  free(ref_lse);
}

/* ------------------------------------------------------------------------------------------------ */
/* entries */

enum { E_RUN, E_PARALLEL, E_PLAN, E_COUNT };
static const char *const entry_names[E_COUNT] = {"attngen_run", "attngen_run_parallel", "plan API"};

/* Runs a whole plan: items in random order, on random thread indices (one OS thread), with misuse first. */
static int run_plan(rng *r, const attngen_kernel *k, const attngen_args *a, int nthreads, const arena *ar) {
  attngen_plan *p = NULL;
  int st = attngen_plan_create(k, a, nthreads, &p);
  if (st != ATTNGEN_OK) return st;
  const size_t n = attngen_plan_items(p);
  if (n == 0) failf("plan without items");
  /* misuse of a valid plan: refused, nothing written */
  expect_refused("attngen_plan_run(end past the items)", attngen_plan_run(p, 0, n + 1, 0), ATTNGEN_ERR_SIZE);
  expect_refused("attngen_plan_run(begin > end)", attngen_plan_run(p, 1, 0, 0), ATTNGEN_ERR_SIZE);
  expect_refused("attngen_plan_run(thread = nthreads)", attngen_plan_run(p, 0, 1, nthreads), ATTNGEN_ERR_SIZE);
  expect_refused("attngen_plan_run(thread = -1)", attngen_plan_run(p, 0, 1, -1), ATTNGEN_ERR_SIZE);
  expect_refused("attngen_plan_run(NULL plan)", attngen_plan_run(NULL, 0, 1, 0), ATTNGEN_ERR_NULL);
  {
    int bi;
    size_t off;
    if (arena_changed(ar, NULL, &bi, &off)) failf("a refused attngen_plan_run wrote block %d float %zu", bi, off);
  }
  size_t *order = malloc(sizeof(size_t) * (n ? n : 1));
  if (!order) exit(2);
  for (size_t i = 0; i < n; i++) order[i] = i;
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)(rnd(r) % i), t = order[i - 1];
    order[i - 1] = order[j];
    order[j] = t;
  }
  for (size_t i = 0; i < n && st == ATTNGEN_OK; i++) st = attngen_plan_run(p, order[i], order[i] + 1, rint_(r, 0, nthreads - 1));
  free(order);
  if (st == ATTNGEN_OK) st = attngen_plan_finish(p);
  if (st != ATTNGEN_OK) failf("valid plan: run/finish returned %s (%s)", attngen_status_name(st), attngen_last_error());
  attngen_plan_destroy(p);
  return ATTNGEN_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* one iteration */

typedef struct {
  attngen_kernel k;
  int specialized;
  char name[160];
} kpick;

static const attngen_kernel_info *g_spec[512];
static int g_nspec;
static const attngen_kernel_info *g_feat[256]; /* specialized kernels with attention features, for feature_iteration */
static int g_nfeat;

static void collect_specialized(void) {
  const unsigned isas = attngen_cpu_isas();
  for (int t = 0; g_tables[t]; t++)
    for (int i = 0; i < g_tables[t]->count && g_nspec < 512; i++) {
      const attngen_kernel_info *ki = &g_tables[t]->kernels[i];
      if (!((unsigned)ki->isa < 32 && ((isas >> ki->isa) & 1u)) || ki->page_size) continue; /* paged: fuzz_paged */
      if (ki->features == 0) g_spec[g_nspec++] = ki;
      else if (g_nfeat < 256 && g_tables[t]->params.rope.style == ATTNGEN_ROPE_NONE) /* its reference has no RoPE */
        g_feat[g_nfeat++] = ki;
    }
}

static const attngen_table *table_of(const attngen_kernel_info *ki) {
  for (int t = 0; g_tables[t]; t++)
    if (ki >= g_tables[t]->kernels && ki < g_tables[t]->kernels + g_tables[t]->count) return g_tables[t];
  return NULL;
}

static int pick_kernel(rng *r, kpick *kp) {
  const unsigned isas = attngen_cpu_isas();
  memset(kp, 0, sizeof *kp);
  if (g_nspec > 0 && pct(r, 50)) {
    const attngen_kernel_info *ki = g_spec[rnd(r) % (uint64_t)g_nspec];
    attngen_shape s = {ki->heads, ki->kv_heads, ki->head_dim, ki->mask, ki->phase, ki->kv_dtype, ki->features, 0};
    int st = attngen_select_specialized(table_of(ki), &s, ki->isa, &kp->k);
    if (st != ATTNGEN_OK || kp->k.info != ki) {
      failf("attngen_select_specialized(%s): %s (%s)", ki->name, attngen_status_name(st), attngen_last_error());
      return -1;
    }
    kp->specialized = 1;
    snprintf(kp->name, sizeof kp->name, "%s", ki->name);
    return 0;
  }
  static const int dims[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 48, 63, 64, 65, 72, 96, 128};
  attngen_shape s;
  memset(&s, 0, sizeof s); /* kv_dtype 0: an fp32 cache */
  s.kv_heads = rint_(r, 1, 3);
  s.heads = s.kv_heads * rint_(r, 1, 4);
  s.head_dim = pct(r, 3) ? PICK(r, ((const int[]){200, 256, 320, 512})) : PICK(r, dims);
  s.mask = (attngen_mask)rint_(r, 0, ATTNGEN_MASK_COUNT_ - 1);
  s.phase = (attngen_phase)rint_(r, 0, ATTNGEN_PHASE_COUNT_ - 1);
  int isa;
  do isa = rint_(r, 0, ATTNGEN_ISA_COUNT_ - 1);
  while (!((isas >> isa) & 1u));
  int st = attngen_select_generic(&s, (attngen_isa)isa, &kp->k);
  if (st != ATTNGEN_OK) {
    failf("attngen_select_generic: %s (%s)", attngen_status_name(st), attngen_last_error());
    return -1;
  }
  snprintf(kp->name, sizeof kp->name, "generic h%d kv%d d%d %s %s %s", s.heads, s.kv_heads, s.head_dim,
           attngen_mask_name(s.mask), attngen_phase_name(s.phase), attngen_isa_name((attngen_isa)isa));
  return 0;
}

/* Random strides for a [B][R][H][D] tensor (0 fields mean the default). */
static attngen_strides gen_strides(rng *r, int B, int R, int H, int D, int is_out) {
  attngen_strides s = {0, 0, 0};
  int style = rint_(r, 0, 9);
  if (style <= 2) return s; /* dense */
  /* nested layout in a random dimension order, with gaps */
  int order[3] = {0, 1, 2}; /* 0 head, 1 seq, 2 batch: innermost first */
  for (int i = 2; i > 0; i--) {
    int j = rint_(r, 0, i), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  const int n[3] = {H, R, B};
  ptrdiff_t span = D;
  ptrdiff_t v[3];
  for (int i = 0; i < 3; i++) {
    ptrdiff_t stride = span + (pct(r, 50) ? 0 : rint_(r, 1, 5));
    v[order[i]] = stride;
    span = stride * n[order[i]];
  }
  s.head = v[0];
  s.seq = v[1];
  s.batch = v[2];
  if (pct(r, 15)) { /* one field back to its default (may make output rows overlap: the oracle decides) */
    switch (rint_(r, 0, 2)) {
    case 0: s.head = 0; break;
    case 1: s.seq = 0; break;
    default: s.batch = 0; break;
    }
  }
  if (!is_out && pct(r, 10)) { /* overlapping input rows: legal, inputs are only read */
    if (H > 1 && pct(r, 50)) s.head = rint_(r, 1, D);
    else if (R > 1) s.seq = rint_(r, 1, D);
  }
  if (pct(r, 15)) { /* a huge stride on a dimension of size 1: never used, must be accepted */
    static const ptrdiff_t huge[] = {PTRDIFF_MAX, PTRDIFF_MAX / 2 + 1, (ptrdiff_t)1 << 40, 1};
    if (B == 1) s.batch = PICK(r, huge);
    else if (R == 1) s.seq = PICK(r, huge);
    else if (H == 1) s.head = PICK(r, huge);
  }
  return s;
}

typedef struct {
  long iters, accepted, refused, either_acc, either_ref, skipped, by_entry[E_COUNT], select_checks;
  long regress;
} stats;
static stats g_st;

/* One mutation of the args, the bound kernel or the entry. Arithmetic uses the unmutated sizes (B, KV, cap) only:
 * an earlier mutation may have left INT_MIN or INT_MAX in a. */
static const char *mutate(rng *r, const kpick *kp, attngen_args *a, attngen_kernel *k, int *entry, int *nthreads,
                          const oracle_out *base, const attngen_args *orig, int B, int KV, int cap, int lens_alloc,
                          int32_t *lens_store) {
  static char what[160];
  const attngen_shape *sh = &kp->k.shape;
  const int pad = mask_reads_lens(sh->mask);
  attngen_strides *tens[4] = {&a->q_stride, &a->k_stride, &a->v_stride, &a->o_stride};
  static const char *tn[4] = {"q", "k", "v", "o"};
  static const char *fn[3] = {"batch", "seq", "head"};
  const int m = rint_(r, 0, 21);
  switch (m) {
  case 0: {
    if (pct(r, 10)) { /* the untyped setter: fp32 (the loop's kernels' type) keeps the call valid, another type sets
                       * its own fields instead (refused by the run), a value that is no type is refused and changes
                       * nothing */
      const int t = rint_(r, -2, ATTNGEN_KV_COUNT_ + 1);
      attngen_args before;
      memcpy(&before, a, sizeof before); /* padding included: memcmp below */
      const int st = attngen_args_set_kv(a, (attngen_kv_dtype)t, orig->k, orig->v, NULL, NULL);
      if ((t < 0 || t >= ATTNGEN_KV_COUNT_) != (st != ATTNGEN_OK))
        failf("attngen_args_set_kv(kv_dtype %d) returned %s", t, attngen_status_name(st));
      else if (st != ATTNGEN_OK && memcmp(&before, a, sizeof before))
        failf("a refused attngen_args_set_kv(kv_dtype %d) changed the args", t);
      snprintf(what, sizeof what, "attngen_args_set_kv(kv_dtype %d)", t);
      break;
    }
    if (pct(r, 25)) { /* a field of another storage type set as well (an fp32 kernel): refused, never read */
      static const char *names[8] = {"k_f16", "v_f16", "k_bf16", "v_bf16", "k_i8", "v_i8", "k_scale", "v_scale"};
      const int w = rint_(r, 0, 7);
      const void *p = pct(r, 50) ? (const void *)orig->k : (const void *)orig->q;
      switch (w) {
      case 0: a->k_f16 = (const attngen_f16 *)p; break;
      case 1: a->v_f16 = (const attngen_f16 *)p; break;
      case 2: a->k_bf16 = (const attngen_bf16 *)p; break;
      case 3: a->v_bf16 = (const attngen_bf16 *)p; break;
      case 4: a->k_i8 = (const int8_t *)p; break;
      case 5: a->v_i8 = (const int8_t *)p; break;
      case 6: a->k_scale = (const float *)p; break;
      default: a->v_scale = (const float *)p; break;
      }
      snprintf(what, sizeof what, "%s set (an fp32 kernel)", names[w]);
      break;
    }
    int w = rint_(r, 0, pad ? 4 : 3);
    if (w == 0) a->q = NULL;
    else if (w == 1) a->k = NULL;
    else if (w == 2) a->v = NULL;
    else if (w == 3) a->o = NULL;
    else a->kv_lens = NULL;
    snprintf(what, sizeof what, "%s = NULL", w == 0 ? "q" : w == 1 ? "k" : w == 2 ? "v" : w == 3 ? "o" : "kv_lens");
    break;
  }
  case 1: {
    static const int vals[] = {0, -1, INT_MIN, INT_MAX};
    a->batch = PICK(r, vals);
    if (pad && a->batch > lens_alloc) a->batch = -7;
    snprintf(what, sizeof what, "batch = %d", a->batch);
    break;
  }
  case 2: {
    static const int vals[] = {0, -1, -5, INT_MIN, INT_MAX, ATTNGEN_MAX_LEN, ATTNGEN_MAX_LEN + 1, ATTNGEN_DECODE_MAX_Q + 1};
    a->q_len = PICK(r, vals);
    snprintf(what, sizeof what, "q_len = %d", a->q_len);
    break;
  }
  case 3: {
    static const int vals[] = {0, -1, INT_MIN, INT_MAX, ATTNGEN_MAX_LEN + 1};
    a->kv_len = pct(r, 30) && cap > 0 ? cap + 1 : PICK(r, vals);
    snprintf(what, sizeof what, "kv_len = %d (kv_capacity %d)", a->kv_len, a->kv_capacity);
    break;
  }
  case 4: {
    const int vals[] = {-1, INT_MIN, INT_MAX, ATTNGEN_MAX_LEN + 1, ATTNGEN_MAX_LEN, KV - 1};
    a->kv_capacity = PICK(r, vals);
    snprintf(what, sizeof what, "kv_capacity = %d (kv_len %d)", a->kv_capacity, a->kv_len);
    break;
  }
  case 5:
    a->kv_len = a->kv_capacity = INT_MAX;
    snprintf(what, sizeof what, "kv_len = kv_capacity = INT_MAX");
    break;
  case 6:
  case 7: {
    static const ptrdiff_t neg[] = {-1, -17, PTRDIFF_MIN, PTRDIFF_MIN / 2};
    static const ptrdiff_t huge[] = {PTRDIFF_MAX,        PTRDIFF_MAX / 2 + 1, PTRDIFF_MAX / 4 + 1, PTRDIFF_MAX / 4,
                                     (ptrdiff_t)1 << 61, (ptrdiff_t)1 << 40,  PTRDIFF_MAX / 8};
    const int t = rint_(r, 0, 3), f = rint_(r, 0, 2);
    const ptrdiff_t v = m == 6 ? PICK(r, neg) : PICK(r, huge);
    ptrdiff_t *field = f == 0 ? &tens[t]->batch : f == 1 ? &tens[t]->seq : &tens[t]->head;
    *field = v;
    snprintf(what, sizeof what, "%s %s stride = %td", tn[t], fn[f], v);
    break;
  }
  case 8: { /* output rows that overlap */
    const int f = rint_(r, 0, 2);
    const ptrdiff_t v = pct(r, 50) ? 1 : sh->head_dim > 1 ? sh->head_dim - 1 : 1;
    ptrdiff_t *field = f == 0 ? &a->o_stride.batch : f == 1 ? &a->o_stride.seq : &a->o_stride.head;
    *field = v;
    snprintf(what, sizeof what, "o %s stride = %td", fn[f], v);
    break;
  }
  case 9:
  case 10: { /* an output on an input */
    const int w = rint_(r, 0, 2);
    const float *in = w == 0 ? orig->q : w == 1 ? orig->k : orig->v;
    const i128 ein = w == 0 ? base->eq : w == 1 ? base->ek : base->ev;
    const int how = rint_(r, 0, 3);
    size_t off = how == 0 ? 0 : how == 1 ? (size_t)(rnd(r) % (uint64_t)ein) : how == 2 ? (size_t)ein - 1 : (size_t)ein;
    float *p = (float *)(uintptr_t)(in + off);
    if (a->lse && pct(r, 30)) a->lse = p;
    else a->o = p;
    snprintf(what, sizeof what, "%s at %s + %zu (extent %zu)", a->o == p ? "o" : "lse", w == 0 ? "q" : w == 1 ? "k" : "v",
             off, (size_t)ein);
    break;
  }
  case 11: { /* lse inside o, or o inside lse */
    const int how = rint_(r, 0, 3);
    if (how == 0) a->lse = orig->o;
    else if (how == 1) a->lse = orig->o + rnd(r) % (uint64_t)base->eo;
    else if (how == 2) a->lse = orig->o + (size_t)base->eo - 1;
    else {
      float *l = orig->lse ? orig->lse : orig->o + (size_t)base->eo + 3; /* in the guard zone or the arena */
      a->lse = l;
      a->o = l + rnd(r) % (uint64_t)base->eo;
    }
    snprintf(what, sizeof what, "lse/o overlap (%d)", how);
    break;
  }
  case 12:
    if (pad) {
      static const int32_t vals[] = {-1, INT32_MIN, INT32_MAX};
      const int b = rint_(r, 0, B - 1);
      if (a->kv_lens) memcpy(lens_store, a->kv_lens, sizeof(int32_t) * (size_t)B);
      else memset(lens_store, 0, sizeof(int32_t) * (size_t)B);
      lens_store[b] = pct(r, 50) ? KV + 1 : PICK(r, vals);
      a->kv_lens = lens_store;
      snprintf(what, sizeof what, "kv_lens[%d] = %d (kv_len %d)", b, lens_store[b], KV);
      break;
    }
    /* fall through */
  case 13:
    if (pad) { /* kv_lens inside o (valid values) */
      /* the caller copies valid values there, as a caller sharing the buffer would have */
      a->kv_lens = (const int32_t *)(const void *)(orig->o + rnd(r) % (uint64_t)base->eo);
      snprintf(what, sizeof what, "kv_lens inside o");
      break;
    }
    /* fall through */
  case 14: {
    const float vals[] = {NAN, INFINITY, -INFINITY, -1.0f, -FLT_MIN, -0.0f, FLT_MIN};
    a->scale = PICK(r, vals);
    snprintf(what, sizeof what, "scale = %g", (double)a->scale);
    break;
  }
  case 15: {
    const int w = rint_(r, 0, 2);
    static const int vals[] = {-1, INT_MIN, INT_MAX, 1};
    int v = pct(r, 50) ? PICK(r, vals) : (w == 0 ? sh->heads : w == 1 ? sh->kv_heads : sh->head_dim) + 1;
    if (w == 0) a->heads = v;
    else if (w == 1) a->kv_heads = v;
    else a->head_dim = v;
    snprintf(what, sizeof what, "args.%s = %d", w == 0 ? "heads" : w == 1 ? "kv_heads" : "head_dim", v);
    break;
  }
  case 16: {
    static const int vals[] = {0, -1, INT_MIN, ATTNGEN_MAX_THREADS + 1, 1 << 20, INT_MAX};
    *entry = E_PLAN;
    *nthreads = PICK(r, vals);
    snprintf(what, sizeof what, "plan nthreads = %d", *nthreads);
    break;
  }
  case 17: {
    static const int vals[] = {0, -1, INT_MIN, ATTNGEN_MAX_HEAD_DIM + 1, INT_MAX};
    const int w = rint_(r, 0, 6);
    if (w == 6) { /* a storage type the kernel does not read, or none at all */
      k->shape.kv_dtype = (attngen_kv_dtype)PICK(r, ((const int[]){ATTNGEN_KV_F16, ATTNGEN_KV_INT8_G32, ATTNGEN_KV_COUNT_, -1}));
      snprintf(what, sizeof what, "bound shape kv_dtype %d (an fp32 kernel)", (int)k->shape.kv_dtype);
      break;
    }
    if (w == 0) k->shape.heads = PICK(r, vals);
    else if (w == 1) k->shape.kv_heads = PICK(r, vals);
    else if (w == 2) k->shape.head_dim = PICK(r, vals);
    else if (w == 3) k->shape.mask = (attngen_mask)PICK(r, ((const int[]){-1, ATTNGEN_MASK_COUNT_, INT_MAX}));
    else if (w == 4) k->shape.phase = (attngen_phase)PICK(r, ((const int[]){-1, ATTNGEN_PHASE_COUNT_, INT_MIN}));
    else k->shape.kv_heads = k->shape.heads + 1;
    snprintf(what, sizeof what, "bound shape h%d kv%d d%d mask %d phase %d", k->shape.heads, k->shape.kv_heads,
             k->shape.head_dim, (int)k->shape.mask, (int)k->shape.phase);
    break;
  }
  case 18:
    if (kp->specialized) { /* a specialized kernel bound to another shape */
      /* (an earlier mutation may have left INT_MAX there) */
      k->shape.head_dim = k->shape.head_dim == INT_MAX ? 1 : k->shape.head_dim + 1;
      snprintf(what, sizeof what, "specialized kernel bound to head_dim %d", k->shape.head_dim);
    } else {
      /* an earlier mutation may have left an invalid phase (INT_MIN: 1 - it overflowed, seed 66): it stays */
      if (k->shape.phase == ATTNGEN_PHASE_PREFILL) k->shape.phase = ATTNGEN_PHASE_DECODE;
      else if (k->shape.phase == ATTNGEN_PHASE_DECODE) k->shape.phase = ATTNGEN_PHASE_PREFILL;
      snprintf(what, sizeof what, "generic kernel bound to the other phase");
    }
    break;
  case 19:
    if (sh->phase == ATTNGEN_PHASE_DECODE) {
      a->q_len = ATTNGEN_DECODE_MAX_Q + rint_(r, 1, 100);
      snprintf(what, sizeof what, "decode q_len = %d", a->q_len);
    } else {
      a->kv_capacity = ATTNGEN_MAX_LEN; /* valid for batch 1 (spare rows are never read) */
      snprintf(what, sizeof what, "kv_capacity = ATTNGEN_MAX_LEN");
    }
    break;
  case 20:
    a->q_len = INT_MAX;
    snprintf(what, sizeof what, "q_len = INT_MAX");
    break;
  default:
    if (sh->phase == ATTNGEN_PHASE_DECODE) {
      a->kv_len = INT_MAX;
      a->kv_capacity = 0;
      snprintf(what, sizeof what, "decode kv_len = INT_MAX");
    } else {
      a->o_stride.batch = PTRDIFF_MAX / 2 + 1;
      snprintf(what, sizeof what, "o batch stride = PTRDIFF_MAX/2+1");
    }
    break;
  }
  return what;
}

static void one_iteration(uint64_t seed, long it) {
  rng r = {seed ^ ((uint64_t)it * 0xD1B54A32D192ED03ull)};
  (void)rnd(&r);
  kpick kp;
  snprintf(g_ctx, sizeof g_ctx, "iteration %ld (FUZZ_SEED=%llu FUZZ_ONLY=%ld)", it, (unsigned long long)seed, it);
  if (pick_kernel(&r, &kp)) return;
  const attngen_shape sh = kp.k.shape;
  const int H = sh.heads, KVH = sh.kv_heads, D = sh.head_dim;
  const int pad = mask_reads_lens(sh.mask);

  /* sizes */
  attngen_args a;
  memset(&a, 0, sizeof a);
  const int B = pct(&r, 60) ? 1 : rint_(&r, 2, 3);
  int Q, KV;
  if (sh.phase == ATTNGEN_PHASE_DECODE) {
    Q = rint_(&r, 1, ATTNGEN_DECODE_MAX_Q);
    KV = pct(&r, 12) && B <= 2 ? rint_(&r, 1024, 1100) : rint_(&r, 1, 70); /* long: split-KV */
  } else {
    Q = pct(&r, 20) ? rint_(&r, 25, 70) : rint_(&r, 1, 24);
    KV = pct(&r, 50) ? Q : rint_(&r, 1, 80); /* chunked prefill (Q < KV) and Q > KV */
  }
  if (D >= 256) { /* keep the sanitizer build fast */
    if (Q > 16) Q = 16;
    if (KV > 40 && KV < 1024) KV = 40;
  }
  const int cap = pct(&r, 50) ? 0 : KV + rint_(&r, 0, 6);
  a.batch = B;
  a.q_len = Q;
  a.kv_len = KV;
  a.kv_capacity = cap;
  a.scale = pct(&r, 70) ? 0.0f : (float)(2.0 / sqrt((double)D)) * (0.05f + 0.95f * (runit(&r) + 1.0f) / 2.0f);
  if (pct(&r, 30)) {
    a.heads = H;
    a.kv_heads = pct(&r, 50) ? KVH : 0;
    a.head_dim = pct(&r, 50) ? D : 0;
  }
  const int rows_k = cap > 0 ? cap : KV;
  a.q_stride = gen_strides(&r, B, Q, H, D, 0);
  a.k_stride = gen_strides(&r, B, rows_k, KVH, D, 0);
  a.v_stride = pct(&r, 30) ? a.k_stride : gen_strides(&r, B, rows_k, KVH, D, 0);
  a.o_stride = gen_strides(&r, B, Q, H, D, 1);
  const int want_lse = pct(&r, 60);

  /* extents of the base problem (the oracle's arithmetic) */
  oracle_out ob;
  {
    attngen_args t = a;
    float dummy[1];
    int32_t lens_dummy[8] = {0};
    t.q = t.k = t.v = dummy;
    t.o = (float *)(uintptr_t)1;
    t.lse = NULL;
    t.kv_lens = lens_dummy;
    (void)oracle(&kp.k, &t, 0, 1, 8, &ob);
    if (ob.eq <= 0 || ob.eq > ((i128)1 << 28) || ob.ek > ((i128)1 << 28) || ob.ev > ((i128)1 << 28) ||
        ob.eo > ((i128)1 << 28)) {
      g_st.skipped++;
      return;
    }
  }
  const size_t eq = (size_t)ob.eq, ek = (size_t)ob.ek, ev = (size_t)ob.ev, eo = (size_t)ob.eo;
  const size_t el = (size_t)B * H * Q;

  /* buffers: separate blocks (inputs exact, outputs in guards), one shared input block, or one arena */
  arena ar = {.n = 0};
  float *q, *k, *v, *o, *lse;
  const int mode = rint_(&r, 0, 9); /* 0-6 separate, 7 shared q/k/v, 8-9 arena */
  if (mode <= 6) {
    q = blk_new(&ar, eq, 0, POISON);
    k = blk_new(&ar, ek, 0, POISON);
    v = blk_new(&ar, ev, 0, POISON);
    o = blk_new(&ar, eo, GUARD, CANARY);
    lse = blk_new(&ar, el, GUARD, CANARY);
  } else if (mode == 7) {
    size_t m = eq > ek ? eq : ek;
    if (ev > m) m = ev;
    q = k = v = blk_new(&ar, m, 0, POISON);
    o = blk_new(&ar, eo, GUARD, CANARY);
    lse = blk_new(&ar, el, GUARD, CANARY);
  } else {
    size_t ext[5] = {eq, ek, ev, eo, el}, pos[5], total = 0;
    int order[5] = {0, 1, 2, 3, 4};
    for (int i = 4; i > 0; i--) {
      int j = rint_(&r, 0, i), t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    for (int i = 0; i < 5; i++) {
      pos[order[i]] = total;
      total += ext[order[i]] + (size_t)PICK(&r, ((const int[]){0, 0, 1, 7}));
    }
    float *base = blk_new(&ar, total, GUARD, CANARY);
    q = base + pos[0];
    k = base + pos[1];
    v = base + pos[2];
    o = base + pos[3];
    lse = base + pos[4];
    for (size_t i = 0; i < eq; i++) memcpy(&q[i], &POISON, 4);
    for (size_t i = 0; i < ek; i++) memcpy(&k[i], &POISON, 4);
    for (size_t i = 0; i < ev; i++) memcpy(&v[i], &POISON, 4);
  }
  const int lens_alloc = B + 4;
  int32_t *lens = (int32_t *)(void *)blk_new(&ar, (size_t)lens_alloc, 0, 0);
  int32_t lens_store[8];
  for (int b = 0; b < B; b++) {
    int L = KV;
    switch (rint_(&r, 0, 4)) {
    case 0: L = 0; break;
    case 1: L = rint_(&r, 0, KV); break;
    case 2: L = 1; break;
    default: break;
    }
    lens[b] = L;
  }
  /* input values: every element a sequence can see; the rest stays POISON (NaN) */
  for (int b = 0; b < B; b++)
    for (int i = 0; i < Q; i++)
      for (int h = 0; h < H; h++)
        for (int e = 0; e < D; e++) q[(size_t)(b * ob.qs.b + i * ob.qs.s + h * ob.qs.h) + (size_t)e] = runit(&r);
  for (int b = 0; b < B; b++) {
    const int used = pad ? lens[b] : KV;
    for (int j = 0; j < used; j++)
      for (int h = 0; h < KVH; h++)
        for (int e = 0; e < D; e++) {
          k[(size_t)(b * ob.ks.b + j * ob.ks.s + h * ob.ks.h) + (size_t)e] = runit(&r);
          v[(size_t)(b * ob.vs.b + j * ob.vs.s + h * ob.vs.h) + (size_t)e] = runit(&r);
        }
  }
  a.q = q;
  a.k = k;
  a.v = v;
  a.o = o;
  a.lse = want_lse ? lse : NULL;
  a.kv_lens = pad || pct(&r, 50) ? lens : NULL;

  /* entry and mutations */
  int entry = rint_(&r, 0, E_COUNT - 1);
  int nthreads = entry == E_PARALLEL ? PICK(&r, ((const int[]){0, 1, 2, 3, 5, 65})) : rint_(&r, 1, 4);
  attngen_kernel kern = kp.k;
  const attngen_kernel *kptr = &kern;
  const attngen_args *aptr = &a;
  char muts[400] = "none";
  const int nmut = pct(&r, 45) ? 0 : pct(&r, 80) ? 1 : 2;
  const attngen_args orig = a;
  for (int m = 0; m < nmut; m++) {
    if (pct(&r, 3)) {
      int w = rint_(&r, 0, 2);
      if (w == 0) kptr = NULL;
      else if (w == 1) kern.info = NULL;
      else aptr = NULL;
      snprintf(muts + (m ? strlen(muts) : 0), sizeof muts - (m ? strlen(muts) : 0), "%s%s", m ? "; " : "",
               w == 0 ? "kernel = NULL" : w == 1 ? "kernel.info = NULL" : "args = NULL");
      continue;
    }
    const char *w = mutate(&r, &kp, &a, &kern, &entry, &nthreads, &ob, &orig, B, KV, cap, lens_alloc, lens_store);
    if (strcmp(w, "kv_lens inside o") == 0) /* the values a caller would have put there */
      memcpy((void *)(uintptr_t)a.kv_lens, lens, sizeof(int32_t) * (size_t)B);
    snprintf(muts + (m ? strlen(muts) : 0), sizeof muts - (m ? strlen(muts) : 0), "%s%s", m ? "; " : "", w);
  }
  snprintf(g_ctx, sizeof g_ctx,
           "iteration %ld (FUZZ_SEED=%llu FUZZ_ONLY=%ld): %s b=%d q=%d kv=%d cap=%d lse=%d mode=%d entry=%s(%d) "
           "strides q(%td,%td,%td) k(%td,%td,%td) v(%td,%td,%td) o(%td,%td,%td); mutations: %s",
           it, (unsigned long long)seed, it, kp.name, B, Q, KV, cap, want_lse, mode, entry_names[entry], nthreads,
           a.q_stride.batch, a.q_stride.seq, a.q_stride.head, a.k_stride.batch, a.k_stride.seq, a.k_stride.head,
           a.v_stride.batch, a.v_stride.seq, a.v_stride.head, a.o_stride.batch, a.o_stride.seq, a.o_stride.head, muts);

  oracle_out orc;
  const int lens_ok_count = a.kv_lens == lens ? lens_alloc : a.kv_lens == lens_store ? 8 : B;
  int verdict = oracle(kptr, aptr, entry == E_PLAN, nthreads, lens_ok_count, &orc);
  if (verdict < 0) {
    g_st.skipped++;
    arena_free(&ar);
    return;
  }
  if (verdict != MUST_REFUSE) {
    /* only run what the buffers really hold */
    const int lens_in = !pad || arena_holds(&ar, a.kv_lens, 4 * (i128)a.batch) || a.kv_lens == lens_store;
    if (!arena_holds(&ar, a.q, 4 * orc.eq) || !arena_holds(&ar, a.k, 4 * orc.ek) || !arena_holds(&ar, a.v, 4 * orc.ev) ||
        !arena_holds(&ar, a.o, 4 * orc.eo) || (a.lse && !arena_holds(&ar, a.lse, 4 * orc.el)) || !lens_in) {
      g_st.skipped++;
      arena_free(&ar);
      return;
    }
  }
  if (getenv("FUZZ_VERBOSE")) fprintf(stderr, "%s -> %s\n", g_ctx, verdict == MUST_ACCEPT ? "accept" : verdict == EITHER ? "either" : orc.why);

  arena_snap(&ar);
  int bi;
  size_t off;
  if (verdict == MUST_REFUSE) {
    /* ask plan_create first: it writes nothing, so a wrong acceptance is reported without running a kernel */
    attngen_plan *p = NULL;
    const int nt = entry == E_PLAN ? nthreads : 1;
    set_sentinel_error();
    int st = attngen_plan_create(kptr, aptr, nt, &p);
    if (st == ATTNGEN_OK) {
      failf("attngen_plan_create accepted invalid args (%s)", orc.why);
      attngen_plan_destroy(p);
    } else {
      expect_refused("attngen_plan_create", st, 0);
      if (p) failf("attngen_plan_create failed but set *out");
      set_sentinel_error();
      if (entry == E_RUN) st = attngen_run(kptr, aptr);
      else if (entry == E_PARALLEL) st = attngen_run_parallel(kptr, aptr, nthreads);
      else st = ATTNGEN_ERR_SIZE;
      if (entry != E_PLAN) expect_refused(entry_names[entry], st, 0);
    }
    if (arena_changed(&ar, NULL, &bi, &off)) failf("refused call modified block %d at float %zu", bi, off);
    g_st.refused++;
  } else {
    int st;
    set_sentinel_error();
    if (entry == E_RUN) st = attngen_run(kptr, aptr);
    else if (entry == E_PARALLEL) st = attngen_run_parallel(kptr, aptr, nthreads);
    else st = run_plan(&r, kptr, aptr, nthreads, &ar);
    g_st.by_entry[entry]++;
    if (st != ATTNGEN_OK) {
      if (verdict == MUST_ACCEPT)
        failf("valid args refused: %s (%s)", attngen_status_name(st), attngen_last_error());
      else {
        expect_refused(entry_names[entry], st, 0);
        if (arena_changed(&ar, NULL, &bi, &off)) failf("refused call modified block %d at float %zu", bi, off);
        g_st.either_ref++;
      }
    } else {
      check_accepted(&ar, &kern.shape, &a, &orc);
      if (verdict == EITHER) g_st.either_acc++;
      else g_st.accepted++;
    }
  }
  arena_free(&ar);
}

/* Selection with random (often invalid) ISA values and shapes. */
static void fuzz_selection(rng *r) {
  static const int isas[] = {INT_MIN, -1, 0, 1, 2, ATTNGEN_ISA_COUNT_, ATTNGEN_ISA_COUNT_ + 1, 31, 32, 33, 40, 64, INT_MAX};
  static const int sizes[] = {INT_MIN, -1, 0, 1, 2, 3, 4, 8, 17, 40, 512, 513, INT_MAX};
  attngen_shape s;
  memset(&s, 0, sizeof s);
  s.heads = PICK(r, sizes);
  s.kv_heads = PICK(r, sizes);
  s.head_dim = PICK(r, sizes);
  s.mask = (attngen_mask)(pct(r, 80) ? rint_(r, 0, ATTNGEN_MASK_COUNT_ - 1) : PICK(r, isas));
  s.phase = (attngen_phase)(pct(r, 80) ? rint_(r, 0, ATTNGEN_PHASE_COUNT_ - 1) : PICK(r, isas));
  /* the storage type: mostly valid (int8_g64 / int8_g32 need head_dim in whole groups), sometimes out of range */
  s.kv_dtype = (attngen_kv_dtype)(pct(r, 90) ? rint_(r, 0, ATTNGEN_KV_COUNT_ - 1) : PICK(r, isas));
  const int group = s.kv_dtype == ATTNGEN_KV_INT8_G64 ? 64 : s.kv_dtype == ATTNGEN_KV_INT8_G32 ? 32 : 1;
  static const int pages[] = {1, 3, 8, 16, -1, 4096, 8192};
  s.page_size = pct(r, 85) ? 0 : PICK(r, pages);
  const int page_ok = s.page_size == 0 || (s.page_size > 0 && s.page_size <= ATTNGEN_MAX_PAGE_SIZE && !(s.page_size & (s.page_size - 1)));
  const int isa = PICK(r, isas);
  const int shape_ok = page_ok && s.heads > 0 && s.kv_heads > 0 && s.head_dim > 0 && s.heads % s.kv_heads == 0 &&
                       s.head_dim <= ATTNGEN_MAX_HEAD_DIM &&
#ifdef ATTNGEN_MAX_HEADS
                       s.heads <= ATTNGEN_MAX_HEADS &&
#endif
                       (unsigned)s.mask < ATTNGEN_MASK_COUNT_ && (unsigned)s.phase < ATTNGEN_PHASE_COUNT_ &&
                       (unsigned)s.kv_dtype < ATTNGEN_KV_COUNT_ && s.head_dim % group == 0;
  const int isa_ok = isa >= 0 && isa < ATTNGEN_ISA_COUNT_ && ((attngen_cpu_isas() >> isa) & 1u);
  attngen_kernel k;
  snprintf(g_ctx, sizeof g_ctx, "selection h%d kv%d d%d mask %d phase %d kv_dtype %d isa %d", s.heads, s.kv_heads,
           s.head_dim, (int)s.mask, (int)s.phase, (int)s.kv_dtype, isa);
  set_sentinel_error();
  int st = attngen_select_generic(&s, (attngen_isa)isa, &k);
  if (shape_ok && isa_ok && (s.page_size == 0 || s.phase == ATTNGEN_PHASE_PREFILL)) { /* paged: prefill only */
    if (st != ATTNGEN_OK) failf("attngen_select_generic refused: %s (%s)", attngen_status_name(st), attngen_last_error());
  } else
    expect_refused("attngen_select_generic", st, 0);
  for (int t = 0; g_tables[t]; t++) {
    int have = 0;
    for (int i = 0; i < g_tables[t]->count; i++) {
      const attngen_kernel_info *ki = &g_tables[t]->kernels[i];
      have |= (int)ki->isa == isa && ki->heads == s.heads && ki->kv_heads == s.kv_heads && ki->head_dim == s.head_dim &&
              ki->mask == s.mask && ki->phase == s.phase && ki->kv_dtype == s.kv_dtype && ki->features == s.features &&
              ki->page_size == s.page_size;
    }
    set_sentinel_error();
    st = attngen_select_specialized(g_tables[t], &s, (attngen_isa)isa, &k);
    if (shape_ok && isa_ok && have) {
      if (st != ATTNGEN_OK) failf("attngen_select_specialized refused: %s", attngen_last_error());
    } else
      expect_refused("attngen_select_specialized", st, 0);
  }
  g_st.select_checks++;
}

/* ------------------------------------------------------------------------------------------------ */
/* paged caches: a random pool and block table (pages shared or not, entries past the rows read left as garbage),
 * sometimes one bad page argument. A valid call is checked against float64 on the rows the block table names; a bad
 * one must be refused with its status and leave o untouched. The pools are allocated to their exact size, so a row
 * read through a wrong page is an ASan report. Kernels: the linked tables' paged decode kernels, and the generic
 * prefill kernels (the repack gathers the pages). */
static void fuzz_paged(rng *r) {
  attngen_kernel k;
  const attngen_kernel_info *paged[64];
  int np = 0;
  for (int t = 0; g_tables[t]; t++)
    for (int i = 0; i < g_tables[t]->count && np < 64; i++) {
      const attngen_kernel_info *ki = &g_tables[t]->kernels[i];
      if (ki->page_size && ki->phase == ATTNGEN_PHASE_DECODE && ki->kv_dtype == ATTNGEN_KV_F32 &&
          ((attngen_cpu_isas() >> ki->isa) & 1u))
        paged[np++] = ki;
    }
  const attngen_table *tab = NULL;
  attngen_shape sh;
  memset(&sh, 0, sizeof sh);
  if (np && pct(r, 50)) {
    const attngen_kernel_info *ki = paged[rint_(r, 0, np - 1)];
    tab = table_of(ki);
    sh = (attngen_shape){ki->heads, ki->kv_heads, ki->head_dim, ki->mask, ki->phase, ki->kv_dtype, ki->features, ki->page_size};
    if (attngen_select_specialized(tab, &sh, ki->isa, &k)) {
      failf("paged: %s", attngen_last_error());
      return;
    }
  } else {
    static const int ps[] = {1, 2, 8, 16};
    const int kvh = rint_(r, 1, 3);
    sh = (attngen_shape){kvh * rint_(r, 1, 3), kvh, rint_(r, 1, 40), pct(r, 50) ? ATTNGEN_MASK_CAUSAL : ATTNGEN_MASK_PADDING,
                         ATTNGEN_PHASE_PREFILL, ATTNGEN_KV_F32, 0, PICK(r, ps)};
    if (attngen_select_generic(&sh, ATTNGEN_ISA_SCALAR, &k)) {
      failf("paged: %s", attngen_last_error());
      return;
    }
  }
  const int B = rint_(r, 1, 3), kv_len = rint_(r, 1, 70), P = sh.page_size, H = sh.heads, KVH = sh.kv_heads, D = sh.head_dim;
  const int q_len = sh.phase == ATTNGEN_PHASE_DECODE ? rint_(r, 1, 4 < kv_len ? 4 : kv_len) : rint_(r, 1, kv_len);
  const int need = (kv_len + P - 1) / P, max_pages = need + rint_(r, 0, 2), num_pages = rint_(r, 1, B * max_pages + 2);
  const size_t page = (size_t)P * KVH * D, nq = (size_t)B * q_len * H * D;
  float *kp = (float *)malloc((size_t)num_pages * page * sizeof(float)), *vp = (float *)malloc((size_t)num_pages * page * sizeof(float));
  float *q = (float *)malloc(nq * sizeof(float)), *o = (float *)malloc(nq * sizeof(float)), *o0 = (float *)malloc(nq * sizeof(float));
  float *kc = (float *)malloc((size_t)B * kv_len * KVH * D * sizeof(float)), *vc = (float *)malloc((size_t)B * kv_len * KVH * D * sizeof(float));
  int32_t *bt = (int32_t *)malloc((size_t)B * max_pages * sizeof(int32_t)), lens[3];
  double *ref = (double *)malloc(nq * sizeof(double));
  if (!kp || !vp || !q || !o || !o0 || !kc || !vc || !bt || !ref) {
    failf("paged: out of memory");
    goto out;
  }
  for (size_t i = 0; i < (size_t)num_pages * page; i++) kp[i] = runit(r), vp[i] = runit(r);
  for (size_t i = 0; i < nq; i++) q[i] = runit(r), o[i] = o0[i] = 1234.5f;
  for (int b = 0; b < B; b++) {
    lens[b] = rint_(r, 0, kv_len);
    for (int p = 0; p < max_pages; p++) bt[b * max_pages + p] = p < need ? rint_(r, 0, num_pages - 1) : (int32_t)rnd(r);
  }
  attngen_args a;
  memset(&a, 0, sizeof a);
  a.batch = B, a.q_len = q_len, a.kv_len = kv_len, a.q = q, a.k = kp, a.v = vp, a.o = o;
  a.kv_lens = mask_reads_lens(sh.mask) ? lens : NULL;
  a.pages = (attngen_pages){bt, max_pages, num_pages, P};
  if (sh.features & ATTNGEN_ATTN_WINDOW) a.window = rint_(r, 1, 30), a.sink_tokens = rint_(r, 1, 5); /* 0 would be the table's */
  int want = ATTNGEN_OK;
  const char *what = "valid";
  const int bad_b = rint_(r, 0, B - 1), bad_rows = a.kv_lens ? lens[bad_b] : kv_len; /* rows it reads */
  switch (pct(r, 40) ? rint_(r, 0, 7) : -1) {
  case 0:
    if (!bad_rows) break;
    bt[bad_b * max_pages + rint_(r, 0, (bad_rows - 1) / P)] = pct(r, 50) ? num_pages : -1 - (int32_t)(rnd(r) % 1000);
    what = "page index out of range", want = ATTNGEN_ERR_PAGE; break;
  case 1: a.pages.max_pages = need - 1, what = "block table too short";
    want = need - 1 > 0 ? ATTNGEN_ERR_CAPACITY : ATTNGEN_ERR_SIZE; break;
  case 2: a.pages.page_size = P * 2, what = "page_size not the kernel's", want = ATTNGEN_ERR_SHAPE; break;
  case 3: a.pages.block_table = NULL, what = "no block table", want = ATTNGEN_ERR_NULL; break;
  case 4: a.kv_capacity = kv_len, what = "kv_capacity with pages", want = ATTNGEN_ERR_SIZE; break;
  case 5: a.pages.num_pages = 0, what = "no pages", want = ATTNGEN_ERR_SIZE; break;
  case 6: a.pages.block_table = (const int32_t *)(const void *)o, what = "block table inside o", want = ATTNGEN_ERR_ALIAS; break;
  case 7: a.pages.max_pages = INT_MAX, what = "max_pages x page_size too large", want = ATTNGEN_ERR_SIZE; break;
  }
  snprintf(g_ctx, sizeof g_ctx, "paged %s B%d q%d kv%d P%d pages %d/%d: %s", k.info->name, B, q_len, kv_len, P, max_pages,
           num_pages, what);
  set_sentinel_error();
  const int st = attngen_run_parallel(&k, &a, rint_(r, 1, 3));
  if (want != ATTNGEN_OK) {
    expect_refused("attngen_run", st, want);
    if (memcmp(o, o0, nq * sizeof(float))) failf("a refused call wrote o");
    g_st.refused++;
  } else if (st != ATTNGEN_OK) {
    failf("refused: %s (%s)", attngen_status_name(st), attngen_last_error());
  } else if (st == ATTNGEN_OK) { /* float64 on the rows the block tables name */
    for (int b = 0; b < B; b++)
      for (int j = 0; j < kv_len; j++) {
        const size_t at = (size_t)bt[b * max_pages + j / P] * page + (size_t)(j % P) * KVH * D;
        memcpy(kc + ((size_t)b * kv_len + j) * KVH * D, kp + at, (size_t)KVH * D * sizeof(float));
        memcpy(vc + ((size_t)b * kv_len + j) * KVH * D, vp + at, (size_t)KVH * D * sizeof(float));
      }
    attngen_args c = a;
    memset(&c.pages, 0, sizeof c.pages);
    c.k = kc, c.v = vc, c.kv_capacity = 0;
    ref_attention_rope(&sh, &c, tab ? &tab->params.rope : NULL, NULL, ref, NULL);
    double err = 0.0, big = 1.0;
    for (size_t i = 0; i < nq; i++) {
      const double e = fabs((double)o[i] - ref[i]);
      err = e > err || e != e ? e : err;
      big = fabs(ref[i]) > big ? fabs(ref[i]) : big;
    }
    if (!(err <= CASE_TOL * big)) failf("error %.3g against float64 (tolerance %.0e x %.3g)", err, CASE_TOL, big);
    if (tab) { /* a specialized kernel: the same bits as its contiguous twin on the gathered rows */
      attngen_kernel kc2;
      attngen_shape cs = sh;
      cs.page_size = 0;
      float *o2 = (float *)malloc(nq * sizeof(float));
      c.o = o2;
      if (!o2 || attngen_select_specialized(tab, &cs, k.info->isa, &kc2) || attngen_run(&kc2, &c))
        failf("contiguous twin: %s", attngen_last_error());
      else if (memcmp(o, o2, nq * sizeof(float)))
        failf("not the bits of %s on the gathered rows", kc2.info->name);
      free(o2);
    }
    if (err / big > g_max_err) g_max_err = err / big;
    g_st.accepted++;
  }
out:
  free(kp), free(vp), free(q), free(o), free(o0), free(kc), free(vc), free(bt), free(ref);
}

/* ------------------------------------------------------------------------------------------------ */
/* attention features: random window, sink_tokens, softcap, alibi_slopes and sinks (0, NULL, negative, huge, NaN, a
 * value for a kernel without the feature) against kernels with random feature sets: the specialized feature kernels of
 * the linked tables, a table's selection (the generic fallback with the table's values, for a NEON-only table on
 * x86), and generic kernels with any feature bits. A call is refused with a message, its output untouched, exactly
 * when attngen.h's rules say so (a value for a feature the kernel lacks; window or sink_tokens out of range; softcap
 * not positive and finite; no slopes or sinks from args or table). An accepted call with ordinary values matches the
 * float64 reference at the tolerance tests/cases.c derives (CASE_TOL, plus the vector tanh's error times the cap for
 * a soft-cap, plus one fp32 rounding of the biased scores for ALiBi); one with extreme values (NaN or 1e30 slopes,
 * NaN or -inf sink logits, a cap of 1e30, where that tolerance says nothing) only has to return, its reads watched
 * by ASan and UBSan. */

static long g_feat_checked, g_feat_refused, g_feat_extreme;

static float *feat_array(rng *r, int n, int mode, int *extreme) {
  float *x = malloc((size_t)n * sizeof *x); /* exactly n: a read past it is reported */
  if (!x) exit(2);
  for (int h = 0; h < n; h++) {
    switch (mode) {
    case 0: x[h] = 3.0f * runit(r); break;
    case 1: x[h] = 0.0f; break;
    case 2: x[h] = -0.5f - fabsf(runit(r)); break;
    case 3: x[h] = 1e30f, *extreme = 1; break;
    case 4: x[h] = h % 2 ? NAN : 0.25f, *extreme = 1; break;
    default: x[h] = -INFINITY, *extreme = 1; break;
    }
  }
  return x;
}

/* The refusal attngen.h's rules give for these values on kernel k (0: accepted); `eff` gets the resolved values. */
static int feature_verdict(const attngen_kernel *k, const attngen_args *a, attngen_args *eff) {
  const unsigned f = k->shape.features;
  const attngen_feature_values *t = &k->params.features;
  *eff = *a;
  if (((a->window || a->sink_tokens) && !(f & ATTNGEN_ATTN_WINDOW)) ||
      (a->softcap != 0.0f && !(f & ATTNGEN_ATTN_SOFTCAP)) ||
      (a->alibi_slopes && !(f & ATTNGEN_ATTN_ALIBI)) || (a->sinks && !(f & ATTNGEN_ATTN_SINKS)))
    return ATTNGEN_ERR_SHAPE;
  if (f & ATTNGEN_ATTN_WINDOW) {
    if (!eff->window) eff->window = t->window;
    if (!eff->sink_tokens) eff->sink_tokens = t->sink_tokens;
    if (eff->window < 1 || eff->window > ATTNGEN_MAX_LEN || eff->sink_tokens < 0 || eff->sink_tokens > ATTNGEN_MAX_LEN)
      return ATTNGEN_ERR_SIZE;
  }
  if (f & ATTNGEN_ATTN_SOFTCAP) {
    if (eff->softcap == 0.0f) eff->softcap = t->softcap;
    if (!(eff->softcap > 0.0f) || isinf(eff->softcap)) return ATTNGEN_ERR_SIZE;
  }
  if ((f & ATTNGEN_ATTN_ALIBI) && !eff->alibi_slopes && !(eff->alibi_slopes = t->alibi_slopes)) return ATTNGEN_ERR_NULL;
  if ((f & ATTNGEN_ATTN_SINKS) && !eff->sinks) return ATTNGEN_ERR_NULL;
  return ATTNGEN_OK;
}

/* A kernel with features: specialized, a table's selection, or generic with random bits. 0 when bound. */
static int feature_kernel(rng *r, attngen_kernel *k, char *name, size_t n) {
  const int pick = rint_(r, 0, 99);
  if (g_nfeat > 0 && pick < 40) {
    const attngen_kernel_info *ki = g_feat[rnd(r) % (uint64_t)g_nfeat];
    attngen_shape s = {ki->heads, ki->kv_heads, ki->head_dim, ki->mask, ki->phase, ki->kv_dtype, ki->features, 0};
    if (attngen_select_specialized(table_of(ki), &s, ki->isa, k) != ATTNGEN_OK) {
      failf("attngen_select_specialized(%s): %s", ki->name, attngen_last_error());
      return -1;
    }
    snprintf(name, n, "%s", ki->name);
    return 0;
  }
  if (pick < 65) { /* a table's shape with random features, as attngen_select binds it here (the table's values) */
    const attngen_table *t = NULL;
    for (int tries = 0; tries < 64 && (!t || t->params.rope.style != ATTNGEN_ROPE_NONE); tries++) /* the reference: no RoPE */
      t = g_tables[rnd(r) % (uint64_t)(sizeof g_tables / sizeof g_tables[0] - 1)];
    attngen_shape s;
    memset(&s, 0, sizeof s);
    s.heads = t->heads, s.kv_heads = t->kv_heads, s.head_dim = t->head_dim;
    s.features = (unsigned)rint_(r, 0, ATTNGEN_ATTN_ALL_);
    static const attngen_mask causal[] = {ATTNGEN_MASK_CAUSAL, ATTNGEN_MASK_CAUSAL_PADDING};
    s.mask = (s.features & ATTNGEN_ATTN_WINDOW) ? PICK(r, causal) : (attngen_mask)rint_(r, 0, ATTNGEN_MASK_COUNT_ - 1);
    s.phase = (attngen_phase)rint_(r, 0, ATTNGEN_PHASE_COUNT_ - 1);
    if (attngen_select(t, &s, k) != ATTNGEN_OK) {
      failf("attngen_select(%s, features 0x%x): %s", t->model, s.features, attngen_last_error());
      return -1;
    }
    snprintf(name, n, "%s %s %s features 0x%x: %s", t->model, attngen_mask_name(s.mask), attngen_phase_name(s.phase),
             s.features, k->info->name);
    return 0;
  }
  const unsigned isas = attngen_cpu_isas();
  attngen_shape s;
  memset(&s, 0, sizeof s);
  s.kv_heads = rint_(r, 1, 3);
  s.heads = s.kv_heads * rint_(r, 1, 3);
  s.head_dim = PICK(r, ((const int[]){1, 3, 8, 16, 17, 24, 33, 40, 64}));
  s.mask = (attngen_mask)rint_(r, 0, ATTNGEN_MASK_COUNT_ - 1);
  s.phase = (attngen_phase)rint_(r, 0, ATTNGEN_PHASE_COUNT_ - 1);
  s.features = (unsigned)rint_(r, 0, ATTNGEN_ATTN_ALL_);
  int isa;
  do isa = rint_(r, 0, ATTNGEN_ISA_COUNT_ - 1);
  while (!((isas >> isa) & 1u));
  set_sentinel_error();
  const int st = attngen_select_generic(&s, (attngen_isa)isa, k);
  snprintf(name, n, "generic h%d kv%d d%d %s %s features 0x%x %s", s.heads, s.kv_heads, s.head_dim,
           attngen_mask_name(s.mask), attngen_phase_name(s.phase), s.features, attngen_isa_name((attngen_isa)isa));
  const int causal = (attngen_mask_features(s.mask) & ATTNGEN_FEATURE_CAUSAL) != 0;
  if ((s.features & ATTNGEN_ATTN_WINDOW) && !causal) { /* a window needs a causal mask */
    expect_refused("attngen_select_generic (a window without a causal mask)", st, ATTNGEN_ERR_UNSUPPORTED);
    return 1;
  }
  if (st != ATTNGEN_OK) {
    failf("attngen_select_generic: %s", attngen_last_error());
    return -1;
  }
  return 0;
}

static void feature_iteration(uint64_t seed, long it) {
  rng r = {seed ^ 0xFEA70000ull ^ ((uint64_t)it * 0x9E3779B97F4A7C15ull)};
  (void)rnd(&r);
  attngen_kernel k;
  char name[200];
  snprintf(g_ctx, sizeof g_ctx, "feature iteration %ld (FUZZ_SEED=%llu FUZZ_ONLY=%ld)", it, (unsigned long long)seed,
           it);
  if (feature_kernel(&r, &k, name, sizeof name)) return;
  snprintf(g_ctx, sizeof g_ctx, "feature iteration %ld (FUZZ_SEED=%llu FUZZ_ONLY=%ld), %s", it,
           (unsigned long long)seed, it, name);
  const attngen_shape sh = k.shape;
  const int H = sh.heads, KVH = sh.kv_heads, D = sh.head_dim, B = rint_(&r, 1, 2);
  const int Q = sh.phase == ATTNGEN_PHASE_DECODE ? rint_(&r, 1, ATTNGEN_DECODE_MAX_Q) : rint_(&r, 1, 40);
  const int KV = Q + (pct(&r, 15) ? rint_(&r, 100, 300) : rint_(&r, 0, 40)), CAP = KV + rint_(&r, 0, 3);
  const unsigned f = sh.features;
  int extreme = 0;
  attngen_args a;
  memset(&a, 0, sizeof a);
  a.batch = B, a.q_len = Q, a.kv_len = KV, a.kv_capacity = CAP;
  const size_t nq = (size_t)B * Q * H * D, nk = (size_t)B * CAP * KVH * D, nl = (size_t)B * H * Q;
  float *q = malloc(nq * 4), *kk = malloc(nk * 4), *v = malloc(nk * 4), *o = malloc(nq * 4);
  float *lse = pct(&r, 50) ? malloc(nl * 4) : NULL;
  int32_t lens[2];
  if (!q || !kk || !v || !o) exit(2);
  for (size_t i = 0; i < nq; i++) q[i] = runit(&r);
  for (size_t i = 0; i < nk; i++) kk[i] = runit(&r), v[i] = runit(&r);
  memset(o, 0xA5, nq * 4); /* untouched when refused */
  a.q = q, a.k = kk, a.v = v, a.o = o, a.lse = lse;
  if (mask_reads_lens(sh.mask)) {
    for (int b = 0; b < B; b++) lens[b] = rint_(&r, sh.mask == ATTNGEN_MASK_CAUSAL_PADDING ? Q : 0, KV);
    a.kv_lens = lens;
  }
  /* each value: mostly for a kernel with the feature, now and then for one without */
  if ((f & ATTNGEN_ATTN_WINDOW) ? pct(&r, 70) : pct(&r, 10))
    a.window = PICK(&r, ((const int[]){1, 2, 5, 16, KV, KV + 3, ATTNGEN_MAX_LEN, ATTNGEN_MAX_LEN + 1, -1, INT_MIN,
                                       INT_MAX}));
  if ((f & ATTNGEN_ATTN_WINDOW) ? pct(&r, 40) : pct(&r, 5))
    a.sink_tokens = PICK(&r, ((const int[]){1, 3, KV / 2, KV + 2, ATTNGEN_MAX_LEN + 1, -1, INT_MAX}));
  if ((f & ATTNGEN_ATTN_SOFTCAP) ? pct(&r, 70) : pct(&r, 10))
    a.softcap = PICK(&r, ((const float[]){0.5f, 5.0f, 50.0f, 1e30f, FLT_MIN, 1e-30f, -1.0f, NAN, INFINITY, -INFINITY}));
  float *slopes = NULL, *sinks = NULL;
  if ((f & ATTNGEN_ATTN_ALIBI) ? pct(&r, 70) : pct(&r, 10))
    a.alibi_slopes = slopes = feat_array(&r, H, rint_(&r, 0, 4), &extreme);
  if ((f & ATTNGEN_ATTN_SINKS) ? pct(&r, 85) : pct(&r, 10))
    a.sinks = sinks = feat_array(&r, H, rint_(&r, 0, 5), &extreme);

  attngen_args eff;
  const int want = feature_verdict(&k, &a, &eff);
  const int threads = pct(&r, 30) ? 2 : 1;
  set_sentinel_error();
  const int st = threads > 1 ? attngen_run_parallel(&k, &a, threads) : attngen_run(&k, &a);
  if (want != ATTNGEN_OK) {
    char what[64];
    snprintf(what, sizeof what, "attngen_run (%d thread%s)", threads, threads > 1 ? "s" : "");
    expect_refused(what, st, want);
    for (size_t i = 0; i < nq; i++)
      if (((const uint32_t *)o)[i] != 0xA5A5A5A5u) {
        failf("refused, but o[%zu] was written", i);
        break;
      }
    g_feat_refused++;
  } else if (st != ATTNGEN_OK) {
    failf("refused with %s (%s); the feature values are valid", attngen_status_name(st), attngen_last_error());
  } else if (extreme || ((f & ATTNGEN_ATTN_SOFTCAP) && eff.softcap > 1e6f)) {
    g_feat_extreme++;
  } else {
    double *ref = malloc(nq * sizeof *ref), *rl = malloc(nl * sizeof *rl), m = 1.0, e = 0.0, le = 0.0, tol = CASE_TOL;
    if (!ref || !rl) exit(2);
    ref_attention(&sh, &eff, ref, rl);
    if (f & ATTNGEN_ATTN_SOFTCAP) tol += CASE_SOFTCAP_TOL(eff.softcap);
    if (f & ATTNGEN_ATTN_ALIBI) { /* m: the largest |row max| of the biased scores, <= |lse| + log(kv_len) */
      double bm = 0.0;
      for (size_t i = 0; i < nl; i++)
        if (!isinf(rl[i])) bm = fmax(bm, fabs(rl[i]) + log((double)KV));
      tol += CASE_ALIBI_TOL(bm);
    }
    for (size_t i = 0; i < nq; i++) m = fmax(m, fabs(ref[i]));
    for (size_t i = 0; i < nq; i++) e = fmax(e, isfinite(o[i]) ? fabs(o[i] - ref[i]) : INFINITY);
    for (size_t i = 0; lse && i < nl; i++)
      le = fmax(le, isinf(rl[i]) ? (lse[i] == (float)rl[i] ? 0.0 : INFINITY)
                                 : fabs(lse[i] - rl[i]) / fmax(1.0, fabs(rl[i])));
    if (e > tol * m) failf("max |out - ref| = %.3g > %.3g * %.3g (window %d, sink_tokens %d, softcap %g)", e, tol, m,
                           eff.window, eff.sink_tokens, (double)eff.softcap);
    if (le > tol) failf("max lse error %.3g > %.3g", le, tol);
    g_feat_checked++;
    free(ref);
    free(rl);
  }
  free(q), free(kk), free(v), free(o), free(lse), free(slopes), free(sinks);
}

/* ------------------------------------------------------------------------------------------------ */
/* deterministic checks */

typedef struct {
  attngen_kernel k;
  attngen_args a;
  float *q, *kk, *v, *o, *lse;
  int32_t lens[4];
  size_t nq, nk, no, nl;
} small;

/* h4 kv2 d8 on the scalar generic kernel: batch 2, q_len 3 (prefill) or 2 (decode), kv_len 5, cap 6 */
static void small_init(small *s, attngen_phase phase, attngen_mask mask) {
  memset(s, 0, sizeof *s);
  attngen_shape sh = {4, 2, 8, mask, phase, ATTNGEN_KV_F32, 0, 0};
  if (attngen_select_generic(&sh, ATTNGEN_ISA_SCALAR, &s->k) != ATTNGEN_OK) {
    failf("select_generic for the regression fixture: %s", attngen_last_error());
    exit(1);
  }
  const int B = 2, Q = phase == ATTNGEN_PHASE_DECODE ? 2 : 3, KV = 5, CAP = 6;
  s->nq = (size_t)B * Q * 4 * 8;
  s->nk = (size_t)B * CAP * 2 * 8;
  s->no = s->nq;
  s->nl = (size_t)B * 4 * Q;
  s->q = calloc(s->nq, 4);
  s->kk = calloc(s->nk, 4);
  s->v = calloc(s->nk, 4);
  s->o = calloc(s->no + 64, 4);
  s->lse = calloc(s->nl + 64, 4);
  if (!s->q || !s->kk || !s->v || !s->o || !s->lse) exit(2);
  rng r = {42};
  for (size_t i = 0; i < s->nq; i++) s->q[i] = runit(&r);
  for (size_t i = 0; i < s->nk; i++) s->kk[i] = runit(&r), s->v[i] = runit(&r);
  s->lens[0] = 5;
  s->lens[1] = 3;
  s->a.batch = B;
  s->a.q_len = Q;
  s->a.kv_len = KV;
  s->a.kv_capacity = CAP;
  s->a.q = s->q;
  s->a.k = s->kk;
  s->a.v = s->v;
  s->a.o = s->o;
  s->a.lse = s->lse;
  s->a.kv_lens = s->lens;
}
static void small_free(small *s) {
  free(s->q);
  free(s->kk);
  free(s->v);
  free(s->o);
  free(s->lse);
}

/* plan_create and attngen_run must refuse a with `want` and a message containing `needle` */
static void regress_refuse(const char *what, const small *s, const attngen_args *a, int want, const char *needle) {
  attngen_plan *p = NULL;
  snprintf(g_ctx, sizeof g_ctx, "regression: %s", what);
  g_st.regress++;
  set_sentinel_error();
  int st = attngen_plan_create(&s->k, a, 2, &p);
  if (st == ATTNGEN_OK) {
    failf("attngen_plan_create returned OK (%zu items)", attngen_plan_items(p));
    attngen_plan_destroy(p);
    return; /* do not run a kernel on it */
  }
  expect_refused("attngen_plan_create", st, want);
  if (needle && !strstr(attngen_last_error(), needle))
    failf("message \"%s\" does not name %s", attngen_last_error(), needle);
  set_sentinel_error();
  st = attngen_run(&s->k, a);
  expect_refused("attngen_run", st, want);
}

static int count_lines_with(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; *p;) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
    if (strstr(line, needle)) n++;
    p += len + (eol ? 1 : 0);
  }
  return n;
}

/* Runs body(arg) in a child process and returns its wait status (-1 if none ran); its stderr goes to out. The
 * child exits with what body returns. */
static int in_child(int (*body)(const void *), const void *arg, char *out, size_t n) {
  int fd[2];
  out[0] = 0;
  if (pipe(fd) != 0) return -1;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], 2);
    close(fd[0]);
    close(fd[1]);
    const int code = body(arg);
    fflush(stderr);
    _exit(code);
  }
  close(fd[1]);
  size_t len = 0;
  ssize_t got;
  while (pid > 0 && len + 1 < n && (got = read(fd[0], out + len, n - 1 - len)) > 0) len += (size_t)got;
  out[len] = 0;
  close(fd[0]);
  int status = -1;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return status;
}

typedef struct {
  const char *value;
  int verbose;
} isa_env;

/* attngen_select three times with ATTNGEN_ISA=value */
static int isa_env_body(const void *arg) {
  const isa_env *e = (const isa_env *)arg;
  setenv("ATTNGEN_ISA", e->value, 1);
  if (e->verbose) setenv("ATTNGEN_VERBOSE", "1", 1);
  else unsetenv("ATTNGEN_VERBOSE");
  attngen_shape s = {4, 2, 8, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_PREFILL, ATTNGEN_KV_F32, 0, 0};
  attngen_kernel k;
  for (int i = 0; i < 3; i++) {
    (void)attngen_select(g_tables[0], &s, &k);
    s.phase = (attngen_phase)(1 - (int)s.phase);
  }
  return 0;
}

/* 1 if attngen_run_parallel on 2 threads, three times, gives the 1-thread output bit for bit, else 0 */
static int two_threads_match_one(void) {
  small s;
  small_init(&s, ATTNGEN_PHASE_DECODE, ATTNGEN_MASK_CAUSAL);
  int ok = 1;
  float *ref = malloc(s.no * sizeof *ref);
  if (!ref || attngen_run_parallel(&s.k, &s.a, 1) != ATTNGEN_OK) ok = 0;
  if (ref) memcpy(ref, s.o, s.no * sizeof *ref);
  for (int i = 0; i < 3 && ok; i++) {
    memset(s.o, 0, s.no * sizeof *s.o);
    if (attngen_run_parallel(&s.k, &s.a, 2) != ATTNGEN_OK || memcmp(ref, s.o, s.no * sizeof *ref) != 0) ok = 0;
  }
  free(ref);
  small_free(&s);
  return ok;
}

typedef struct {
  const char *value;
  int one_cpu;
} spin_env;

/* two_threads_match_one with ATTNGEN_POOL_SPIN_US=value, confined to one CPU if one_cpu (more threads than
 * CPUs); exits 0 when the outputs match */
static int spin_env_body(const void *arg) {
  const spin_env *e = (const spin_env *)arg;
  setenv("ATTNGEN_POOL_SPIN_US", e->value, 1);
  unsetenv("ATTNGEN_VERBOSE");
#ifdef CPU_SETSIZE
  if (e->one_cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
    (void)sched_setaffinity(0, sizeof one, &one);
  }
#endif
  return two_threads_match_one() ? 0 : 1;
}

/* after the parent's pool ran: the 2-thread call must finish (a hang becomes SIGALRM) and match 1 thread */
static int forked_pool_body(const void *arg) {
  (void)arg;
  alarm(60);
  return two_threads_match_one() ? 0 : 1;
}

static void regressions(void) {
  small s;
  attngen_args a;

  /* attention features: each bad value (or a value for a kernel without the feature, or none from args or table)
   * refused by plan_create and attngen_run with the field's name */
  {
    static const struct {
      unsigned features;
      int window, sink_tokens;
      float softcap;
      int want;
      const char *needle;
    } fc[] = {
        {0, 0, 0, 5.0f, ATTNGEN_ERR_SHAPE, "softcap"},
        {0, 4, 0, 0.0f, ATTNGEN_ERR_SHAPE, "window"},
        {ATTNGEN_ATTN_SOFTCAP, 4, 0, 5.0f, ATTNGEN_ERR_SHAPE, "window"},
        {ATTNGEN_ATTN_WINDOW, -1, 0, 0.0f, ATTNGEN_ERR_SIZE, "window"},
        {ATTNGEN_ATTN_WINDOW, INT_MAX, 0, 0.0f, ATTNGEN_ERR_SIZE, "window"},
        {ATTNGEN_ATTN_WINDOW, 3, -2, 0.0f, ATTNGEN_ERR_SIZE, "sink_tokens"},
        {ATTNGEN_ATTN_WINDOW, 0, 0, 0.0f, ATTNGEN_ERR_SIZE, "window"},
        {ATTNGEN_ATTN_SOFTCAP, 0, 0, NAN, ATTNGEN_ERR_SIZE, "softcap"},
        {ATTNGEN_ATTN_SOFTCAP, 0, 0, -1.0f, ATTNGEN_ERR_SIZE, "softcap"},
        {ATTNGEN_ATTN_SOFTCAP, 0, 0, INFINITY, ATTNGEN_ERR_SIZE, "softcap"},
        {ATTNGEN_ATTN_SOFTCAP, 0, 0, 0.0f, ATTNGEN_ERR_SIZE, "softcap"},
        {ATTNGEN_ATTN_ALIBI, 0, 0, 0.0f, ATTNGEN_ERR_NULL, "alibi_slopes"},
        {ATTNGEN_ATTN_SINKS, 0, 0, 0.0f, ATTNGEN_ERR_NULL, "sinks"},
    };
    for (size_t i = 0; i < sizeof fc / sizeof fc[0]; i++) {
      small_init(&s, ATTNGEN_PHASE_PREFILL, ATTNGEN_MASK_CAUSAL);
      attngen_shape sh = s.k.shape;
      sh.features = fc[i].features;
      if (attngen_select_generic(&sh, ATTNGEN_ISA_SCALAR, &s.k) != ATTNGEN_OK) {
        failf("select_generic with features 0x%x: %s", fc[i].features, attngen_last_error());
        exit(1);
      }
      a = s.a;
      a.window = fc[i].window, a.sink_tokens = fc[i].sink_tokens, a.softcap = fc[i].softcap;
      char what[128];
      snprintf(what, sizeof what, "features 0x%x, window %d, sink_tokens %d, softcap %g", fc[i].features,
               fc[i].window, fc[i].sink_tokens, (double)fc[i].softcap);
      regress_refuse(what, &s, &a, fc[i].want, fc[i].needle);
      small_free(&s);
    }
  }

  /* ATTNGEN_ISA unknown or unusable -> one stderr line per process, always */
  {
    char err[8192];
    typedef struct {
      const char *value;
      int verbose, lines;
      const char *needle;
    } env_case;
    env_case cases[8];
    int nc = 0;
    cases[nc++] = (env_case){"sve", 0, 1, "not one of"};
    cases[nc++] = (env_case){"AVX2", 0, 1, "lower-case"};
    cases[nc++] = (env_case){"sve", 1, 1, "not one of"};
    cases[nc++] = (env_case){"scalar", 0, 0, NULL};
    for (int i = 0; i < ATTNGEN_ISA_COUNT_ && nc < 8; i++) {
      const int has = (attngen_cpu_isas() >> i) & 1u;
      if (i == ATTNGEN_ISA_SCALAR) continue;
      cases[nc++] = (env_case){attngen_isa_name((attngen_isa)i), 0, has ? 0 : 1, has ? NULL : "cannot run"};
    }
    for (int i = 0; i < nc; i++) {
      snprintf(g_ctx, sizeof g_ctx, "regression: ATTNGEN_ISA=%s%s", cases[i].value,
               cases[i].verbose ? " ATTNGEN_VERBOSE=1" : "");
      g_st.regress++;
      const isa_env e = {cases[i].value, cases[i].verbose};
      (void)in_child(isa_env_body, &e, err, sizeof err);
      char tag[96];
      snprintf(tag, sizeof tag, "ATTNGEN_ISA=%s", cases[i].value);
      const int lines = count_lines_with(err, tag);
      if (lines != cases[i].lines)
        failf("expected %d stderr line(s) about %s over three attngen_select calls, got %d: \"%s\"", cases[i].lines,
              tag, lines, err);
      else if (cases[i].needle && !strstr(err, cases[i].needle))
        failf("the stderr line does not say why (\"%s\"): \"%s\"", cases[i].needle, err);
    }
  }

  /* ATTNGEN_POOL_SPIN_US (the pool's polling before it sleeps): a bad value is said once and the default kept;
   * every value gives the 1-thread result */
  {
    static const struct {
      const char *value;
      int one_cpu, lines;
    } cases[] = {{"0", 0, 0},    {"50", 0, 0}, {"1000000", 0, 0}, {"abc", 0, 1},
                 {"-5", 0, 1},   {"1000001", 0, 1}, {"20us", 0, 1}, {"200", 1, 0}};
    char err[8192];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      snprintf(g_ctx, sizeof g_ctx, "regression: ATTNGEN_POOL_SPIN_US=%s%s", cases[i].value,
               cases[i].one_cpu ? ", 2 threads on one CPU" : "");
      g_st.regress++;
      const spin_env e = {cases[i].value, cases[i].one_cpu};
      const int status = in_child(spin_env_body, &e, err, sizeof err);
      const int same = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
      const int lines = count_lines_with(err, "ATTNGEN_POOL_SPIN_US");
      if (!same) failf("2-thread runs differ from the 1-thread run (or failed); stderr: \"%s\"", err);
      else if (lines != cases[i].lines)
        failf("expected %d stderr line(s) about ATTNGEN_POOL_SPIN_US over three calls, got %d: \"%s\"", cases[i].lines,
              lines, err);
      else if (cases[i].lines && !strstr(err, "ignored"))
        failf("the stderr line does not say the value was ignored: \"%s\"", err);
    }
  }

  /* a child of fork() after the pool started: its 2-thread call completes (it waited forever for the parent's
   * workers, which a child does not have) and gives the 1-thread result */
  {
    snprintf(g_ctx, sizeof g_ctx, "regression: attngen_run_parallel in a forked child");
    g_st.regress++;
    if (!two_threads_match_one()) failf("in the parent, 2 threads differ from 1 (or a run failed)");
    char err[1024];
    const int status = in_child(forked_pool_body, NULL, err, sizeof err);
    if (status == -1) failf("fork/waitpid failed");
    else if (WIFSIGNALED(status)) failf("the child was killed by signal %d (SIGALRM: it hung)", WTERMSIG(status));
    else if (WEXITSTATUS(status) != 0)
      failf("the child's 2-thread call failed or differs from the 1-thread result; stderr: \"%s\"", err);
  }

  /* sizes and strides whose arithmetic would overflow */
  small_init(&s, ATTNGEN_PHASE_DECODE, ATTNGEN_MASK_NONE);
  a = s.a;
  a.kv_len = INT_MAX;
  a.kv_capacity = 0;
  regress_refuse("decode kv_len = INT_MAX", &s, &a, ATTNGEN_ERR_SIZE, "kv_len");
  a = s.a;
  a.kv_len = a.kv_capacity = INT_MAX;
  regress_refuse("kv_len = kv_capacity = INT_MAX", &s, &a, ATTNGEN_ERR_SIZE, "kv_len");
  a = s.a;
  a.kv_capacity = INT_MAX;
  regress_refuse("kv_capacity = INT_MAX", &s, &a, ATTNGEN_ERR_SIZE, "kv_capacity");
  small_free(&s);
  small_init(&s, ATTNGEN_PHASE_PREFILL, ATTNGEN_MASK_CAUSAL);
  a = s.a;
  a.o_stride.batch = PTRDIFF_MAX / 2 + 1;
  regress_refuse("o batch stride = PTRDIFF_MAX/2+1", &s, &a, ATTNGEN_ERR_SIZE, "o spans");
  a = s.a;
  a.q_stride.seq = PTRDIFF_MAX;
  regress_refuse("q seq stride = PTRDIFF_MAX", &s, &a, ATTNGEN_ERR_SIZE, "q spans");
  a = s.a;
  a.k_stride.batch = PTRDIFF_MAX;
  regress_refuse("k batch stride = PTRDIFF_MAX", &s, &a, ATTNGEN_ERR_SIZE, "k spans");
  a = s.a;
  a.q_len = INT_MAX;
  regress_refuse("q_len = INT_MAX", &s, &a, ATTNGEN_ERR_SIZE, "q_len");
  a = s.a;
  a.v_stride.head = PTRDIFF_MAX / 4; /* (heads-1) * stride fits in size_t, + the rest does not fit the limit */
  regress_refuse("v head stride = PTRDIFF_MAX/4", &s, &a, ATTNGEN_ERR_SIZE, "v spans");
  a = s.a;
  a.batch = 1;
  a.q_stride.batch = PTRDIFF_MAX; /* batch 1: never used, so accepted */
  a.o_stride.batch = PTRDIFF_MAX;
  snprintf(g_ctx, sizeof g_ctx, "regression: batch 1 with batch strides PTRDIFF_MAX (unused) is valid");
  g_st.regress++;
  {
    int st = attngen_run(&s.k, &a);
    if (st != ATTNGEN_OK) failf("refused: %s (%s)", attngen_status_name(st), attngen_last_error());
  }

  /* nthreads is validated before anything is allocated */
  {
    static const int bad[] = {0, -1, INT_MIN, ATTNGEN_MAX_THREADS + 1, 1 << 20, INT_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      attngen_plan *p = NULL;
      snprintf(g_ctx, sizeof g_ctx, "regression: attngen_plan_create(nthreads = %d)", bad[i]);
      g_st.regress++;
      const double t0 = now_s();
      set_sentinel_error();
      int st = attngen_plan_create(&s.k, &s.a, bad[i], &p);
      if (st == ATTNGEN_OK) {
        failf("accepted (%.1f s)", now_s() - t0);
        attngen_plan_destroy(p);
      } else
        expect_refused("attngen_plan_create", st, ATTNGEN_ERR_SIZE);
      if (now_s() - t0 > 1.0) failf("took %.1f s", now_s() - t0);
    }
    attngen_plan *p = NULL;
    snprintf(g_ctx, sizeof g_ctx, "regression: attngen_plan_create(nthreads = ATTNGEN_MAX_THREADS)");
    g_st.regress++;
    int st = attngen_plan_create(&s.k, &s.a, ATTNGEN_MAX_THREADS, &p);
    if (st != ATTNGEN_OK) failf("refused: %s (%s)", attngen_status_name(st), attngen_last_error());
    else {
      st = attngen_plan_run(p, 0, attngen_plan_items(p), ATTNGEN_MAX_THREADS - 1);
      if (st == ATTNGEN_OK) st = attngen_plan_finish(p);
      if (st != ATTNGEN_OK) failf("run on the last thread: %s", attngen_last_error());
      attngen_plan_destroy(p);
    }
    snprintf(g_ctx, sizeof g_ctx, "regression: attngen_run_parallel(nthreads = 1 << 20) caps, not refuses");
    g_st.regress++;
    st = attngen_run_parallel(&s.k, &s.a, 1 << 20);
    if (st != ATTNGEN_OK) failf("refused: %s (%s)", attngen_status_name(st), attngen_last_error());
  }

  /* out-of-range ISA values */
  {
    static const int bad[] = {-1, INT_MIN, ATTNGEN_ISA_COUNT_, 31, 32, 33, 40, 64, INT_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      attngen_kernel k;
      char num[32];
      snprintf(num, sizeof num, "%d", bad[i]);
      for (int t = 0; t < 2; t++) {
        snprintf(g_ctx, sizeof g_ctx, "regression: attngen_select_%s(isa = %d)", t ? "generic" : "specialized", bad[i]);
        g_st.regress++;
        set_sentinel_error();
        int st = t ? attngen_select_generic(&s.k.shape, (attngen_isa)bad[i], &k)
                   : attngen_select_specialized(g_tables[0], &s.k.shape, (attngen_isa)bad[i], &k);
        expect_refused("select", st, ATTNGEN_ERR_UNSUPPORTED);
        if (!strstr(attngen_last_error(), num)) failf("message \"%s\" does not name the ISA value", attngen_last_error());
      }
    }
  }

  /* outputs overlapping inputs or each other */
  small_free(&s);
  small_init(&s, ATTNGEN_PHASE_PREFILL, ATTNGEN_MASK_PADDING);
  {
    float *big = calloc(s.nq * 3 + 64, 4); /* o and q in one buffer, for "inside" and "adjacent" */
    if (!big) exit(2);
    struct {
      const char *what;
      float *o, *lse;
      const float *q;
      const int32_t *lens;
    } c[] = {
        {"lse inside o", s.o, s.o + 5, s.q, s.lens},
        {"lse == o", s.o, s.o, s.q, s.lens},
        {"o == lse + 1 (o starts inside lse)", s.lse + 1, s.lse, s.q, s.lens},
        {"o == q", (float *)(uintptr_t)s.q, s.lse, s.q, s.lens},
        {"o inside q", big + 7, s.lse, big, s.lens},
        {"o overlaps the last float of q", big + s.nq - 1, s.lse, big, s.lens},
        {"o == k", s.kk, s.lse, s.q, s.lens},
        {"o == v", s.v, s.lse, s.q, s.lens},
        {"lse inside v", s.o, s.v + 3, s.q, s.lens},
        {"lse == q", s.o, (float *)(uintptr_t)s.q, s.q, s.lens},
        {"kv_lens inside o", s.o, s.lse, s.q, (const int32_t *)(void *)(s.o + 4)},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
      a = s.a;
      a.o = c[i].o;
      a.lse = c[i].lse;
      a.q = c[i].q;
      a.kv_lens = c[i].lens;
      if (c[i].q == big) memcpy(big, s.q, s.nq * 4);
      if (c[i].lens != s.lens) memcpy((void *)(uintptr_t)c[i].lens, s.lens, sizeof(int32_t) * 2);
      regress_refuse(c[i].what, &s, &a, ATTNGEN_ERR_ALIAS, NULL);
    }
    /* the boundary: o right after q in the same buffer is fine */
    memcpy(big, s.q, s.nq * 4);
    a = s.a;
    a.q = big;
    a.o = big + s.nq;
    snprintf(g_ctx, sizeof g_ctx, "regression: o right after q in one buffer is valid");
    g_st.regress++;
    int st = attngen_run(&s.k, &a);
    if (st != ATTNGEN_OK) failf("refused: %s (%s)", attngen_status_name(st), attngen_last_error());
    free(big);
  }

  /* a shape error names only the fields the caller set */
  {
    a = s.a;
    a.heads = 5;
    snprintf(g_ctx, sizeof g_ctx, "regression: args.heads = 5, kv_heads and head_dim unset");
    g_st.regress++;
    set_sentinel_error();
    int st = attngen_run(&s.k, &a);
    expect_refused("attngen_run", st, ATTNGEN_ERR_SHAPE);
    const char *m = attngen_last_error();
    if (strstr(m, "kv0") || strstr(m, " d0") || strstr(m, "kv_heads 0") || strstr(m, "head_dim 0") ||
        !strstr(m, "unset"))
      failf("message \"%s\" shows unset fields as 0", m);
  }
  small_free(&s);
}

/* ------------------------------------------------------------------------------------------------ */

static long env_long(const char *name, long dflt) {
  const char *v = getenv(name);
  if (!v || !*v) return dflt;
  char *end;
  long x = strtol(v, &end, 0);
  if (*end) {
    fprintf(stderr, "fuzz: %s=%s is not a number\n", name, v);
    exit(2);
  }
  return x;
}

int main(void) {
  const uint64_t seed = (uint64_t)env_long("FUZZ_SEED", 0x5EEDF0220L);
  const double seconds = (double)env_long("FUZZ_SECONDS", 60);
  const long iters = env_long("FUZZ_ITERS", -1), only = env_long("FUZZ_ONLY", -1);
  g_sentinel[0] = 0;
  snprintf(g_sentinel, sizeof g_sentinel, "%s", set_sentinel_error());
  collect_specialized();
  printf("fuzz_args: seed %llu (FUZZ_SEED), %s, %d specialized kernels (%d with attention features) from %d tables, ISAs:",
         (unsigned long long)seed, only >= 0 ? "one iteration (FUZZ_ONLY)" : iters >= 0 ? "fixed iterations" : "time-bounded",
         g_nspec + g_nfeat, g_nfeat, (int)(sizeof g_tables / sizeof g_tables[0]) - 1);
  for (int i = 0; i < ATTNGEN_ISA_COUNT_; i++)
    if ((attngen_cpu_isas() >> i) & 1u) printf(" %s", attngen_isa_name((attngen_isa)i));
  printf("\n");
  fflush(stdout);

  const double t0 = now_s();
  if (only < 0) {
    regressions();
    printf("fuzz_args: %ld regression checks, %ld failure(s)\n", g_st.regress, g_failures);
    fflush(stdout);
  }
  long it = only >= 0 ? only : 0;
  for (;; it++) {
    if (only >= 0 && it > only) break;
    if (only < 0 && iters >= 0 && it >= iters) break;
    if (only < 0 && iters < 0 && now_s() - t0 >= seconds) break;
    one_iteration(seed, it);
    if (it % 3 == 0) feature_iteration(seed, it);
    rng r = {seed ^ 0xABCDEF ^ (uint64_t)it};
    fuzz_selection(&r);
    fuzz_paged(&r);
    g_st.iters++;
    if (g_failures > 50) break;
  }
  const double dt = now_s() - t0;
  printf("fuzz_args: %ld iterations in %.1f s (seed %llu; replay: FUZZ_SEED=%llu FUZZ_ITERS=%ld)\n", g_st.iters, dt,
         (unsigned long long)seed, (unsigned long long)seed, g_st.iters);
  printf("  valid calls checked against the float64 reference: %ld (attngen_run %ld, run_parallel %ld, plan API %ld)\n",
         g_st.accepted + g_st.either_acc, g_st.by_entry[E_RUN], g_st.by_entry[E_PARALLEL], g_st.by_entry[E_PLAN]);
  printf("  invalid calls refused with a message and untouched buffers: %ld; borderline (interleaved output rows): "
         "%ld accepted, %ld refused; not run (sizes the buffers do not back): %ld; selection checks: %ld\n",
         g_st.refused, g_st.either_acc, g_st.either_ref, g_st.skipped, g_st.select_checks);
  printf("  attention features: %ld calls checked against the reference, %ld refused as the rules say, %ld with "
         "extreme values (NaN, 1e30, -inf) returned\n", g_feat_checked, g_feat_refused, g_feat_extreme);
  printf("  max |out - ref| / max(1, max|ref|) = %.3g, max lse error %.3g (tolerance %.0e)\n", g_max_err,
         g_max_lse_err, CASE_TOL);
  printf("fuzz_args: %s (%ld failure(s))\n", g_failures ? "FAILED" : "passed", g_failures);
  return g_failures ? 1 : 0;
}

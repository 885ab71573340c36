/* SPDX-License-Identifier: MIT */
/* attngen runtime: CPU detection, kernel selection, argument checks, work items, split-KV merge, threads.
 * C99 plus POSIX threads; no ISA flags needed (kernels carry their own target attributes). */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sched_getcpu, cpu_set_t, pthread_setaffinity_np: the pool keeps its threads off the caller's CPU */
#endif
#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif

#include "attngen.h"
#include "attngen_kernel.h" /* attngen_rope_rotate: the one RoPE rotation, shared with the generated kernels */

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h> /* madvise: attngen_alloc's huge-page mark */
#endif

#if defined(ATTNGEN_NO_THREADS) || defined(_WIN32)
#define ATTNGEN_HAVE_PTHREADS 0
#else
#define ATTNGEN_HAVE_PTHREADS 1
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#endif

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define ATTNGEN_X86 1
#endif

extern const attngen_table attngen_table_generic; /* generated/runtime/attngen_generic.c */

/* ---------------------------------------------------------------- errors */

#if defined(__GNUC__) || defined(__clang__)
#define ATTNGEN_THREAD_LOCAL __thread
#else
#define ATTNGEN_THREAD_LOCAL
#endif

static ATTNGEN_THREAD_LOCAL char last_error[512];

static int fail(int status, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return status;
}

const char *attngen_last_error(void) { return last_error; }

const char *attngen_status_name(int status)
{
  switch (status) {
  case ATTNGEN_OK: return "ok";
  case ATTNGEN_ERR_NULL: return "null pointer";
  case ATTNGEN_ERR_SIZE: return "bad size";
  case ATTNGEN_ERR_CAPACITY: return "kv_len exceeds kv_capacity";
  case ATTNGEN_ERR_LENGTHS: return "bad kv_lens";
  case ATTNGEN_ERR_SHAPE: return "shape does not match the kernel";
  case ATTNGEN_ERR_UNSUPPORTED: return "unsupported";
  case ATTNGEN_ERR_NOMEM: return "out of memory";
  case ATTNGEN_ERR_STRIDE: return "bad stride";
  case ATTNGEN_ERR_ALIAS: return "outputs overlap inputs or each other";
  case ATTNGEN_ERR_DTYPE: return "K/V pointers of another storage type than the kernel's";
  default: return "unknown status";
  }
}

static int verbose(void)
{
  const char *v = getenv("ATTNGEN_VERBOSE");
  return v && *v && strcmp(v, "0") != 0;
}

static void logf_verbose(const char *fmt, ...)
{
  va_list ap;
  if (!verbose()) return;
  va_start(ap, fmt);
  fputs("attngen: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* An ATTNGEN_ISA value that cannot be honoured: said on stderr once per process, with or without
 * ATTNGEN_VERBOSE (a silently ignored cap would run another ISA than the user asked for). `why` is
 * "unknown" (not an ISA name) or "unusable" (an ISA this CPU cannot run). */
static void isa_env_ignored(const char *value, const char *why)
{
  static volatile int said;
  char names[128] = "", hint[64] = "";
  size_t len = 0;
  int i;
#if defined(__GNUC__) || defined(__clang__)
  if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED)) return;
#else
  if (said) return;
  said = 1;
#endif
  for (i = 0; i < ATTNGEN_ISA_COUNT_ && len < sizeof names; ++i) {
    const char *n = attngen_isa_name((attngen_isa)i), *a = value;
    int w = snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", n);
    if (w > 0) len += (size_t)w;
    while (*a && *n && (*a == *n || (*a >= 'A' && *a <= 'Z' && *a - 'A' + 'a' == *n))) ++a, ++n;
    if (!*a && !*n) snprintf(hint, sizeof hint, " (names are lower-case: %s)", attngen_isa_name((attngen_isa)i));
  }
  if (strcmp(why, "unusable") == 0)
    fprintf(stderr, "attngen: ATTNGEN_ISA=%s ignored: this CPU cannot run it; using the best ISA it has\n", value);
  else
    fprintf(stderr, "attngen: ATTNGEN_ISA=%s ignored: not one of %s%s; using the best ISA this CPU has\n", value,
            names, hint);
}

/* ---------------------------------------------------------------- names */

/* Indexed by the enum values (gen/spec.lua assigns them; the X lists below come from it). */
#define NAME_AT(E, name, ...) [ATTNGEN_ISA_##E] = #name,
static const char *const isa_names[ATTNGEN_ISA_COUNT_] = { ATTNGEN_ISA_LIST(NAME_AT) };
#undef NAME_AT
#define NAME_AT(E, name, ...) [ATTNGEN_MASK_##E] = #name,
static const char *const mask_names[ATTNGEN_MASK_COUNT_] = { ATTNGEN_MASK_LIST(NAME_AT) };
#undef NAME_AT
#define NAME_AT(E, name, ...) [ATTNGEN_PHASE_##E] = #name,
static const char *const phase_names[ATTNGEN_PHASE_COUNT_] = { ATTNGEN_PHASE_LIST(NAME_AT) };
#undef NAME_AT

/* Each storage type: its name and scale group (0: none, -1: one per row); its bytes per element and scales per row
 * are attngen_spec.h's attngen_kv_dtype_bytes and attngen_kv_scales_per_row. */
static const struct {
  const char *name;
  int group;
} kv_types[ATTNGEN_KV_COUNT_] = {
#define KV_TYPE_AT(E, name, api, bytes, group) [ATTNGEN_KV_##E] = { #name, group },
  ATTNGEN_KV_DTYPE_LIST(KV_TYPE_AT)
#undef KV_TYPE_AT
};

const char *attngen_kv_dtype_name(attngen_kv_dtype t)
{
  return (unsigned)t < ATTNGEN_KV_COUNT_ ? kv_types[t].name : "?";
}

/* Elements per scale of type t for head_dim d (0: no scales). */
static int kv_group(attngen_kv_dtype t, int d) { return kv_types[t].group < 0 ? d : kv_types[t].group; }


const char *attngen_isa_name(attngen_isa isa)
{
  return (unsigned)isa < ATTNGEN_ISA_COUNT_ ? isa_names[isa] : "?";
}
const char *attngen_mask_name(attngen_mask m)
{
  return (unsigned)m < ATTNGEN_MASK_COUNT_ ? mask_names[m] : "?";
}
const char *attngen_phase_name(attngen_phase p)
{
  return (unsigned)p < ATTNGEN_PHASE_COUNT_ ? phase_names[p] : "?";
}

/* ---------------------------------------------------------------- CPU */

/* One check per ISA of the spec (its `detect` name); each is defined on every architecture, so the list can
 * name them all. */
#if defined(ATTNGEN_X86)
/* What the x86 checks read: cpuid leaf 1's ecx (F16C bit 29), leaf 7's ebx (AVX2 bit 5, AVX-512F bit 16) and xcr0
 * (the register state the OS saves), once AVX, FMA and OSXSAVE are present; 0 when they are not. */
static int attngen_x86_features(unsigned *leaf1_ecx, unsigned *leaf7_ebx, unsigned *xcr0)
{
  unsigned a, b, c, d, xcr0_hi;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  if (!((c >> 12) & 1) || !((c >> 27) & 1) || !((c >> 28) & 1)) return 0; /* FMA, OSXSAVE, AVX */
  *leaf1_ecx = c;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
  __asm__ volatile("xgetbv" : "=a"(*xcr0), "=d"(xcr0_hi) : "c"(0));
  (void)xcr0_hi;
  *leaf7_ebx = b;
  return 1;
}
#endif

/* AVX2 + FMA, and the OS saving both the xmm and the ymm halves on context switch (xcr0 bits 1-2). */
static int attngen_cpu_has_avx2(void)
{
#if defined(ATTNGEN_X86)
  unsigned c, b, xcr0;
  return attngen_x86_features(&c, &b, &xcr0) && ((b >> 5) & 1) && (xcr0 & 6u) == 6u;
#else
  return 0;
#endif
}

/* AVX-512F with AVX2 and FMA (the kernels' helpers use all three), and the OS saving the opmask registers and
 * both zmm state components (xcr0 bits 5-7) besides xmm and ymm (bits 1-2). */
static int attngen_cpu_has_avx512(void)
{
#if defined(ATTNGEN_X86)
  unsigned c, b, xcr0;
  return attngen_x86_features(&c, &b, &xcr0) && ((b >> 5) & 1) && ((b >> 16) & 1) && (xcr0 & 0xE6u) == 0xE6u;
#else
  return 0;
#endif
}

/* F16C: only the AVX2 kernels that read an f16 cache convert with it. */
static int attngen_cpu_has_f16c(void)
{
#if defined(ATTNGEN_X86)
  unsigned c, b, xcr0;
  return attngen_x86_features(&c, &b, &xcr0) && ((c >> 29) & 1);
#else
  return 0;
#endif
}

/* Whether this CPU runs kernel k: its ISA, and what its storage type adds on that ISA. */
static int kernel_runs_here(const attngen_kernel_info *k)
{
  if (k->isa == ATTNGEN_ISA_AVX2 && k->kv_dtype == ATTNGEN_KV_F16) {
    static int f16c = -1;
    if (f16c < 0) f16c = attngen_cpu_has_f16c();
    return f16c;
  }
  return 1;
}

static int attngen_cpu_has_neon(void)
{
#if defined(__aarch64__)
  return 1; /* AdvSIMD is mandatory on aarch64 */
#else
  return 0;
#endif
}

static int attngen_cpu_always(void) { return 1; }

static unsigned detect_isas(void)
{
  unsigned isas = 0;
  /* an ISA counts when this build compiled its code and the CPU (and OS) can run it */
#define DETECT(E, name, compiled, check) \
  if ((compiled) && check()) isas |= 1u << ATTNGEN_ISA_##E;
  ATTNGEN_ISA_LIST(DETECT)
#undef DETECT
  return isas;
}

unsigned attngen_cpu_isas(void)
{
  static volatile unsigned cached; /* 0 = not yet; detection is idempotent, so a race only repeats it */
  if (!cached) cached = detect_isas();
  return cached;
}

/* ISAs allowed for selection: the CPU's, capped by ATTNGEN_ISA. */
static unsigned allowed_isas(void)
{
  unsigned cpu = attngen_cpu_isas();
  const char *cap = getenv("ATTNGEN_ISA");
  int i;
  if (!cap || !*cap) return cpu;
  for (i = 0; i < ATTNGEN_ISA_COUNT_; ++i)
    if (strcmp(cap, isa_names[i]) == 0) {
      if (!(cpu & (1u << i))) {
        isa_env_ignored(cap, "unusable");
        return cpu;
      }
      /* the named ISA and the portable one */
      return (1u << i) | (1u << ATTNGEN_ISA_SCALAR);
    }
  isa_env_ignored(cap, "unknown");
  return cpu;
}

/* Best first. */
#define PREF(E, ...) ATTNGEN_ISA_##E,
static const attngen_isa isa_preference[ATTNGEN_ISA_COUNT_] = { ATTNGEN_ISA_LIST(PREF) };
#undef PREF

/* ---------------------------------------------------------------- selection */

static int check_shape(const attngen_shape *s)
{
  if (!s) return fail(ATTNGEN_ERR_NULL, "attngen: shape is NULL");
  if (s->heads <= 0 || s->kv_heads <= 0 || s->head_dim <= 0)
    return fail(ATTNGEN_ERR_SIZE, "attngen: heads (%d), kv_heads (%d) and head_dim (%d) must be positive", s->heads,
                s->kv_heads, s->head_dim);
  if (s->heads % s->kv_heads != 0)
    return fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: heads (%d) is not a multiple of kv_heads (%d)", s->heads,
                s->kv_heads);
  if (s->head_dim > ATTNGEN_MAX_HEAD_DIM)
    return fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: head_dim %d is above the maximum %d", s->head_dim,
                ATTNGEN_MAX_HEAD_DIM);
#ifdef ATTNGEN_MAX_HEADS
  if (s->heads > ATTNGEN_MAX_HEADS) /* the kernels count query rows x group in int */
    return fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: heads %d is above the maximum %d", s->heads, ATTNGEN_MAX_HEADS);
#endif
  if ((unsigned)s->mask >= ATTNGEN_MASK_COUNT_) return fail(ATTNGEN_ERR_SHAPE, "attngen: unknown mask %d", (int)s->mask);
  if ((unsigned)s->phase >= ATTNGEN_PHASE_COUNT_)
    return fail(ATTNGEN_ERR_SHAPE, "attngen: unknown phase %d", (int)s->phase);
  if ((unsigned)s->kv_dtype >= ATTNGEN_KV_COUNT_)
    return fail(ATTNGEN_ERR_SHAPE, "attngen: unknown kv_dtype %d (valid: 0..%d; 0 = f32)", (int)s->kv_dtype,
                ATTNGEN_KV_COUNT_ - 1);
  if (kv_types[s->kv_dtype].group > 0 && s->head_dim % kv_types[s->kv_dtype].group != 0)
    return fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: kv_dtype %s needs head_dim (%d) to be a multiple of %d",
                kv_types[s->kv_dtype].name, s->head_dim, kv_types[s->kv_dtype].group);
  return ATTNGEN_OK;
}

/* A table from another generator ABI has another layout or meaning: refuse it rather than misread it. */
static int check_table(const attngen_table *t)
{
  if (t && t->abi != ATTNGEN_ABI)
    return fail(ATTNGEN_ERR_UNSUPPORTED,
                "attngen: table '%s' comes from a generator with table ABI %d; this runtime (attngen %s) reads ABI %d: "
                "regenerate it with attngen %s", t->abi > 0 && t->abi < 1000 ? t->model : "?", t->abi,
                ATTNGEN_VERSION_STRING, ATTNGEN_ABI, ATTNGEN_VERSION_STRING);
  return ATTNGEN_OK;
}

/* Binds a kernel to a shape: its work cut (the plan's constants, or computed for the shape by a generic kernel)
 * and the table's parameters. The table's parameters belong to its model's shape, so they travel with any
 * kernel selected for that shape, the generic fallback included: the fallback never changes the result. */
static void bind(const attngen_table *t, const attngen_kernel_info *k, const attngen_shape *s, attngen_kernel *out)
{
  memset(out, 0, sizeof *out);
  out->info = k;
  out->shape = *s;
  if (k->work_fn) k->work_fn(s, &out->work);
  else out->work = k->work;
  if (t && t->heads == s->heads && t->kv_heads == s->kv_heads && t->head_dim == s->head_dim) out->params = t->params;
}

static int matches(const attngen_kernel_info *k, const attngen_shape *s, attngen_isa isa)
{
  return k->isa == isa && k->heads == s->heads && k->kv_heads == s->kv_heads && k->head_dim == s->head_dim &&
         k->mask == s->mask && k->phase == s->phase && k->kv_dtype == s->kv_dtype && kernel_runs_here(k);
}

static const attngen_kernel_info *find_generic(const attngen_shape *s, attngen_isa isa)
{
  int i;
  for (i = 0; i < attngen_table_generic.count; ++i) {
    const attngen_kernel_info *k = &attngen_table_generic.kernels[i];
    if (k->isa == isa && k->phase == s->phase && k->kv_dtype == s->kv_dtype && kernel_runs_here(k)) return k;
  }
  return NULL;
}

static const attngen_kernel_info *find_specialized(const attngen_table *t, const attngen_shape *s, attngen_isa isa)
{
  int i;
  if (!t) return NULL;
  for (i = 0; i < t->count; ++i)
    if (matches(&t->kernels[i], s, isa)) return &t->kernels[i];
  return NULL;
}

int attngen_select_specialized(const attngen_table *table, const attngen_shape *shape, attngen_isa isa,
                               attngen_kernel *out)
{
  int st = check_shape(shape);
  const attngen_kernel_info *k;
  if (st) return st;
  if (!out) return fail(ATTNGEN_ERR_NULL, "attngen: out is NULL");
  if ((st = check_table(table))) return st;
  if ((unsigned)isa >= ATTNGEN_ISA_COUNT_)
    return fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: unknown ISA %d (valid: 0..%d)", (int)isa, ATTNGEN_ISA_COUNT_ - 1);
  if (!(attngen_cpu_isas() & (1u << isa)))
    return fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: this CPU cannot run %s", attngen_isa_name(isa));
  k = find_specialized(table, shape, isa);
  if (!k)
    return fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: table '%s' has no %s kernel for h%d kv%d d%d %s %s kv %s",
                table ? table->model : "(none)", attngen_isa_name(isa), shape->heads, shape->kv_heads,
                shape->head_dim, attngen_mask_name(shape->mask), attngen_phase_name(shape->phase),
                attngen_kv_dtype_name(shape->kv_dtype));
  bind(table, k, shape, out);
  return ATTNGEN_OK;
}

int attngen_select_generic(const attngen_shape *shape, attngen_isa isa, attngen_kernel *out)
{
  int st = check_shape(shape);
  const attngen_kernel_info *k;
  if (st) return st;
  if (!out) return fail(ATTNGEN_ERR_NULL, "attngen: out is NULL");
  if ((unsigned)isa >= ATTNGEN_ISA_COUNT_)
    return fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: unknown ISA %d (valid: 0..%d)", (int)isa, ATTNGEN_ISA_COUNT_ - 1);
  if (!(attngen_cpu_isas() & (1u << isa)))
    return fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: this CPU cannot run %s", attngen_isa_name(isa));
  k = find_generic(shape, isa);
  if (!k) return fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: no generic %s kernel in this build", attngen_isa_name(isa));
  bind(NULL, k, shape, out);
  return ATTNGEN_OK;
}

int attngen_select(const attngen_table *table, const attngen_shape *shape, attngen_kernel *out)
{
  const unsigned allowed = allowed_isas();
  int st = check_shape(shape), i;
  if (st) return st;
  if (!out) return fail(ATTNGEN_ERR_NULL, "attngen: out is NULL");
  if ((st = check_table(table))) return st;
  for (i = 0; i < ATTNGEN_ISA_COUNT_; ++i) {
    const attngen_isa isa = isa_preference[i];
    const attngen_kernel_info *k;
    if (!(allowed & (1u << isa))) continue;
    k = find_specialized(table, shape, isa);
    if (k) {
      bind(table, k, shape, out);
      logf_verbose("h%d kv%d d%d %s %s -> %s (specialized, table '%s')", shape->heads, shape->kv_heads,
                   shape->head_dim, attngen_mask_name(shape->mask), attngen_phase_name(shape->phase), k->name,
                   table->model);
      return ATTNGEN_OK;
    }
    logf_verbose("h%d kv%d d%d %s %s: no specialized %s kernel in table '%s'", shape->heads, shape->kv_heads,
                 shape->head_dim, attngen_mask_name(shape->mask), attngen_phase_name(shape->phase),
                 attngen_isa_name(isa), table ? table->model : "(none)");
  }
  for (i = 0; i < ATTNGEN_ISA_COUNT_; ++i) {
    const attngen_isa isa = isa_preference[i];
    const attngen_kernel_info *k;
    if (!(allowed & (1u << isa))) continue;
    k = find_generic(shape, isa);
    if (k) {
      bind(table, k, shape, out);
      logf_verbose("h%d kv%d d%d %s %s -> %s (generic fallback)", shape->heads, shape->kv_heads, shape->head_dim,
                   attngen_mask_name(shape->mask), attngen_phase_name(shape->phase), k->name);
      return ATTNGEN_OK;
    }
  }
  return fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: no kernel can run this shape on this CPU");
}

/* ---------------------------------------------------------------- checked sizes */

/* Every size the runtime derives from the caller's numbers goes through these: a product or sum that does not
 * fit is reported (1), never wrapped. */
static int mul_size(size_t a, size_t b, size_t *r)
{
  if (b != 0 && a > SIZE_MAX / b) return 1;
  *r = a * b;
  return 0;
}
static int add_size(size_t a, size_t b, size_t *r)
{
  if (a > SIZE_MAX - b) return 1;
  *r = a + b;
  return 0;
}
/* The most floats one tensor (or one allocation) may span: its size in bytes must fit in ptrdiff_t. */
#define ATTNGEN_MAX_FLOATS ((size_t)PTRDIFF_MAX / sizeof(float))

/* ---------------------------------------------------------------- arguments */

/* a * n for a default stride; PTRDIFF_MAX when it does not fit (check_args then refuses the extent), 0 when a
 * size is not positive (left to check_args to report). */
static ptrdiff_t default_stride(ptrdiff_t a, ptrdiff_t n)
{
  if (a <= 0 || n <= 0) return 0;
  return a > PTRDIFF_MAX / n ? PTRDIFF_MAX : a * n;
}

/* The dense token-major default of each zero stride: head = head_dim, seq = heads * head_dim, batch = rows * seq. */
static void fill_default_strides(attngen_strides *st, int heads, int head_dim, ptrdiff_t rows)
{
  if (!st->head) st->head = head_dim;
  if (!st->seq) st->seq = default_stride(heads, head_dim);
  if (!st->batch) st->batch = default_stride(rows, st->seq);
}

void attngen_args_default_strides(const attngen_shape *s, attngen_args *a)
{
  ptrdiff_t cap;
  if (!s || !a) return;
  cap = a->kv_capacity > 0 ? a->kv_capacity : a->kv_len;
  fill_default_strides(&a->q_stride, s->heads, s->head_dim, a->q_len);
  fill_default_strides(&a->o_stride, s->heads, s->head_dim, a->q_len);
  fill_default_strides(&a->k_stride, s->kv_heads, s->head_dim, cap);
  fill_default_strides(&a->v_stride, s->kv_heads, s->head_dim, cap);
  if ((unsigned)s->kv_dtype < ATTNGEN_KV_COUNT_ && s->head_dim > 0 && attngen_kv_scales_per_row(s->kv_dtype, s->head_dim)) {
    const int groups = attngen_kv_scales_per_row(s->kv_dtype, s->head_dim);
    fill_default_strides(&a->k_scale_stride, s->kv_heads, groups, cap);
    fill_default_strides(&a->v_scale_stride, s->kv_heads, groups, cap);
  }
}

static int check_strides(const char *what, const attngen_strides *st)
{
  if (st->batch < 0 || st->seq < 0 || st->head < 0)
    return fail(ATTNGEN_ERR_STRIDE, "attngen: %s strides must be non-negative (batch %td, seq %td, head %td)", what,
                st->batch, st->seq, st->head);
  return ATTNGEN_OK;
}

/* The rows (batch, row, head) of a tensor that is written must not overlap (non-negative strides): sorted by
 * stride, each must step over the whole block of the dimensions below it. */
static int rows_disjoint(const char *what, const attngen_strides *st, int n_batch, int n_rows, int n_heads, int d)
{
  ptrdiff_t s[3], n[3], t;
  size_t span = (size_t)d;
  int i, k;
  s[0] = st->head, n[0] = n_heads;
  s[1] = st->seq, n[1] = n_rows;
  s[2] = st->batch, n[2] = n_batch;
  for (i = 0; i < 3; ++i)
    for (k = i + 1; k < 3; ++k)
      if (s[k] < s[i]) {
        t = s[i], s[i] = s[k], s[k] = t;
        t = n[i], n[i] = n[k], n[k] = t;
      }
  for (i = 0; i < 3; ++i) {
    if (n[i] <= 1) continue;
    if ((size_t)s[i] < span)
      return fail(ATTNGEN_ERR_STRIDE, "attngen: %s strides (batch %td, seq %td, head %td) make rows overlap", what,
                  st->batch, st->seq, st->head);
    if (mul_size((size_t)s[i], (size_t)n[i], &span))
      return fail(ATTNGEN_ERR_SIZE, "attngen: %s strides (batch %td, seq %td, head %td) overflow size_t", what,
                  st->batch, st->seq, st->head);
  }
  return ATTNGEN_OK;
}

/* Output rows (batch, query, head) must not overlap, or threads would race and results would be garbage. */
static int check_output_strides(const attngen_shape *s, const attngen_args *a)
{
  return rows_disjoint("output", &a->o_stride, a->batch, a->q_len, s->heads, s->head_dim);
}

/* Extent in floats of a [n0][n1][n2][d] tensor with non-negative strides (n0, n1, n2, d >= 1): the offset of
 * its last element + 1. Refused when it, or any product or sum on the way, exceeds ATTNGEN_MAX_FLOATS. */
static int tensor_extent(const char *what, const char *rows_name, const attngen_strides *st, int n0, int n1, int n2,
                         int d, size_t *out)
{
  const ptrdiff_t s[3] = { st->batch, st->seq, st->head };
  const int n[3] = { n0, n1, n2 };
  size_t e = (size_t)d, t;
  int i;
  for (i = 0; i < 3; ++i)
    if (mul_size((size_t)(n[i] - 1), (size_t)s[i], &t) || add_size(e, t, &e) || e > ATTNGEN_MAX_FLOATS)
      return fail(ATTNGEN_ERR_SIZE,
                  "attngen: %s spans more than PTRDIFF_MAX bytes: (batch %d - 1) * batch stride %td + (%s %d - 1) * "
                  "seq stride %td + (heads %d - 1) * head stride %td + head_dim %d floats",
                  what, n0, st->batch, rows_name, n1, st->seq, n2, st->head, d);
  *out = e;
  return ATTNGEN_OK;
}

/* One tensor's address range [lo, hi) in bytes. */
typedef struct {
  const char *name;
  uintptr_t lo, hi;
} addr_range;

static int make_range(const char *name, const void *p, size_t floats, size_t elem, addr_range *r)
{
  size_t bytes = floats * elem; /* floats <= ATTNGEN_MAX_FLOATS: no overflow */
  r->name = name;
  r->lo = (uintptr_t)p;
  if (r->lo > UINTPTR_MAX - bytes)
    return fail(ATTNGEN_ERR_SIZE, "attngen: %s (%zu bytes at %p) runs past the end of the address space", name, bytes,
                p);
  r->hi = r->lo + bytes;
  return ATTNGEN_OK;
}

/* The K/V fields of each storage type, in the order of attngen_args (and attngen_append_args): k, v of the types,
 * then the int8 scales. A call sets exactly those of its kernel's type, or it is refused: a pointer of another
 * type would be read as this one (or, from a struct that was not zero-initialized, garbage would be). */
enum { KVP_F32_K, KVP_F32_V, KVP_F16_K, KVP_F16_V, KVP_BF16_K, KVP_BF16_V, KVP_I8_K, KVP_I8_V, KVP_SCALE_K, KVP_SCALE_V,
       KVP_COUNT };
static const char *const kvp_names[KVP_COUNT] = { "k", "v", "k_f16", "v_f16", "k_bf16", "v_bf16", "k_i8", "v_i8",
                                                  "k_scale", "v_scale" };
static const char *const kvp_cache_names[KVP_COUNT] = { "k_cache", "v_cache", "k_cache_f16", "v_cache_f16",
                                                        "k_cache_bf16", "v_cache_bf16", "k_cache_i8", "v_cache_i8",
                                                        "k_cache_scale", "v_cache_scale" };

/* The fields type t reads: its K and V (and scales: int8 types), as KVP_ indices; returns how many. */
static int kv_fields(attngen_kv_dtype t, int f[4])
{
  switch (t) {
  case ATTNGEN_KV_F32: f[0] = KVP_F32_K, f[1] = KVP_F32_V; return 2;
  case ATTNGEN_KV_F16: f[0] = KVP_F16_K, f[1] = KVP_F16_V; return 2;
  case ATTNGEN_KV_BF16: f[0] = KVP_BF16_K, f[1] = KVP_BF16_V; return 2;
  default: f[0] = KVP_I8_K, f[1] = KVP_I8_V, f[2] = KVP_SCALE_K, f[3] = KVP_SCALE_V; return 4;
  }
}

/* p[KVP_*]: the call's pointers (names: kvp_names or kvp_cache_names). NULL ones of type t: ATTNGEN_ERR_NULL;
 * another type's set: ATTNGEN_ERR_DTYPE. */
static int check_kv_pointers(attngen_kv_dtype t, const void *const p[KVP_COUNT], const char *kernel_name,
                             const char *const names[KVP_COUNT])
{
  int f[4], n = kv_fields(t, f), i, j, wanted;
  /* another type's field first: a cache of the wrong type is ATTNGEN_ERR_DTYPE, whatever else is missing */
  for (i = 0; i < KVP_COUNT; ++i) {
    for (wanted = 0, j = 0; j < n; ++j) wanted |= f[j] == i;
    if (!wanted && p[i])
      return fail(ATTNGEN_ERR_DTYPE, "attngen: kernel %s reads a K/V cache of type %s, but %s is set (a field of "
                  "type %s; the fields of other types must be NULL)", kernel_name, kv_types[t].name, names[i],
                  i < KVP_I8_K ? kv_types[i / 2].name : "int8");
  }
  for (i = 0; i < n; ++i)
    if (!p[f[i]])
      return fail(ATTNGEN_ERR_NULL, "attngen: kernel %s reads a K/V cache of type %s: %s must not be NULL", kernel_name,
                  kv_types[t].name, names[f[i]]);
  return ATTNGEN_OK;
}

static void args_kv_pointers(const attngen_args *a, const void *p[KVP_COUNT])
{
  p[KVP_F32_K] = a->k, p[KVP_F32_V] = a->v, p[KVP_F16_K] = a->k_f16, p[KVP_F16_V] = a->v_f16;
  p[KVP_BF16_K] = a->k_bf16, p[KVP_BF16_V] = a->v_bf16, p[KVP_I8_K] = a->k_i8, p[KVP_I8_V] = a->v_i8;
  p[KVP_SCALE_K] = a->k_scale, p[KVP_SCALE_V] = a->v_scale;
}

/* Every extent, in checked arithmetic, and the aliasing rule: outputs must not overlap inputs or each other
 * (a conservative test on whole address ranges, documented in attngen.h). a has its default strides. */
static int check_extents(const attngen_shape *s, const attngen_args *a, int reads_lens)
{
  size_t eq = 0, ek = 0, ev = 0, eo = 0, el = 0; /* (initialized: gcc -O3 cannot see tensor_extent set them) */
  const size_t kv_bytes = (size_t)attngen_kv_dtype_bytes(s->kv_dtype);
  const int groups = attngen_kv_scales_per_row(s->kv_dtype, s->head_dim);
  const void *kvp[KVP_COUNT];
  addr_range out[2], in[6];
  int nout = 0, nin = 0, i, j, st;
  if ((st = tensor_extent("q", "q_len", &a->q_stride, a->batch, a->q_len, s->heads, s->head_dim, &eq)) ||
      (st = tensor_extent("k", "kv_len", &a->k_stride, a->batch, a->kv_len, s->kv_heads, s->head_dim, &ek)) ||
      (st = tensor_extent("v", "kv_len", &a->v_stride, a->batch, a->kv_len, s->kv_heads, s->head_dim, &ev)) ||
      (st = tensor_extent("o", "q_len", &a->o_stride, a->batch, a->q_len, s->heads, s->head_dim, &eo)))
    return st;
  if (a->lse &&
      (mul_size((size_t)a->batch, (size_t)s->heads, &el) || mul_size(el, (size_t)a->q_len, &el) ||
       el > ATTNGEN_MAX_FLOATS))
    return fail(ATTNGEN_ERR_SIZE, "attngen: lse (batch %d * heads %d * q_len %d floats) spans more than PTRDIFF_MAX bytes",
                a->batch, s->heads, a->q_len);
  if ((st = make_range("o", a->o, eo, sizeof(float), &out[nout++]))) return st;
  if (a->lse && (st = make_range("lse", a->lse, el, sizeof(float), &out[nout++]))) return st;
  args_kv_pointers(a, kvp);
  {
    int f[4];
    kv_fields(s->kv_dtype, f);
    if ((st = make_range("q", a->q, eq, sizeof(float), &in[nin++])) ||
        (st = make_range(kvp_names[f[0]], kvp[f[0]], ek, kv_bytes, &in[nin++])) ||
        (st = make_range(kvp_names[f[1]], kvp[f[1]], ev, kv_bytes, &in[nin++])))
      return st;
  }
  if (groups) { /* int8 scales: [batch][kv rows][kv_heads][head_dim / group] through their own strides */
    size_t eks = 0, evs = 0;
    if ((st = tensor_extent("k_scale", "kv_len", &a->k_scale_stride, a->batch, a->kv_len, s->kv_heads, groups,
                            &eks)) ||
        (st = tensor_extent("v_scale", "kv_len", &a->v_scale_stride, a->batch, a->kv_len, s->kv_heads, groups,
                            &evs)) ||
        (st = make_range("k_scale", a->k_scale, eks, sizeof(float), &in[nin++])) ||
        (st = make_range("v_scale", a->v_scale, evs, sizeof(float), &in[nin++])))
      return st;
  }
  if (reads_lens && (st = make_range("kv_lens", a->kv_lens, (size_t)a->batch, sizeof(int32_t), &in[nin++]))) return st;
  for (i = 0; i < nout; ++i) {
    for (j = i + 1; j < nout; ++j)
      if (out[i].lo < out[j].hi && out[j].lo < out[i].hi)
        return fail(ATTNGEN_ERR_ALIAS, "attngen: %s and %s overlap (outputs must not overlap inputs or each other)",
                    out[i].name, out[j].name);
    for (j = 0; j < nin; ++j)
      if (out[i].lo < in[j].hi && in[j].lo < out[i].hi)
        return fail(ATTNGEN_ERR_ALIAS,
                    "attngen: output %s overlaps input %s (outputs must not overlap inputs or each other)", out[i].name,
                    in[j].name);
  }
  return ATTNGEN_OK;
}

/* Validates everything and returns a normalized copy (default strides, capacity, scale). */
static int check_args(const attngen_kernel *kern, const attngen_args *in, attngen_args *a)
{
  const attngen_kernel_info *info;
  const attngen_shape *s;
  int st, b, reads_lens;
  if (!kern || !kern->info) return fail(ATTNGEN_ERR_NULL, "attngen: kernel is NULL (select one first)");
  if (!in) return fail(ATTNGEN_ERR_NULL, "attngen: args is NULL");
  info = kern->info;
  s = &kern->shape;
  if ((st = check_shape(s))) return st;
  if ((info->heads && (info->heads != s->heads || info->kv_heads != s->kv_heads || info->head_dim != s->head_dim)) ||
      info->phase != s->phase || (info->heads && info->mask != s->mask))
    return fail(ATTNGEN_ERR_SHAPE, "attngen: kernel %s does not match the bound shape h%d kv%d d%d %s %s", info->name,
                s->heads, s->kv_heads, s->head_dim, attngen_mask_name(s->mask), attngen_phase_name(s->phase));
  if ((in->heads && in->heads != s->heads) || (in->kv_heads && in->kv_heads != s->kv_heads) ||
      (in->head_dim && in->head_dim != s->head_dim)) {
    /* name only what the caller set: a field left at 0 is not part of the check */
    char said[3][32];
    const int v[3] = { in->heads, in->kv_heads, in->head_dim };
    for (b = 0; b < 3; ++b)
      if (v[b]) snprintf(said[b], sizeof said[b], "%d", v[b]);
      else snprintf(said[b], sizeof said[b], "(unset)");
    return fail(ATTNGEN_ERR_SHAPE, "attngen: args say heads %s, kv_heads %s, head_dim %s but kernel %s is for heads %d, "
                "kv_heads %d, head_dim %d", said[0], said[1], said[2], info->name, s->heads, s->kv_heads, s->head_dim);
  }
  if (info->kv_dtype != s->kv_dtype)
    return fail(ATTNGEN_ERR_SHAPE, "attngen: kernel %s reads a K/V cache of type %s, the bound shape says %s", info->name,
                attngen_kv_dtype_name(info->kv_dtype), attngen_kv_dtype_name(s->kv_dtype));
  if (!in->q || !in->o)
    return fail(ATTNGEN_ERR_NULL, "attngen: q and o must not be NULL (q=%p o=%p)", (const void *)in->q, (void *)in->o);
  {
    const void *kvp[KVP_COUNT];
    args_kv_pointers(in, kvp);
    if ((st = check_kv_pointers(s->kv_dtype, kvp, info->name, kvp_names))) return st;
  }
  if (in->batch <= 0 || in->q_len <= 0 || in->kv_len <= 0)
    return fail(ATTNGEN_ERR_SIZE, "attngen: batch (%d), q_len (%d) and kv_len (%d) must be positive", in->batch,
                in->q_len, in->kv_len);
  if (in->kv_capacity < 0) return fail(ATTNGEN_ERR_SIZE, "attngen: kv_capacity (%d) is negative", in->kv_capacity);
  if (in->q_len > ATTNGEN_MAX_LEN || in->kv_len > ATTNGEN_MAX_LEN || in->kv_capacity > ATTNGEN_MAX_LEN)
    return fail(ATTNGEN_ERR_SIZE, "attngen: %s (%d) is above ATTNGEN_MAX_LEN (%d)",
                in->q_len > ATTNGEN_MAX_LEN ? "q_len" : in->kv_len > ATTNGEN_MAX_LEN ? "kv_len" : "kv_capacity",
                in->q_len > ATTNGEN_MAX_LEN ? in->q_len : in->kv_len > ATTNGEN_MAX_LEN ? in->kv_len : in->kv_capacity,
                ATTNGEN_MAX_LEN);
  if (in->kv_capacity > 0 && in->kv_len > in->kv_capacity)
    return fail(ATTNGEN_ERR_CAPACITY, "attngen: kv_len (%d) exceeds kv_capacity (%d)", in->kv_len, in->kv_capacity);
  if (s->phase == ATTNGEN_PHASE_DECODE && in->q_len > ATTNGEN_DECODE_MAX_Q)
    return fail(ATTNGEN_ERR_SHAPE, "attngen: decode kernel %s takes q_len <= %d, got %d (use a prefill kernel)",
                info->name, ATTNGEN_DECODE_MAX_Q, in->q_len);
  if (!(in->scale >= 0.0f) || isinf(in->scale))
    return fail(ATTNGEN_ERR_SIZE, "attngen: scale must be finite and >= 0 (0 = default), got %g", (double)in->scale);
  reads_lens = (attngen_mask_features(s->mask) & ATTNGEN_FEATURE_KV_LENS) != 0; /* the spec decides, not the name */
  if (reads_lens && !in->kv_lens)
    return fail(ATTNGEN_ERR_LENGTHS, "attngen: mask %s needs kv_lens (valid keys per sequence)",
                attngen_mask_name(s->mask));
  *a = *in;
  if (a->kv_capacity == 0) a->kv_capacity = a->kv_len;
  if ((st = check_strides("q", &a->q_stride)) || (st = check_strides("k", &a->k_stride)) ||
      (st = check_strides("v", &a->v_stride)) || (st = check_strides("o", &a->o_stride)) ||
      (st = check_strides("k_scale", &a->k_scale_stride)) || (st = check_strides("v_scale", &a->v_scale_stride)))
    return st;
  attngen_args_default_strides(s, a);
  if ((st = check_extents(s, a, reads_lens))) return st;
  if ((st = check_output_strides(s, a))) return st;
  /* last: kv_lens is read only once everything else, batch included, has passed */
  if (reads_lens)
    for (b = 0; b < a->batch; ++b)
      if (a->kv_lens[b] < 0 || a->kv_lens[b] > a->kv_len)
        return fail(ATTNGEN_ERR_LENGTHS, "attngen: kv_lens[%d] = %d is outside [0, kv_len = %d]", b, a->kv_lens[b],
                    a->kv_len);
  return ATTNGEN_OK;
}

/* ---------------------------------------------------------------- plans */

/* The work cut comes from the kernel (attngen_work, chosen by the generator's plan); the runtime executes it.
 * What it computes depends only on the shape and lengths, never on the thread count, so results are
 * bit-identical for any thread count (more threads than items only spreads a decode step's kv heads over more
 * items, which computes each head the same way). */

struct attngen_plan {
  attngen_kernel kernel;
  attngen_args args; /* normalized */
  attngen_item *items;
  size_t n_items;
  int nthreads, splits, group;
  size_t scratch_floats;
  float **scratch;   /* one per thread, 64-byte aligned views into scratch_raw */
  void **scratch_raw;
  size_t *scratch_cap; /* bytes behind each scratch_raw (a cached buffer may be larger than needed) */
  float *part_o, *part_ms; /* split-KV partials: [split][batch][heads][q_len] x head_dim, and (max, sum) pairs */
  float *rope_cs;          /* RoPE kernels: cos/sin of every query, [batch][q_len][rotary_dim] (plan_rope) */
  /* K/V repack (kernel->work.pack_kv_min_q): [batch][kv head][K rows, then V rows] head-major, each (sequence, kv
   * head) copied by the first item that needs it; the items then read `packed` instead of `args` */
  float *kv_pack;
  void *kv_pack_raw;
  unsigned char *kv_state; /* per (sequence, kv head): 0 not copied, 1 being copied, 2 copied */
  attngen_args packed;
  size_t bytes;
};

static int plan_rope(attngen_plan *p); /* the RoPE section, below */

/* A short decode step is cut by kv heads for 2+ threads only when each part reads at least this many K/V bytes
 * or does this many flops (~100 us of work here): a pool thread that has gone to sleep takes tens of us to wake
 * on a busy VM. 2 threads vs the single item, calls back to back / 300 us apart / 1 ms apart: Llama-3-8B at kv_len
 * 512 (parts of 2 MiB and 4.2 MFLOP) 1.27-1.93x / 1.19x / 1.28-1.30x; GPT-2 at kv_len 768 (2.25 MiB, 1.2 MFLOP)
 * 1.36-1.76x / 0.87-0.92x / 1.05-1.42x, so parts that small stay whole. */
#define HEAD_SPLIT_MIN_BYTES (4.0 * 1024 * 1024)
#define HEAD_SPLIT_MIN_FLOP 4.0e6

/* The 64-byte aligned start inside a block of bytes + 64 from malloc. */
static void *align64(void *raw) { return (unsigned char *)raw + (64 - ((size_t)raw & 63)); }

static void *aligned64(size_t bytes, void **raw)
{
  *raw = malloc(bytes + 64);
  return *raw ? align64(*raw) : NULL;
}

/* attngen_alloc: the block from malloc holds the aligned region and, in the word before it, the block's address for
 * attngen_free. Huge-page requests are rounded up to whole 2 MiB pages inside the block, so the mark never covers
 * bytes that malloc's bookkeeping uses. */
#define HUGE_PAGE ((size_t)2 << 20)
void *attngen_alloc(size_t bytes)
{
  const char *env = getenv("ATTNGEN_HUGEPAGES");
  const int huge = bytes >= HUGE_PAGE && !(env && strcmp(env, "0") == 0);
  const size_t align = huge ? HUGE_PAGE : 64;
  size_t len = bytes, total;
  unsigned char *raw, *p;
  if (bytes == 0) {
    fail(ATTNGEN_ERR_SIZE, "attngen_alloc: bytes is 0");
    return NULL;
  }
  if (huge && add_size(len, HUGE_PAGE - 1, &len)) len = 0;
  if (huge) len = len / HUGE_PAGE * HUGE_PAGE;
  if (len == 0 || add_size(len, align + sizeof(void *), &total) || total > (size_t)PTRDIFF_MAX) {
    fail(ATTNGEN_ERR_SIZE, "attngen_alloc: %zu bytes do not fit in the address space", bytes);
    return NULL;
  }
  raw = (unsigned char *)malloc(total);
  if (!raw) {
    fail(ATTNGEN_ERR_NOMEM, "attngen_alloc: out of memory (%zu bytes)", bytes);
    return NULL;
  }
  p = raw + sizeof(void *);
  p += (align - (size_t)p % align) % align;
  memcpy(p - sizeof(void *), &raw, sizeof raw);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (huge) (void)madvise(p, len, MADV_HUGEPAGE); /* advice only: 4 KiB pages still work */
#endif
  return p;
}

void attngen_free(void *p)
{
  void *raw;
  if (!p) return;
  memcpy(&raw, (unsigned char *)p - sizeof(void *), sizeof raw);
  free(raw);
}

/* Scratch buffers are kept for the next plan (up to SCRATCH_CACHE of them, the largest): a decode step at kv_len
 * 512 took 0.19-0.20 ms with a fresh malloc per call and 0.15 ms without one (glibc served the 260 KiB buffers
 * by mmap, or trimmed the heap after them, so every call faulted its pages in again); 2 threads 0.24-0.25 ms. */
enum { SCRATCH_CACHE = 16 };
static void *cached_raw[SCRATCH_CACHE];
static size_t cached_cap[SCRATCH_CACHE];
static int n_cached;
#if ATTNGEN_HAVE_PTHREADS
static pthread_mutex_t cache_m = PTHREAD_MUTEX_INITIALIZER;
#define CACHE_LOCK() pthread_mutex_lock(&cache_m)
#define CACHE_UNLOCK() pthread_mutex_unlock(&cache_m)
#else
#define CACHE_LOCK() ((void)0)
#define CACHE_UNLOCK() ((void)0)
#endif

#ifdef ATTNGEN_POISON_SCRATCH
/* Test builds (tests/tests.mk): every scratch buffer a plan takes is filled with quiet NaNs, so a kernel that lets a
 * number it did not write this call (a skipped block of S, padding lanes) reach an output shows as NaN there. */
static void *poisoned(void *p, size_t bytes)
{
  static const uint32_t nan_bits = 0x7FC0DEADu;
  size_t i;
  if (p)
    for (i = 0; i + 4 <= bytes; i += 4) memcpy((unsigned char *)p + i, &nan_bits, 4);
  return p;
}
#else
#define poisoned(p, bytes) (p)
#endif

/* 64-byte aligned scratch of at least `bytes`: the smallest cached buffer that is large enough, else a new one.
 * *raw and *cap are what scratch_put takes back. */
static void *scratch_get(size_t bytes, void **raw, size_t *cap)
{
  int i, best = -1;
  CACHE_LOCK();
  for (i = 0; i < n_cached; ++i)
    if (cached_cap[i] >= bytes && (best < 0 || cached_cap[i] < cached_cap[best])) best = i;
  if (best >= 0) {
    *raw = cached_raw[best];
    *cap = cached_cap[best];
    --n_cached;
    cached_raw[best] = cached_raw[n_cached];
    cached_cap[best] = cached_cap[n_cached];
    CACHE_UNLOCK();
    return poisoned(align64(*raw), bytes);
  }
  CACHE_UNLOCK();
  *cap = bytes;
  return poisoned(aligned64(bytes, raw), bytes);
}

/* Keeps a scratch buffer for a later plan, or frees it (a full cache keeps its largest buffers). */
static void scratch_put(void *raw, size_t cap)
{
  int i, small = 0;
  if (!raw) return;
  CACHE_LOCK();
  if (n_cached < SCRATCH_CACHE) {
    cached_raw[n_cached] = raw;
    cached_cap[n_cached++] = cap;
    raw = NULL;
  } else {
    for (i = 1; i < n_cached; ++i)
      if (cached_cap[i] < cached_cap[small]) small = i;
    if (cached_cap[small] < cap) {
      void *out = cached_raw[small];
      cached_raw[small] = raw;
      cached_cap[small] = cap;
      raw = out;
    }
  }
  CACHE_UNLOCK();
  free(raw);
}

void attngen_plan_destroy(attngen_plan *p)
{
  int t;
  if (!p) return;
  if (p->scratch_raw && p->scratch_cap) /* both exist before any buffer is taken */
    for (t = 0; t < p->nthreads; ++t) scratch_put(p->scratch_raw[t], p->scratch_cap[t]);
  free(p->scratch_raw);
  free(p->scratch_cap);
  free((void *)p->scratch);
  free(p->items);
  free(p->part_o);
  free(p->part_ms);
  free(p->rope_cs);
  free(p->kv_pack_raw);
  free(p->kv_state);
  free(p);
}

/* ---- K/V repack: one copy per (sequence, kv head), shared by all of its query tiles ---- */

#if defined(__GNUC__) || defined(__clang__)
#define ATTNGEN_LAZY_PACK 1 /* copied on first use, by whichever thread gets there first */
#else
#define ATTNGEN_LAZY_PACK 0 /* no atomics: everything is copied when the plan is made */
#endif

/* Rows of sequence b that any item reads: kv_len, or kv_lens[b] (checked to lie in [0, kv_len]) when the mask
 * reads kv_lens. */
static int kv_pack_rows(const attngen_plan *p, int b)
{
  const attngen_args *a = &p->args;
  return (attngen_mask_features(p->kernel.shape.mask) & ATTNGEN_FEATURE_KV_LENS) ? a->kv_lens[b] : a->kv_len;
}

/* Row j of sequence b, kv head h of K (v = 0) or V (v = 1), as fp32 into dst: copied, or converted from the cache's
 * storage type (the portable conversions of attngen_convert.h: exact for f16 and bf16, q * scale for int8, the
 * same floats the decode kernels compute with). */
static void kv_row_to_float(const attngen_args *a, attngen_kv_dtype t, int d, int v, int b, int h, int j, float *dst)
{
  const attngen_strides *st = v ? &a->v_stride : &a->k_stride;
  const ptrdiff_t off = b * st->batch + (ptrdiff_t)j * st->seq + h * st->head;
  int c;
  switch (t) {
  case ATTNGEN_KV_F32: memcpy(dst, (v ? a->v : a->k) + off, sizeof(float) * (size_t)d); break;
  case ATTNGEN_KV_F16: {
    const attngen_f16 *x = (v ? a->v_f16 : a->k_f16) + off;
    for (c = 0; c < d; ++c) dst[c] = attngen_f16_bits_to_float(x[c].bits);
    break;
  }
  case ATTNGEN_KV_BF16: {
    const attngen_bf16 *x = (v ? a->v_bf16 : a->k_bf16) + off;
    for (c = 0; c < d; ++c) dst[c] = attngen_bf16_bits_to_float(x[c].bits);
    break;
  }
  default: {
    const int8_t *x = (v ? a->v_i8 : a->k_i8) + off;
    const attngen_strides *ss = v ? &a->v_scale_stride : &a->k_scale_stride;
    const float *sc = (v ? a->v_scale : a->k_scale) + b * ss->batch + (ptrdiff_t)j * ss->seq + h * ss->head;
    const int g = kv_group(t, d);
    for (c = 0; c < d; ++c) dst[c] = attngen_i8_to_float(x[c], sc[c / g]);
    break;
  }
  }
}

static void kv_pack_copy(const attngen_plan *p, int b, int h)
{
  const int d = p->kernel.shape.head_dim, n = kv_pack_rows(p, b);
  const attngen_kv_dtype t = p->kernel.shape.kv_dtype;
  float *kd = (float *)p->packed.k + b * p->packed.k_stride.batch + h * p->packed.k_stride.head;
  float *vd = (float *)p->packed.v + b * p->packed.v_stride.batch + h * p->packed.v_stride.head;
  int j;
  for (j = 0; j < n; ++j) {
    kv_row_to_float(&p->args, t, d, 0, b, h, j, kd + (size_t)j * d);
    kv_row_to_float(&p->args, t, d, 1, b, h, j, vd + (size_t)j * d);
  }
}

/* Make sure (b, h) is copied before an item reads it. Copying is a pure copy, so results do not depend on which
 * thread did it. A thread that finds another one copying waits for it (one head's rows: well under a tile's
 * worth of work per query tile that then reads them). */
static void kv_pack_ensure(attngen_plan *p, int b, int h)
{
#if ATTNGEN_LAZY_PACK
  unsigned char *s = &p->kv_state[(size_t)b * (size_t)p->kernel.shape.kv_heads + (size_t)h];
  unsigned char idle = 0;
  if (__atomic_load_n(s, __ATOMIC_ACQUIRE) == 2) return;
  if (__atomic_compare_exchange_n(s, &idle, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    kv_pack_copy(p, b, h);
    __atomic_store_n(s, 2, __ATOMIC_RELEASE);
    return;
  }
  while (__atomic_load_n(s, __ATOMIC_ACQUIRE) != 2) {
#if ATTNGEN_HAVE_PTHREADS
    sched_yield();
#endif
  }
#else
  (void)p, (void)b, (void)h; /* copied by plan_kv_pack */
#endif
}

/* Set up the repack when the kernel's plan asks for it (q_len >= work.pack_kv_min_q) and K/V are not already
 * head-major, or always when a prefill kernel reads a cache of another type than fp32: its code reads fp32 rows,
 * so the repack converts them, once per call (each row is then read by every query tile). Not an error for an
 * fp32 cache when the copy does not fit in memory (the items then read K/V in place); for another type it is. */
static int plan_kv_pack(attngen_plan *p)
{
  const attngen_args *a = &p->args;
  const attngen_shape *sh = &p->kernel.shape;
  const int d = sh->head_dim;
  const int convert = sh->kv_dtype != ATTNGEN_KV_F32 && sh->phase == ATTNGEN_PHASE_PREFILL;
  size_t head_floats, total, bytes;
  if (!convert) {
    if (p->kernel.work.pack_kv_min_q <= 0 || a->q_len < p->kernel.work.pack_kv_min_q || a->kv_len == 0) return 0;
    if (a->k_stride.seq == d && a->v_stride.seq == d) return 0; /* already head-major rows */
  }
  if (mul_size((size_t)a->kv_len, (size_t)d, &head_floats) || add_size(head_floats, 15, &head_floats)) goto nomem;
  head_floats = head_floats / 16 * 16; /* every head's rows start 64-byte aligned */
  if (mul_size(head_floats, 2 * (size_t)sh->kv_heads, &total) || mul_size(total, (size_t)a->batch, &total) ||
      mul_size(total, sizeof(float), &bytes) || bytes > (size_t)PTRDIFF_MAX - 64)
    goto nomem;
  p->kv_pack = (float *)aligned64(bytes, &p->kv_pack_raw);
  p->kv_state = (unsigned char *)calloc((size_t)a->batch * (size_t)sh->kv_heads, 1);
  if (!p->kv_pack || !p->kv_state) {
    free(p->kv_pack_raw);
    free(p->kv_state);
    p->kv_pack = NULL, p->kv_pack_raw = NULL, p->kv_state = NULL;
    goto nomem;
  }
  p->bytes += bytes + 64 + (size_t)a->batch * (size_t)sh->kv_heads;
  p->packed = *a;
  p->packed.k = p->kv_pack;
  p->packed.v = p->kv_pack + head_floats;
  p->packed.k_stride.seq = p->packed.v_stride.seq = d;
  p->packed.k_stride.head = p->packed.v_stride.head = (ptrdiff_t)(2 * head_floats);
  p->packed.k_stride.batch = p->packed.v_stride.batch = (ptrdiff_t)(2 * head_floats) * sh->kv_heads;
  /* the kernel reads the fp32 copy only */
  p->packed.k_f16 = p->packed.v_f16 = NULL;
  p->packed.k_bf16 = p->packed.v_bf16 = NULL;
  p->packed.k_i8 = p->packed.v_i8 = NULL;
  p->packed.k_scale = p->packed.v_scale = NULL;
#if !ATTNGEN_LAZY_PACK
  {
    int b, h;
    for (b = 0; b < a->batch; ++b)
      for (h = 0; h < sh->kv_heads; ++h) kv_pack_copy(p, b, h);
  }
#endif
  return 0;
nomem:
  return convert ? fail(ATTNGEN_ERR_NOMEM, "attngen: out of memory for the fp32 copy of the %s cache (%d rows of "
                        "%d kv heads) a prefill reads", kv_types[sh->kv_dtype].name, a->kv_len, sh->kv_heads)
                 : 0;
}

int attngen_plan_create(const attngen_kernel *kernel, const attngen_args *args, int nthreads, attngen_plan **out)
{
  attngen_plan *p;
  attngen_args a;
  int st, q_tile, b, h, s, q0, t, hpi;
  const attngen_work *w;
  size_t n = 0, cap, rows = 0, part_floats = 0;
  const attngen_shape *sh;
  if (!out) return fail(ATTNGEN_ERR_NULL, "attngen: plan out pointer is NULL");
  *out = NULL;
  /* before anything is allocated: the plan holds one scratch buffer per thread */
  if (nthreads <= 0 || nthreads > ATTNGEN_MAX_THREADS)
    return fail(ATTNGEN_ERR_SIZE, "attngen: nthreads (%d) must be in [1, ATTNGEN_MAX_THREADS = %d]", nthreads,
                ATTNGEN_MAX_THREADS);
  if ((st = check_args(kernel, args, &a))) return st;
  sh = &kernel->shape;
  p = (attngen_plan *)calloc(1, sizeof *p);
  if (!p) return fail(ATTNGEN_ERR_NOMEM, "attngen: out of memory");
  p->kernel = *kernel;
  p->args = a;
  p->nthreads = nthreads;
  p->group = sh->heads / sh->kv_heads;
  /* the scale every kernel computes with: the call's, else the table's (config `scale`), else 1/sqrt(head_dim) */
  if (p->args.scale == 0.0f) p->args.scale = kernel->params.scale;
  if (p->args.scale == 0.0f) p->args.scale = 1.0f / sqrtf((float)sh->head_dim);
  w = &kernel->work;
  q_tile = w->q_tile < a.q_len ? w->q_tile : a.q_len;
  hpi = w->kv_heads_per_item == 0 ? sh->kv_heads : w->kv_heads_per_item;
  p->scratch_floats = w->scratch_floats;

  p->splits = 1;
  if (w->split_max > 1 && a.batch < w->split_below_batch && w->split_min_keys > 0) {
    p->splits = a.kv_len / w->split_min_keys;
    if (p->splits > w->split_max) p->splits = w->split_max;
    if (p->splits < 1) p->splits = 1;
  }
  /* A decode step with fewer items than threads (one sequence, one KV chunk: kv_len below 2 x split_min_keys)
   * cuts its kv heads among as many items as there are threads, when each part is still worth a thread (see
   * HEAD_SPLIT_MIN_*); with one thread nothing changes. The results do not depend on it: a kv head's rows are
   * computed alike in whichever item holds them (the softmax works lane by lane, every block stays within one
   * head), so they stay bit-identical for any thread count. The split-KV cut above, which does change the
   * arithmetic, never depends on the threads. */
  if (w->kv_heads_per_item == 0 && nthreads > 1) {
    const long items = (long)a.batch * ((a.q_len - 1) / q_tile + 1) * p->splits;
    long parts = items < nthreads ? (nthreads + items - 1) / items : 1;
    if (parts > sh->kv_heads) parts = sh->kv_heads; /* a part holds at least one kv head */
    for (; parts >= 2; --parts) { /* as many parts as the threads want, fewer if they would be too small */
      const int part_heads = (int)((sh->kv_heads + parts - 1) / parts);
      /* the floats of one item's K (and of its V): its sequence's KV chunk, its heads */
      const double floats = (double)((a.kv_len + p->splits - 1) / p->splits) * part_heads * sh->head_dim;
      if (floats * 2.0 * sizeof(float) >= HEAD_SPLIT_MIN_BYTES ||
          floats * 4.0 * p->group * a.q_len >= HEAD_SPLIT_MIN_FLOP) {
        hpi = part_heads;
        break;
      }
    }
  }
  {
    /* item count and split-KV partial sizes, checked before anything else is allocated */
    size_t item_bytes, scratch_bytes;
    if (q_tile <= 0 || hpi <= 0 || p->splits <= 0) {
      st = fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: kernel %s asked for a bad work cut (q_tile %d, kv heads per "
                "item %d, splits %d)", kernel->info->name, q_tile, hpi, p->splits);
      attngen_plan_destroy(p); /* after the message: it reads p */
      return st;
    }
    if (mul_size((size_t)a.batch, (size_t)((sh->kv_heads - 1) / hpi + 1), &cap) ||
        mul_size(cap, (size_t)((a.q_len - 1) / q_tile + 1), &cap) || mul_size(cap, (size_t)p->splits, &cap) ||
        mul_size(cap, sizeof(attngen_item), &item_bytes) || item_bytes > (size_t)PTRDIFF_MAX) {
      st = fail(ATTNGEN_ERR_SIZE, "attngen: the work items (batch %d x kv heads %d / %d x q_len %d / %d x splits %d) "
                "do not fit in memory", a.batch, sh->kv_heads, hpi, a.q_len, q_tile, p->splits);
      attngen_plan_destroy(p);
      return st;
    }
    if (mul_size(p->scratch_floats, sizeof(float), &scratch_bytes) || scratch_bytes > (size_t)PTRDIFF_MAX - 64) {
      st = fail(ATTNGEN_ERR_SIZE, "attngen: kernel %s asked for %zu scratch floats", kernel->info->name,
                p->scratch_floats);
      attngen_plan_destroy(p);
      return st;
    }
    if (p->splits > 1 &&
        (mul_size((size_t)p->splits, (size_t)a.batch, &rows) || mul_size(rows, (size_t)sh->heads, &rows) ||
         mul_size(rows, (size_t)a.q_len, &rows) || mul_size(rows, (size_t)sh->head_dim + 2, &part_floats) ||
         part_floats > ATTNGEN_MAX_FLOATS)) {
      st = fail(ATTNGEN_ERR_SIZE, "attngen: split-KV partials (splits %d x batch %d x heads %d x q_len %d x "
                "(head_dim %d + 2) floats) span more than PTRDIFF_MAX bytes", p->splits, a.batch, sh->heads,
                a.q_len, sh->head_dim);
      attngen_plan_destroy(p);
      return st;
    }
  }
  p->items = (attngen_item *)calloc(cap, sizeof *p->items);
  p->scratch = (float **)calloc((size_t)nthreads, sizeof *p->scratch);
  p->scratch_raw = (void **)calloc((size_t)nthreads, sizeof *p->scratch_raw);
  p->scratch_cap = (size_t *)calloc((size_t)nthreads, sizeof *p->scratch_cap);
  if (!p->items || !p->scratch || !p->scratch_raw || !p->scratch_cap) goto nomem;
  for (t = 0; t < nthreads; ++t) {
    p->scratch[t] = (float *)scratch_get(p->scratch_floats * sizeof(float), &p->scratch_raw[t], &p->scratch_cap[t]);
    if (!p->scratch[t]) goto nomem;
  }
  p->bytes = cap * sizeof *p->items + (size_t)nthreads * (p->scratch_floats * sizeof(float) + 64);

  if (p->splits > 1) {
    /* rows * (head_dim + 2) floats fit in PTRDIFF_MAX bytes (checked above), so these products do too */
    p->part_o = (float *)malloc(rows * (size_t)sh->head_dim * sizeof(float));
    p->part_ms = (float *)malloc(2 * rows * sizeof(float));
    if (!p->part_o || !p->part_ms) goto nomem;
    p->bytes += rows * ((size_t)sh->head_dim + 2) * sizeof(float);
  }

  {
    /* split boundaries on tile-friendly multiples */
    const int align = w->split_align > 0 ? w->split_align : 1;
    int chunk = (a.kv_len + p->splits - 1) / p->splits;
    chunk = (chunk + align - 1) / align * align;
    /* One kv head's query tiles one after the other, so its K/V rows stay in the cache between them (threads
     * claim items in this order). Later query tiles of a causal prefill see more keys: they come first. */
    for (b = 0; b < a.batch; ++b)
      for (h = 0; h < sh->kv_heads; h += hpi)
        for (q0 = ((a.q_len - 1) / q_tile) * q_tile; q0 >= 0; q0 -= q_tile)
          for (s = 0; s < p->splits; ++s) {
            attngen_item *it = &p->items[n++];
            it->b = b;
            it->kvh0 = h;
            it->kvh1 = h + hpi < sh->kv_heads ? h + hpi : sh->kv_heads;
            it->q0 = q0;
            it->q1 = q0 + q_tile < a.q_len ? q0 + q_tile : a.q_len;
            it->causal_offset = a.kv_len - a.q_len; /* bottom-right aligned (attngen_step overrides it) */
            it->k0 = s * chunk < a.kv_len ? s * chunk : a.kv_len;
            it->k1 = (s + 1) * chunk < a.kv_len ? (s + 1) * chunk : a.kv_len;
            if (p->splits == 1) {
              it->o = a.o + b * a.o_stride.batch + (ptrdiff_t)h * p->group * a.o_stride.head;
              it->o_seq = a.o_stride.seq;
              it->o_head = a.o_stride.head;
              it->lse = a.lse ? a.lse + ((size_t)b * sh->heads + (size_t)h * p->group) * a.q_len : NULL;
              it->lse_head = a.q_len;
            } else {
              const size_t row0 = (((size_t)s * a.batch + b) * sh->heads + (size_t)h * p->group) * a.q_len;
              it->o = p->part_o + row0 * sh->head_dim;
              it->o_seq = sh->head_dim;
              it->o_head = (ptrdiff_t)a.q_len * sh->head_dim;
              it->lse = NULL;
              it->max_sum = p->part_ms + 2 * row0;
              it->lse_head = a.q_len;
            }
          }
  }
  p->n_items = n;
  if ((st = plan_kv_pack(p)) || (st = plan_rope(p))) {
    attngen_plan_destroy(p);
    return st;
  }
  *out = p;
  return ATTNGEN_OK;
nomem:
  attngen_plan_destroy(p);
  return fail(ATTNGEN_ERR_NOMEM, "attngen: out of memory for the plan");
}

size_t attngen_plan_items(const attngen_plan *p) { return p ? p->n_items : 0; }
size_t attngen_plan_scratch_bytes(const attngen_plan *p) { return p ? p->bytes : 0; }

int attngen_plan_run(attngen_plan *p, size_t begin, size_t end, int thread)
{
  size_t i;
  if (!p) return fail(ATTNGEN_ERR_NULL, "attngen: plan is NULL");
  if (thread < 0 || thread >= p->nthreads)
    return fail(ATTNGEN_ERR_SIZE, "attngen: thread %d outside [0, %d)", thread, p->nthreads);
  if (begin > end || end > p->n_items)
    return fail(ATTNGEN_ERR_SIZE, "attngen: item range [%zu, %zu) outside [0, %zu)", begin, end, p->n_items);
  for (i = begin; i < end; ++i) {
    const attngen_item *it = &p->items[i];
    if (p->kv_pack) {
      int h;
      for (h = it->kvh0; h < it->kvh1; ++h) kv_pack_ensure(p, it->b, h);
    }
    p->kernel.info->fn(&p->kernel, p->kv_pack ? &p->packed : &p->args, it, p->scratch[thread]);
  }
  return ATTNGEN_OK;
}

/* Merge split-KV partials, in split order (fixed, so bit-identical for any thread count). Each split s gives
 * its normalized output o_s, row max m_s and sum l_s; with M = max m_s and w_s = exp(m_s - M) * l_s,
 * out = Σ w_s o_s / Σ w_s and lse = M + log Σ w_s. The maxima are exact scores, so nothing is lost to a
 * rounded per-split log-sum-exp even when scores are large. */
int attngen_plan_finish(attngen_plan *p)
{
  const attngen_args *a;
  int b, h, i, s, c, d, heads;
  if (!p) return fail(ATTNGEN_ERR_NULL, "attngen: plan is NULL");
  if (p->splits == 1) return ATTNGEN_OK;
  a = &p->args;
  d = p->kernel.shape.head_dim;
  heads = p->kernel.shape.heads;
  for (b = 0; b < a->batch; ++b)
    for (h = 0; h < heads; ++h)
      for (i = 0; i < a->q_len; ++i) {
        float *out = a->o + b * a->o_stride.batch + i * a->o_stride.seq + h * a->o_stride.head;
        float m = -INFINITY, sum = 0.0f;
        int nan = 0; /* a split that met a NaN score (its sum is NaN): the row is NaN, as in the reference */
        for (s = 0; s < p->splits; ++s) {
          const size_t row = (((size_t)s * a->batch + b) * heads + h) * a->q_len + i;
          const float ms = p->part_ms[2 * row], l = p->part_ms[2 * row + 1];
          if (l != l || ms != ms) nan = 1;
          else if (ms > m) m = ms;
        }
        for (c = 0; c < d; ++c) out[c] = nan ? NAN : 0.0f;
        if (nan) {
          if (a->lse) a->lse[((size_t)b * heads + h) * a->q_len + i] = NAN;
          continue;
        }
        if (m != -INFINITY) {
          for (s = 0; s < p->splits; ++s) {
            const size_t row = (((size_t)s * a->batch + b) * heads + h) * a->q_len + i;
            const float l = p->part_ms[2 * row + 1];
            const float w = l > 0.0f ? expf(p->part_ms[2 * row] - m) * l : 0.0f; /* empty splits weigh 0 */
            const float *po = p->part_o + row * d;
            if (w == 0.0f) continue; /* and add nothing, not 0 x their O */
            sum += w;
            for (c = 0; c < d; ++c) out[c] += w * po[c];
          }
          for (c = 0; c < d; ++c) out[c] /= sum;
        }
        if (a->lse) a->lse[((size_t)b * heads + h) * a->q_len + i] = m == -INFINITY ? -INFINITY : m + logf(sum);
      }
  return ATTNGEN_OK;
}

/* ---------------------------------------------------------------- running */

int attngen_run(const attngen_kernel *kernel, const attngen_args *args)
{
  return attngen_run_parallel(kernel, args, 1);
}

#if ATTNGEN_HAVE_PTHREADS
typedef struct {
  attngen_plan *plan;
  int thread;
  size_t *next;
} worker_arg;

static void *worker(void *arg)
{
  worker_arg *w = (worker_arg *)arg;
  for (;;) {
    /* items are independent and write disjoint rows, so the claim order does not change any result */
    size_t i = __atomic_fetch_add(w->next, 1, __ATOMIC_RELAXED);
    if (i >= w->plan->n_items) break;
    attngen_plan_run(w->plan, i, i + 1, w->thread);
  }
  return NULL;
}
#endif

enum { MAX_RUN_THREADS = 64 }; /* attngen_run_parallel and attngen_step_parallel start at most this many */

/* nthreads <= 0: the online CPUs; capped at MAX_RUN_THREADS. */
static int run_threads(int nthreads)
{
  if (nthreads <= 0) {
#if ATTNGEN_HAVE_PTHREADS
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    nthreads = n > 0 ? (int)n : 1;
#else
    nthreads = 1;
#endif
  }
  return nthreads > MAX_RUN_THREADS ? MAX_RUN_THREADS : nthreads;
}

#if ATTNGEN_HAVE_PTHREADS
/* Persistent workers for attngen_run_parallel and attngen_step_parallel: started on first use (up to the most
 * threads a call asked for) and asleep on a condition variable between calls, so a call costs a wake-up instead of
 * creating and joining threads (a small model's decode step takes tens of microseconds). Worker t always runs as
 * thread index t of the plan. One call uses the pool at a time; a call that finds it in use (another application
 * thread is inside attngen) starts threads of its own, as before.
 * Before sleeping, a worker that finished its share polls for the next call for ATTNGEN_POOL_SPIN_US microseconds
 * (default 200), and the caller polls for the workers' last items the same way, unless the call has more threads
 * than the caller has CPUs: back-to-back calls (a decode loop) then find the workers awake. On Linux the workers
 * are kept off the caller's CPU (place_workers). */
static struct {
  pthread_mutex_t busy; /* held by the call using the pool */
  pthread_mutex_t m;    /* guards the fields below (generation and running are also polled without it) */
  pthread_cond_t wake, done;
  int started;             /* workers alive: thread indices 1..started */
  unsigned long generation; /* one per call; a worker joins when it sees a new one and its index is < want */
  int want, running;       /* threads of the current call (caller included); workers still inside it */
  int sleeping;            /* workers waiting on `wake` (the caller signals only then) */
  int caller_waiting;      /* the caller waits on `done` */
  attngen_plan *plan;
  size_t next;             /* next item to claim */
  int placed_for;          /* the caller's CPU when the workers' affinity was last set (-1: not set) */
  int cpus;                /* CPUs the caller may run on, read with the placement (0: not known) */
  int spin;                /* this call's threads poll (they fit on the CPUs; polling on a shared CPU only delays) */
  pthread_t tid[MAX_RUN_THREADS]; /* workers 1..started */
} pool = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
           0, 0, 0, 0, 0, 0, NULL, 0, -1, 0, 0, { 0 } };

enum { POOL_SPIN_US_DEFAULT = 200, POOL_SPIN_US_MAX = 1000000 };
static long pool_spin_ns = -1; /* ATTNGEN_POOL_SPIN_US, read when the first worker starts */

/* ATTNGEN_POOL_SPIN_US: a whole number of microseconds, 0 (sleep at once) to 1000000; anything else is said on
 * stderr once and the default kept. */
static long read_pool_spin_ns(void)
{
  const char *v = getenv("ATTNGEN_POOL_SPIN_US");
  char *end = NULL;
  long us;
  if (!v || !*v) return POOL_SPIN_US_DEFAULT * 1000L;
  us = strtol(v, &end, 10);
  if (*end || us < 0 || us > POOL_SPIN_US_MAX) {
    fprintf(stderr, "attngen: ATTNGEN_POOL_SPIN_US=\"%s\" ignored: expected whole microseconds, 0 to %d; using %d\n", v,
            POOL_SPIN_US_MAX, POOL_SPIN_US_DEFAULT);
    return POOL_SPIN_US_DEFAULT * 1000L;
  }
  logf_verbose("pool threads poll %ld us for work before sleeping (ATTNGEN_POOL_SPIN_US)", us);
  return us * 1000L;
}

static long long mono_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* What a pool thread polls for: a new call (a worker, `seen` its last generation), or the workers' last items
 * (the caller). */
static int new_call(unsigned long seen) { return __atomic_load_n(&pool.generation, __ATOMIC_ACQUIRE) != seen; }
static int workers_done(unsigned long unused) { (void)unused; return __atomic_load_n(&pool.running, __ATOMIC_ACQUIRE) == 0; }

/* Polls until ready(arg) or the spin time is up (no polling when the call's threads do not fit on the CPUs). */
static void spin_until(int (*ready)(unsigned long), unsigned long arg)
{
  long long end;
  int i;
  if (ready(arg) || pool_spin_ns <= 0 || !__atomic_load_n(&pool.spin, __ATOMIC_RELAXED)) return;
  end = mono_ns() + pool_spin_ns;
  for (i = 1; !ready(arg); ++i) {
    cpu_relax();
    if ((i & 63) == 0 && mono_ns() > end) return;
  }
}

/* Keeps the workers off the CPU the caller runs on (Linux): they may run on any other CPU the caller may use. The
 * caller computes items itself, so a worker placed on its CPU only waits. Linux placed a woken worker there about
 * half the time on this 2-vCPU VM once the other vCPU had been idle a few ms: decode at kv_len 4096 on 2 threads
 * then took 0.87-0.91x the 1-thread time (a harness pausing 5 ms between calls); with this, 1.66-1.74x. Redone
 * only when the caller is on another CPU than last time. */
static void place_workers(void)
{
#if defined(__linux__) && defined(CPU_SETSIZE)
  cpu_set_t others;
  int w;
  const int c = sched_getcpu();
  if (c < 0 || c == pool.placed_for || pool.started == 0) return;
  pool.placed_for = c;
  if (sched_getaffinity(0, sizeof others, &others) != 0) return;
  pool.cpus = CPU_COUNT(&others);
  if (!CPU_ISSET(c, &others)) return;
  CPU_CLR(c, &others);
  if (CPU_COUNT(&others) == 0) return;
  for (w = 1; w <= pool.started; ++w) (void)pthread_setaffinity_np(pool.tid[w], sizeof others, &others);
#else
  if (pool.cpus == 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    pool.cpus = n > 0 ? (int)n : 1;
  }
#endif
}

static void *pool_worker(void *arg)
{
  const int t = (int)(intptr_t)arg;
  unsigned long seen = 0;
  worker_arg w;
  for (;;) {
    spin_until(new_call, seen); /* a call that comes while polling needs no wake-up */
    pthread_mutex_lock(&pool.m);
    if (pool.generation == seen) {
      ++pool.sleeping;
      while (pool.generation == seen) pthread_cond_wait(&pool.wake, &pool.m);
      --pool.sleeping;
    }
    seen = pool.generation;
    if (t >= pool.want) {
      pthread_mutex_unlock(&pool.m);
      continue;
    }
    w.plan = pool.plan;
    w.thread = t;
    w.next = &pool.next;
    pthread_mutex_unlock(&pool.m);
    worker(&w);
    pthread_mutex_lock(&pool.m);
    if (__atomic_sub_fetch(&pool.running, 1, __ATOMIC_ACQ_REL) == 0 && pool.caller_waiting)
      pthread_cond_signal(&pool.done);
    pthread_mutex_unlock(&pool.m);
  }
  return NULL;
}

/* In a child of fork() only the forking thread exists: the workers are gone, and a lock another thread held stays
 * held. The pool starts afresh (before this, a forked child's first attngen_run_parallel waited forever). */
static void pool_after_fork_child(void)
{
  pthread_mutex_init(&pool.busy, NULL);
  pthread_mutex_init(&pool.m, NULL);
  pthread_cond_init(&pool.wake, NULL);
  pthread_cond_init(&pool.done, NULL);
  pool.started = pool.want = pool.running = pool.sleeping = pool.caller_waiting = 0;
  pool.plan = NULL;
  pool.next = 0;
  pool.placed_for = -1;
}

/* Runs the plan's items on the pool (the caller is thread 0). Returns 0 when the pool is in use by another call. */
static int pool_run(attngen_plan *p, int nthreads)
{
  static int fork_handler; /* registered with the first worker */
  worker_arg w;
  if (pthread_mutex_trylock(&pool.busy) != 0) return 0;
  pthread_mutex_lock(&pool.m);
  if (pool_spin_ns < 0) pool_spin_ns = read_pool_spin_ns();
  if (!fork_handler && nthreads > 1) fork_handler = pthread_atfork(NULL, NULL, pool_after_fork_child) == 0;
  while (pool.started < nthreads - 1) {
    pthread_t tid;
    if (pthread_create(&tid, NULL, pool_worker, (void *)(intptr_t)(pool.started + 1)) != 0) break;
    pthread_detach(tid);
    pool.tid[++pool.started] = tid;
    pool.placed_for = -1;
  }
  place_workers();
  /* more threads than CPUs: a polling thread would take the CPU from the one it waits for */
  __atomic_store_n(&pool.spin, pool.cpus == 0 || nthreads <= pool.cpus, __ATOMIC_RELAXED);
  pool.want = pool.started + 1 < nthreads ? pool.started + 1 : nthreads;
  __atomic_store_n(&pool.running, pool.want - 1, __ATOMIC_RELAXED);
  pool.plan = p;
  pool.next = 0;
  __atomic_store_n(&pool.generation, pool.generation + 1, __ATOMIC_RELEASE); /* polling workers see the call */
  if (pool.sleeping) pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.m);
  w.plan = p;
  w.thread = 0;
  w.next = &pool.next;
  worker(&w);
  spin_until(workers_done, 0); /* the workers' last items: poll, then sleep */
  pthread_mutex_lock(&pool.m);
  pool.caller_waiting = 1;
  while (__atomic_load_n(&pool.running, __ATOMIC_ACQUIRE) > 0) pthread_cond_wait(&pool.done, &pool.m);
  pool.caller_waiting = 0;
  pool.plan = NULL;
  pthread_mutex_unlock(&pool.m);
  pthread_mutex_unlock(&pool.busy);
  return 1;
}
#endif

/* Runs every item of a plan on nthreads threads (the plan was created for at least that many), then merges. */
static int plan_execute(attngen_plan *p, int nthreads)
{
  if ((size_t)nthreads > p->n_items) nthreads = (int)p->n_items;
#if ATTNGEN_HAVE_PTHREADS
  if (nthreads > 1 && pool_run(p, nthreads)) {
    /* ran on the persistent workers */
  } else if (nthreads > 1) {
    pthread_t tid[MAX_RUN_THREADS];
    worker_arg wa[MAX_RUN_THREADS];
    size_t next = 0;
    int started = 0, t;
    for (t = 1; t < nthreads; ++t) {
      wa[t].plan = p;
      wa[t].thread = t;
      wa[t].next = &next;
      if (pthread_create(&tid[t], NULL, worker, &wa[t]) != 0) break;
      ++started;
    }
    wa[0].plan = p;
    wa[0].thread = 0;
    wa[0].next = &next;
    worker(&wa[0]);
    for (t = 1; t <= started; ++t) pthread_join(tid[t], NULL);
  } else
#endif
  {
    attngen_plan_run(p, 0, p->n_items, 0);
  }
  return attngen_plan_finish(p);
}

int attngen_run_parallel(const attngen_kernel *kernel, const attngen_args *args, int nthreads)
{
  attngen_plan *p;
  int st;
  nthreads = run_threads(nthreads);
  if ((st = attngen_plan_create(kernel, args, nthreads, &p))) return st;
  st = plan_execute(p, nthreads);
  attngen_plan_destroy(p);
  return st;
}

/* ---------------------------------------------------------------- RoPE, KV-cache append, step */

/* A kernel's RoPE descriptor (its table's params.rope) must be usable before inv_freq is read. */
static int rope_check(const attngen_kernel *k)
{
  const attngen_rope *r = &k->params.rope;
  if (r->style == ATTNGEN_ROPE_NONE) return ATTNGEN_OK;
  if ((unsigned)r->style >= ATTNGEN_ROPE_COUNT_ || !r->inv_freq || r->rotary_dim < 2 || r->rotary_dim % 2 != 0 ||
      r->rotary_dim > k->shape.head_dim)
    return fail(ATTNGEN_ERR_SHAPE, "attngen: kernel %s has a bad RoPE descriptor (style %d, rotary_dim %d, inv_freq %s, "
                "head_dim %d)", k->info->name, (int)r->style, r->rotary_dim, r->inv_freq ? "set" : "NULL",
                k->shape.head_dim);
  return ATTNGEN_OK;
}

/* RoPE cos/sin of n tokens, in the layout attngen_rope_rotate reads: for token t, cs[t * rotary_dim + p] =
 * cos(pos_t * inv_freq[p]) and cs[t * rotary_dim + rotary_dim / 2 + p] = sin(...), rounded to float, where
 * pos_t = pos[t] if pos is given, else base + t. The angle is float64: pos_t * inv_freq[p] carries a relative
 * error of one ulp (2^-53, so ~1e-10 rad at 2^20 rad) and libm's cos and sin reduce it exactly. Along a run of
 * consecutive positions the next cos/sin come from the angle-addition formulas in float64 (4 multiplies instead
 * of a libm cos and sin, ~25x cheaper), restarted from an exact cos/sin every ROPE_EXACT_EVERY tokens: the drift
 * stays below ROPE_EXACT_EVERY * 4e-16, far under the float rounding of the result (3e-8).
 * w: scratch of 2 * rotary_dim doubles. */
#define ROPE_EXACT_EVERY 32
static void rope_cos_sin(const attngen_rope *r, const int32_t *pos, long long base, int n, float *cs, double *w)
{
  const int half = r->rotary_dim / 2;
  double *c = w, *s = w + half, *cw = w + 2 * half, *sw = w + 3 * half;
  long long prev = 0;
  int t, p, run = 0, have_step = 0;
  for (t = 0; t < n; ++t) {
    const long long x = pos ? (long long)pos[t] : base + t;
    float *out = cs + (size_t)t * (size_t)r->rotary_dim;
    if (t > 0 && x == prev + 1 && run < ROPE_EXACT_EVERY) {
      if (!have_step) {
        for (p = 0; p < half; ++p) {
          cw[p] = cos(r->inv_freq[p]);
          sw[p] = sin(r->inv_freq[p]);
        }
        have_step = 1;
      }
      for (p = 0; p < half; ++p) {
        const double c1 = c[p] * cw[p] - s[p] * sw[p];
        s[p] = s[p] * cw[p] + c[p] * sw[p];
        c[p] = c1;
      }
      ++run;
    } else {
      for (p = 0; p < half; ++p) {
        const double angle = (double)x * r->inv_freq[p];
        c[p] = cos(angle);
        s[p] = sin(angle);
      }
      run = 1;
    }
    for (p = 0; p < half; ++p) {
      out[p] = (float)c[p];
      out[half + p] = (float)s[p];
    }
    prev = x;
  }
}

/* The cos/sin of every query of a plan, once per token (shared by all its heads and items), and each item's
 * pointer into them. Positions: args.q_pos, else kv_len - q_len + i. Nothing for kernels without RoPE. */
static int plan_rope(attngen_plan *p)
{
  const attngen_rope *r = &p->kernel.params.rope;
  const attngen_args *a = &p->args;
  size_t rows, floats, i;
  double *w;
  int st, b;
  if (r->style == ATTNGEN_ROPE_NONE) return ATTNGEN_OK;
  if ((st = rope_check(&p->kernel))) return st;
  if (mul_size((size_t)a->batch, (size_t)a->q_len, &rows) || mul_size(rows, (size_t)r->rotary_dim, &floats) ||
      floats > ATTNGEN_MAX_FLOATS)
    return fail(ATTNGEN_ERR_SIZE, "attngen: RoPE cos/sin (batch %d x q_len %d x rotary_dim %d floats) span more than "
                "PTRDIFF_MAX bytes", a->batch, a->q_len, r->rotary_dim);
  p->rope_cs = (float *)malloc(floats * sizeof(float));
  w = (double *)malloc(2 * (size_t)r->rotary_dim * sizeof(double));
  if (!p->rope_cs || !w) {
    free(w);
    return fail(ATTNGEN_ERR_NOMEM, "attngen: out of memory for the RoPE cos/sin");
  }
  for (b = 0; b < a->batch; ++b)
    rope_cos_sin(r, a->q_pos ? a->q_pos + (size_t)b * (size_t)a->q_len : NULL, (long long)a->kv_len - a->q_len,
                 a->q_len, p->rope_cs + (size_t)b * (size_t)a->q_len * (size_t)r->rotary_dim, w);
  free(w);
  for (i = 0; i < p->n_items; ++i) {
    attngen_item *it = &p->items[i];
    it->rope_cs = p->rope_cs + ((size_t)it->b * (size_t)a->q_len + (size_t)it->q0) * (size_t)r->rotary_dim;
  }
  p->bytes += floats * sizeof(float);
  return ATTNGEN_OK;
}


/* An append's arguments, checked and normalized: strides resolved, cache_len and pos copied (so that they may
 * live anywhere: nothing reads them once the cache is being written), the longest cache, the caches' ranges. */
typedef struct {
  attngen_append_args a;
  int32_t *len, *pos; /* copies of cache_len [batch] and pos [batch][n_new] (or NULL) */
  int max_len;
  addr_range k_cache, v_cache, k_scale, v_scale; /* what the append writes (scales: int8 types only) */
} append_job;

static void append_kv_pointers(const attngen_append_args *a, const void *p[KVP_COUNT])
{
  p[KVP_F32_K] = a->k_cache, p[KVP_F32_V] = a->v_cache, p[KVP_F16_K] = a->k_cache_f16, p[KVP_F16_V] = a->v_cache_f16;
  p[KVP_BF16_K] = a->k_cache_bf16, p[KVP_BF16_V] = a->v_cache_bf16, p[KVP_I8_K] = a->k_cache_i8;
  p[KVP_I8_V] = a->v_cache_i8, p[KVP_SCALE_K] = a->k_cache_scale, p[KVP_SCALE_V] = a->v_cache_scale;
}

static void append_job_free(append_job *j)
{
  free(j->len);
  free(j->pos);
  j->len = j->pos = NULL;
}

/* Everything an append can get wrong, checked before anything is written; on failure j holds nothing. */
static int append_check(const attngen_kernel *kernel, const attngen_append_args *in, append_job *j)
{
  attngen_append_args *a = &j->a;
  const attngen_shape *s;
  size_t ekn, evn, ekc, evc, npos;
  addr_range inr[2];
  const void *kvp[KVP_COUNT];
  int st, b, i;
  memset(j, 0, sizeof *j);
  if (!kernel || !kernel->info) return fail(ATTNGEN_ERR_NULL, "attngen: kernel is NULL (select one first)");
  if (!in) return fail(ATTNGEN_ERR_NULL, "attngen: append args are NULL");
  s = &kernel->shape;
  if ((st = check_shape(s)) || (st = rope_check(kernel))) return st;
  if (!in->k_new || !in->v_new || !in->cache_len)
    return fail(ATTNGEN_ERR_NULL, "attngen: k_new, v_new and cache_len must not be NULL (k_new=%p v_new=%p "
                "cache_len=%p)", (const void *)in->k_new, (const void *)in->v_new, (const void *)in->cache_len);
  append_kv_pointers(in, kvp);
  if ((st = check_kv_pointers(s->kv_dtype, kvp, kernel->info->name, kvp_cache_names))) return st;
  if (in->batch <= 0 || in->n_new <= 0 || in->kv_capacity <= 0)
    return fail(ATTNGEN_ERR_SIZE, "attngen: batch (%d), n_new (%d) and kv_capacity (%d) must be positive", in->batch,
                in->n_new, in->kv_capacity);
  if (in->batch > ATTNGEN_MAX_LEN || in->n_new > ATTNGEN_MAX_LEN || in->kv_capacity > ATTNGEN_MAX_LEN)
    return fail(ATTNGEN_ERR_SIZE, "attngen: batch (%d), n_new (%d) and kv_capacity (%d) must be at most "
                "ATTNGEN_MAX_LEN (%d)", in->batch, in->n_new, in->kv_capacity, ATTNGEN_MAX_LEN);
  *a = *in;
  if ((st = check_strides("k_new", &a->k_new_stride)) || (st = check_strides("v_new", &a->v_new_stride)) ||
      (st = check_strides("k_cache", &a->k_cache_stride)) || (st = check_strides("v_cache", &a->v_cache_stride)))
    return st;
  fill_default_strides(&a->k_new_stride, s->kv_heads, s->head_dim, a->n_new);
  fill_default_strides(&a->v_new_stride, s->kv_heads, s->head_dim, a->n_new);
  fill_default_strides(&a->k_cache_stride, s->kv_heads, s->head_dim, a->kv_capacity);
  fill_default_strides(&a->v_cache_stride, s->kv_heads, s->head_dim, a->kv_capacity);
  if (attngen_kv_scales_per_row(s->kv_dtype, s->head_dim)) {
    const int groups = attngen_kv_scales_per_row(s->kv_dtype, s->head_dim);
    size_t eks, evs;
    addr_range ks, vs;
    if ((st = check_strides("k_cache_scale", &a->k_cache_scale_stride)) ||
        (st = check_strides("v_cache_scale", &a->v_cache_scale_stride)))
      return st;
    fill_default_strides(&a->k_cache_scale_stride, s->kv_heads, groups, a->kv_capacity);
    fill_default_strides(&a->v_cache_scale_stride, s->kv_heads, groups, a->kv_capacity);
    if ((st = tensor_extent("k_cache_scale", "kv_capacity", &a->k_cache_scale_stride, a->batch, a->kv_capacity,
                            s->kv_heads, groups, &eks)) ||
        (st = tensor_extent("v_cache_scale", "kv_capacity", &a->v_cache_scale_stride, a->batch, a->kv_capacity,
                            s->kv_heads, groups, &evs)) ||
        (st = rows_disjoint("k_cache_scale", &a->k_cache_scale_stride, a->batch, a->kv_capacity, s->kv_heads, groups)) ||
        (st = rows_disjoint("v_cache_scale", &a->v_cache_scale_stride, a->batch, a->kv_capacity, s->kv_heads, groups)) ||
        (st = make_range("k_cache_scale", a->k_cache_scale, eks, sizeof(float), &ks)) ||
        (st = make_range("v_cache_scale", a->v_cache_scale, evs, sizeof(float), &vs)))
      return st;
    j->k_scale = ks, j->v_scale = vs;
  }
  if ((st = tensor_extent("k_new", "n_new", &a->k_new_stride, a->batch, a->n_new, s->kv_heads, s->head_dim, &ekn)) ||
      (st = tensor_extent("v_new", "n_new", &a->v_new_stride, a->batch, a->n_new, s->kv_heads, s->head_dim, &evn)) ||
      (st = tensor_extent("k_cache", "kv_capacity", &a->k_cache_stride, a->batch, a->kv_capacity, s->kv_heads,
                          s->head_dim, &ekc)) ||
      (st = tensor_extent("v_cache", "kv_capacity", &a->v_cache_stride, a->batch, a->kv_capacity, s->kv_heads,
                          s->head_dim, &evc)))
    return st;
  if ((st = rows_disjoint("k_cache", &a->k_cache_stride, a->batch, a->kv_capacity, s->kv_heads, s->head_dim)) ||
      (st = rows_disjoint("v_cache", &a->v_cache_stride, a->batch, a->kv_capacity, s->kv_heads, s->head_dim)))
    return st;
  /* the caches are written: they must not overlap each other or the rows being appended (whole ranges) */
  {
    int f[4];
    const size_t kv_bytes = (size_t)attngen_kv_dtype_bytes(s->kv_dtype);
    kv_fields(s->kv_dtype, f);
    if ((st = make_range(kvp_cache_names[f[0]], kvp[f[0]], ekc, kv_bytes, &j->k_cache)) ||
        (st = make_range(kvp_cache_names[f[1]], kvp[f[1]], evc, kv_bytes, &j->v_cache)))
      return st;
  }
  if ((st = make_range("k_new", a->k_new, ekn, sizeof(float), &inr[0])) ||
      (st = make_range("v_new", a->v_new, evn, sizeof(float), &inr[1])))
    return st;
  {
    /* every written range (caches, and int8 scales) against every other one, then against the new rows */
    const addr_range *w[4] = { &j->k_cache, &j->v_cache, &j->k_scale, &j->v_scale };
    const int nw = attngen_kv_scales_per_row(s->kv_dtype, s->head_dim) ? 4 : 2;
    for (i = 0; i < nw; ++i)
      for (b = i + 1; b < nw; ++b)
        if (w[i]->lo < w[b]->hi && w[b]->lo < w[i]->hi)
          return fail(ATTNGEN_ERR_ALIAS, "attngen: %s and %s overlap (the caches are written: they must not overlap "
                      "each other or the new rows)", w[i]->name, w[b]->name);
    for (i = 0; i < nw; ++i)
      for (b = 0; b < 2; ++b)
        if (w[i]->lo < inr[b].hi && inr[b].lo < w[i]->hi)
          return fail(ATTNGEN_ERR_ALIAS, "attngen: %s overlaps %s (the caches are written: they must not overlap each "
                      "other or the new rows)", w[i]->name, inr[b].name);
  }
  /* lengths and positions: copied first, then checked; every sequence must fit before any is appended */
  j->len = (int32_t *)malloc((size_t)a->batch * sizeof(int32_t));
  if (!j->len) return fail(ATTNGEN_ERR_NOMEM, "attngen: out of memory");
  memcpy(j->len, in->cache_len, (size_t)a->batch * sizeof(int32_t));
  if (in->pos) {
    if (mul_size((size_t)a->batch, (size_t)a->n_new, &npos) || npos > (size_t)PTRDIFF_MAX / sizeof(int32_t)) {
      append_job_free(j);
      return fail(ATTNGEN_ERR_SIZE, "attngen: pos (batch %d x n_new %d) is too large", a->batch, a->n_new);
    }
    j->pos = (int32_t *)malloc(npos * sizeof(int32_t));
    if (!j->pos) {
      append_job_free(j);
      return fail(ATTNGEN_ERR_NOMEM, "attngen: out of memory");
    }
    memcpy(j->pos, in->pos, npos * sizeof(int32_t));
  }
  for (b = 0; b < a->batch; ++b)
    if (j->len[b] < 0 || j->len[b] > a->kv_capacity) {
      st = fail(ATTNGEN_ERR_LENGTHS, "attngen: cache_len[%d] = %d is outside [0, kv_capacity = %d]", b, (int)j->len[b],
                a->kv_capacity);
      append_job_free(j);
      return st;
    }
  for (b = 0; b < a->batch; ++b) {
    if (j->len[b] > a->kv_capacity - a->n_new) {
      st = fail(ATTNGEN_ERR_CAPACITY, "attngen: sequence %d holds %d of kv_capacity %d rows: %d more do not fit "
                "(nothing was appended)", b, (int)j->len[b], a->kv_capacity, a->n_new);
      append_job_free(j);
      return st;
    }
    if (j->len[b] > j->max_len) j->max_len = j->len[b];
  }
  return ATTNGEN_OK;
}

/* One fp32 row x of d elements into row `row` of sequence b, kv head h of the K (v = 0) or V (v = 1) cache, in the
 * cache's type: copied (f32), rounded to nearest even (f16, bf16), or quantized per scale group (int8). */
static void kv_row_store(const attngen_append_args *a, attngen_kv_dtype t, int d, int v, int b, ptrdiff_t row, int h,
                         const float *x)
{
  const attngen_strides *st = v ? &a->v_cache_stride : &a->k_cache_stride;
  const ptrdiff_t off = b * st->batch + row * st->seq + h * st->head;
  int c;
  switch (t) {
  case ATTNGEN_KV_F32: memcpy((v ? a->v_cache : a->k_cache) + off, x, sizeof(float) * (size_t)d); break;
  case ATTNGEN_KV_F16: {
    attngen_f16 *y = (v ? a->v_cache_f16 : a->k_cache_f16) + off;
    for (c = 0; c < d; ++c) y[c].bits = attngen_float_to_f16_bits(x[c]);
    break;
  }
  case ATTNGEN_KV_BF16: {
    attngen_bf16 *y = (v ? a->v_cache_bf16 : a->k_cache_bf16) + off;
    for (c = 0; c < d; ++c) y[c].bits = attngen_float_to_bf16_bits(x[c]);
    break;
  }
  default: {
    int8_t *y = (v ? a->v_cache_i8 : a->k_cache_i8) + off;
    const attngen_strides *ss = v ? &a->v_cache_scale_stride : &a->k_cache_scale_stride;
    float *sc = (v ? a->v_cache_scale : a->k_cache_scale) + b * ss->batch + row * ss->seq + h * ss->head;
    const int g = kv_group(t, d);
    for (c = 0; c < d; c += g) sc[c / g] = attngen_int8_quantize(x + c, g, y + c);
    break;
  }
  }
}

/* Writes the checked append: for each new token its K row, rotated by its position (RoPE kernels), and its V
 * row. cs_all: the tokens' cos/sin [batch][n_new][rotary_dim] when the caller has them (the step shares its
 * plan's), else NULL and cs_tmp [n_new][rotary_dim] plus w (rope_cos_sin's scratch) to compute them. */
static void append_write(const attngen_kernel *kernel, const append_job *j, const float *cs_all, float *cs_tmp,
                         double *w, float *krow)
{
  const attngen_append_args *a = &j->a;
  const attngen_rope *r = &kernel->params.rope;
  const int kvh = kernel->shape.kv_heads, d = kernel->shape.head_dim, n = a->n_new;
  const int rope = r->style != ATTNGEN_ROPE_NONE;
  const attngen_kv_dtype t = kernel->shape.kv_dtype;
  const size_t rot = rope ? (size_t)r->rotary_dim : 0;
  int b, i, h;
  for (b = 0; b < a->batch; ++b) {
    const float *cs = NULL;
    if (rope) {
      if (cs_all) {
        cs = cs_all + (size_t)b * (size_t)n * rot;
      } else {
        rope_cos_sin(r, j->pos ? j->pos + (size_t)b * (size_t)n : NULL, j->len[b], n, cs_tmp, w);
        cs = cs_tmp;
      }
    }
    for (i = 0; i < n; ++i) {
      const ptrdiff_t row = (ptrdiff_t)j->len[b] + i;
      for (h = 0; h < kvh; ++h) {
        const float *kn = a->k_new + b * a->k_new_stride.batch + i * a->k_new_stride.seq + h * a->k_new_stride.head;
        const float *vn = a->v_new + b * a->v_new_stride.batch + i * a->v_new_stride.seq + h * a->v_new_stride.head;
        /* K rotated in fp32 (krow: head_dim floats), then stored in the cache's type */
        if (rope) attngen_rope_rotate(r, cs + (size_t)i * rot, kn, d, krow, 1, 1.0f, 0);
        kv_row_store(a, t, d, 0, b, row, h, rope ? krow : kn);
        kv_row_store(a, t, d, 1, b, row, h, vn);
      }
    }
  }
}

int attngen_kv_append(const attngen_kernel *kernel, const attngen_append_args *args)
{
  append_job j;
  float *cs = NULL, krow[ATTNGEN_MAX_HEAD_DIM];
  double *w = NULL;
  int st;
  if ((st = append_check(kernel, args, &j))) return st;
  if (kernel->params.rope.style != ATTNGEN_ROPE_NONE) {
    const size_t rot = (size_t)kernel->params.rope.rotary_dim;
    if ((size_t)j.a.n_new > ATTNGEN_MAX_FLOATS / rot ||
        !(cs = (float *)malloc((size_t)j.a.n_new * rot * sizeof(float))) ||
        !(w = (double *)malloc(2 * rot * sizeof(double)))) {
      free(cs);
      append_job_free(&j);
      return fail(ATTNGEN_ERR_NOMEM, "attngen: out of memory for the RoPE cos/sin of %d tokens", args->n_new);
    }
  }
  append_write(kernel, &j, NULL, cs, w, krow);
  free(cs);
  free(w);
  append_job_free(&j);
  return ATTNGEN_OK;
}

/* The step: the append's checks, the attention's (attngen_plan_create: check_args), then the append, then the
 * attention, whose items see keys j <= cache_len[b] + i (their causal offset) and whose queries are rotated by the
 * same cos/sin as the new K rows. */
int attngen_step_parallel(const attngen_kernel *kernel, const attngen_step_args *s, int nthreads)
{
  append_job j;
  attngen_args a;
  attngen_plan *p = NULL;
  int32_t *kv_lens = NULL, *q_pos = NULL;
  float krow[ATTNGEN_MAX_HEAD_DIM];
  unsigned features;
  size_t eq, i;
  addr_range qr;
  int st, b, t, n, uniform = 1, rope;
  if (!s) return fail(ATTNGEN_ERR_NULL, "attngen: step args are NULL");
  memset(&qr, 0, sizeof qr);
  if ((st = append_check(kernel, &s->kv, &j))) return st;
  n = j.a.n_new;
  features = attngen_mask_features(kernel->shape.mask);
  for (b = 1; b < j.a.batch; ++b) uniform &= j.len[b] == j.len[0];
  if (!(features & ATTNGEN_FEATURE_CAUSAL) && (n > 1 || (!(features & ATTNGEN_FEATURE_KV_LENS) && !uniform))) {
    st = fail(ATTNGEN_ERR_SHAPE, "attngen: attngen_step needs a causal kernel for %s (kernel %s has mask %s)",
              n > 1 ? "more than one new token per sequence" : "a batch of different cache lengths",
              kernel->info->name, attngen_mask_name(kernel->shape.mask));
    goto out;
  }
  rope = kernel->params.rope.style != ATTNGEN_ROPE_NONE;
  if (features & ATTNGEN_FEATURE_KV_LENS) {
    if (!(kv_lens = (int32_t *)malloc((size_t)j.a.batch * sizeof(int32_t)))) goto nomem;
    for (b = 0; b < j.a.batch; ++b) kv_lens[b] = j.len[b] + n;
  }
  if (rope && !j.pos) { /* the new tokens' positions: cache_len[b] + i (pos was checked to fit: so does this) */
    if (!(q_pos = (int32_t *)malloc((size_t)j.a.batch * (size_t)n * sizeof(int32_t)))) goto nomem;
    for (b = 0; b < j.a.batch; ++b)
      for (t = 0; t < n; ++t) q_pos[(size_t)b * (size_t)n + (size_t)t] = j.len[b] + t;
  }
  memset(&a, 0, sizeof a);
  a.batch = j.a.batch;
  a.q_len = n;
  a.kv_len = j.max_len + n; /* <= kv_capacity: append_check saw every sequence fit */
  a.kv_capacity = j.a.kv_capacity;
  a.q = s->q;
  a.k = j.a.k_cache;
  a.v = j.a.v_cache;
  a.k_f16 = j.a.k_cache_f16, a.v_f16 = j.a.v_cache_f16;
  a.k_bf16 = j.a.k_cache_bf16, a.v_bf16 = j.a.v_cache_bf16;
  a.k_i8 = j.a.k_cache_i8, a.v_i8 = j.a.v_cache_i8;
  a.k_scale = j.a.k_cache_scale, a.v_scale = j.a.v_cache_scale;
  a.k_scale_stride = j.a.k_cache_scale_stride, a.v_scale_stride = j.a.v_cache_scale_stride;
  a.o = s->o;
  a.q_stride = s->q_stride;
  a.k_stride = j.a.k_cache_stride;
  a.v_stride = j.a.v_cache_stride;
  a.o_stride = s->o_stride;
  a.kv_lens = kv_lens;
  a.scale = s->scale;
  a.lse = s->lse;
  a.q_pos = rope ? (j.pos ? j.pos : q_pos) : NULL;
  nthreads = run_threads(nthreads);
  if ((st = attngen_plan_create(kernel, &a, nthreads, &p))) goto out;
  /* q is read after the append wrote the caches: it must not overlap them */
  if ((st = tensor_extent("q", "n_new", &p->args.q_stride, a.batch, n, kernel->shape.heads, kernel->shape.head_dim,
                          &eq)) ||
      (st = make_range("q", a.q, eq, sizeof(float), &qr)))
    goto out;
  if ((qr.lo < j.k_cache.hi && j.k_cache.lo < qr.hi) || (qr.lo < j.v_cache.hi && j.v_cache.lo < qr.hi)) {
    st = fail(ATTNGEN_ERR_ALIAS, "attngen: q overlaps %s (the step writes the caches before it reads q)",
              qr.lo < j.k_cache.hi && j.k_cache.lo < qr.hi ? "k_cache" : "v_cache");
    goto out;
  }
  for (i = 0; i < p->n_items; ++i) p->items[i].causal_offset = j.len[p->items[i].b];
  append_write(kernel, &j, rope ? p->rope_cs : NULL, NULL, NULL, krow);
  st = plan_execute(p, nthreads);
  goto out;
nomem:
  st = fail(ATTNGEN_ERR_NOMEM, "attngen: out of memory");
out:
  attngen_plan_destroy(p);
  free(kv_lens);
  free(q_pos);
  append_job_free(&j);
  return st;
}

int attngen_step(const attngen_kernel *kernel, const attngen_step_args *args)
{
  return attngen_step_parallel(kernel, args, 1);
}

/* ---------------------------------------------------------------- storage-type conversions */

attngen_f16 attngen_f16_from_float(float x)
{
  attngen_f16 h;
  h.bits = attngen_float_to_f16_bits(x);
  return h;
}

float attngen_f16_to_float(attngen_f16 h) { return attngen_f16_bits_to_float(h.bits); }

attngen_bf16 attngen_bf16_from_float(float x)
{
  attngen_bf16 h;
  h.bits = attngen_float_to_bf16_bits(x);
  return h;
}

float attngen_bf16_to_float(attngen_bf16 h) { return attngen_bf16_bits_to_float(h.bits); }

/* Symmetric: scale = max|x| / 127, so the largest element is exactly +-127 and nothing clips. rintf rounds to nearest
 * even in the default rounding mode. */
float attngen_int8_quantize(const float *x, int n, int8_t *q)
{
  float amax = 0.0f, scale;
  int i, bad = 0;
  for (i = 0; i < n; ++i) {
    const float ax = fabsf(x[i]);
    if (!(ax <= FLT_MAX)) bad = 1; /* Inf or NaN */
    else if (ax > amax) amax = ax;
  }
  if (bad || amax == 0.0f) {
    for (i = 0; i < n; ++i) q[i] = 0;
    return bad ? NAN : 0.0f;
  }
  scale = amax / 127.0f;
  if (scale == 0.0f) { /* max|x| below 127 x the smallest subnormal: the row reads back as zeros */
    for (i = 0; i < n; ++i) q[i] = 0;
    return 0.0f;
  }
  for (i = 0; i < n; ++i) {
    float r = rintf(x[i] / scale);
    r = r > 127.0f ? 127.0f : r < -127.0f ? -127.0f : r;
    q[i] = (int8_t)r;
  }
  return scale;
}

/* SPDX-License-Identifier: MIT */
/* attngen_internal.h — what the runtime's source files (runtime/attngen_*.c) share: checked sizes, the argument
 * checks the append reuses, the plan, and the functions one file calls in another. Not part of the API; the
 * generated kernels do not include it. Every runtime file includes it first: the feature macros below must come
 * before any system header. */
#ifndef ATTNGEN_INTERNAL_H
#define ATTNGEN_INTERNAL_H

#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sched_getcpu, cpu_set_t, pthread_setaffinity_np: the pool keeps its threads off the caller's CPU */
#endif
#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif

#include "attngen.h"
#include "attngen_kernel.h" /* attngen_rope_rotate: the one RoPE rotation, shared with the generated kernels */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(ATTNGEN_NO_THREADS) || defined(_WIN32)
#define ATTNGEN_HAVE_PTHREADS 0
#else
#define ATTNGEN_HAVE_PTHREADS 1
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#endif

/* ---- errors and logging (attngen_error.c) */

/* Formats the message attngen_last_error returns (per thread) and returns status. */
int attngen_fail(int status, const char *fmt, ...);
/* A line on stderr when ATTNGEN_VERBOSE is set (and not "0"). */
void attngen_log_verbose(const char *fmt, ...);

/* ---- names, CPU, selection (attngen_select.c, attngen_cpu.c) */

/* Elements per scale of storage type t for head_dim d (0: no scales). */
int attngen_kv_group(attngen_kv_dtype t, int d);
/* t is a storage type, and scales are given only to a type with them: ATTNGEN_OK, else ATTNGEN_ERR_DTYPE naming the
 * function fn. */
int attngen_check_kv_dtype(const char *fn, attngen_kv_dtype t, int scales_given);
/* The scale of a group of n elements of a type with scales: max|x| / scale_max (attngen_convert.c). */
float attngen_kv_group_scale(const float *x, int n, float scale_max);
/* A row of n elements of type t to and from fp32 (sc: its scales, one per attngen_kv_group(t, n) elements; NULL for a
 * type without) */
void attngen_kv_encode_row(attngen_kv_dtype t, const float *x, int n, void *y, float *sc);
void attngen_kv_decode_row(attngen_kv_dtype t, const void *y, const float *sc, int n, float *x);
int attngen_check_shape(const attngen_shape *s);
/* ISAs allowed for selection: the CPU's, capped by ATTNGEN_ISA. */
unsigned attngen_allowed_isas(void);
/* Whether this CPU runs kernel k: its ISA, and what its storage type adds on that ISA. */
int attngen_kernel_runs_here(const attngen_kernel_info *k);

/* ---- checked sizes */

/* Every size the runtime derives from the caller's numbers goes through these: a product or sum that does not
 * fit is reported (1), never wrapped. */
static inline int mul_size(size_t a, size_t b, size_t *r)
{
  if (b != 0 && a > SIZE_MAX / b) return 1;
  *r = a * b;
  return 0;
}
static inline int add_size(size_t a, size_t b, size_t *r)
{
  if (a > SIZE_MAX - b) return 1;
  *r = a + b;
  return 0;
}
/* The most floats one tensor (or one allocation) may span: its size in bytes must fit in ptrdiff_t. */
#define ATTNGEN_MAX_FLOATS ((size_t)PTRDIFF_MAX / sizeof(float))

/* ---- arguments (attngen_args.c), also checked by the cache append */

/* One tensor's address range [lo, hi) in bytes. */
typedef struct {
  const char *name;
  uintptr_t lo, hi;
} addr_range;

/* The K/V fields of attngen_args (and attngen_append_args), in their order: k and v of each encoding
 * (attngen_kv_encoding e: KVP_K(e), KVP_V(e)), then the scales. A call sets exactly those of its kernel's type, or
 * it is refused: a pointer of another type would be read as this one (or, from a struct that was not
 * zero-initialized, garbage would be). */
#define KVP_K(e) (2 * (int)(e))
#define KVP_V(e) (2 * (int)(e) + 1)
enum { KVP_SCALE_K = 2 * ATTNGEN_KV_ENC_COUNT_, KVP_SCALE_V, KVP_COUNT };
extern const char *const attngen_kvp_names[KVP_COUNT];       /* attngen_args' fields */
extern const char *const attngen_kvp_cache_names[KVP_COUNT]; /* attngen_append_args' fields */

void attngen_fill_default_strides(attngen_strides *st, int heads, int head_dim, ptrdiff_t rows);
int attngen_check_strides(const char *what, const attngen_strides *st);
int attngen_rows_disjoint(const char *what, const attngen_strides *st, int n_batch, int n_rows, int n_heads, int d);
int attngen_tensor_extent(const char *what, const char *rows_name, const attngen_strides *st, int n0, int n1, int n2,
                          int d, size_t *out);
int attngen_make_range(const char *name, const void *p, size_t floats, size_t elem, addr_range *r);
int attngen_kv_fields(attngen_kv_dtype t, int f[4]);
/* p[KVP_*]: the K/V fields of a, in that order */
void attngen_args_kv_pointers(const attngen_args *a, const void *p[KVP_COUNT]);
int attngen_check_kv_pointers(attngen_kv_dtype t, const void *const p[KVP_COUNT], const char *kernel_name,
                              const char *const names[KVP_COUNT]);
/* Validates everything and returns a normalized copy (default strides, capacity, scale). */
int attngen_check_args(const attngen_kernel *kern, const attngen_args *in, attngen_args *a);
/* The same, with each sequence's causal offset (NULL: kv_len - q_len): a paged cache's rows read end there. */
int attngen_check_args_at(const attngen_kernel *kern, const attngen_args *in, const int32_t *offsets, attngen_args *a);

/* ---- paged caches (attngen_pages.c) */

int attngen_check_pages(const attngen_shape *s, const attngen_pages *pg, int kv_capacity, int batch);
int attngen_check_block_table(const attngen_pages *pg, int b, int row0, int row1, int append);
/* The offset of row x of sequence b (head 0) in a cache with strides st: b's own rows, or its page's row. */
static inline ptrdiff_t attngen_row_offset(const attngen_pages *pg, const attngen_strides *st, int b, ptrdiff_t x)
{
  if (!pg->block_table) return b * st->batch + x * st->seq;
  return (ptrdiff_t)pg->block_table[(ptrdiff_t)b * pg->max_pages + x / pg->page_size] * st->batch +
         (x % pg->page_size) * st->seq;
}

/* ---- attention features (attngen_features.c) */

/* Checks the call's feature values against the kernel's features and fills what the call left 0 / NULL from the
 * table's params.features (the kernels read the resolved values from their args). */
int attngen_resolve_features(const attngen_kernel *k, attngen_args *a);
int attngen_window_first_key(const attngen_args *a, int offset);

/* ---- merging partial states (attngen_merge.c): the split-KV merge and attngen_merge_states share it */

/* n partial states of the same rows: row (b, i, h) of state s (batch b, query i, head h) has its normalized output at
 * o[s] + off(o_st[s]) (d floats), its max score at m[s][off(ms_st[s])] and its sum of exp at l[s][off(ms_st[s])]
 * (l NULL: m holds a log-sum-exp, sum 1), where off(st) = b * st.batch + i * st.seq + h * st.head. */
typedef struct {
  int n, d;
  const float *const *o, *const *m, *const *l;
  const attngen_strides *o_st, *ms_st; /* [n] */
  float *acc;                          /* scratch: d floats */
} attngen_merge_set;
/* Writes the merged row to out (which may be one of the states' rows) and returns its log-sum-exp; sink: a logit
 * with no value row joining the denominator once (-INFINITY: none). */
float attngen_merge_row(const attngen_merge_set *set, int b, int i, int h, float sink, float *out);

/* ---- plans (attngen_plan.c) */

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
  const float **part_rows; /* split-KV merge: each split's part_o, max and sum bases (3 x splits) */
  attngen_strides *part_st; /* and the strides of part_o and part_ms (2 x splits, the same for every split) */
  attngen_merge_set merge; /* over part_rows; merge.acc: head_dim floats of its own */
  float *rope_cs;          /* RoPE kernels: cos/sin of every query, [batch][q_len][rotary_dim] (attngen_plan_rope) */
  /* K/V repack (kernel->work.pack_kv_min_q): [batch][kv head][K rows, then V rows] head-major, each (sequence, kv
   * head) copied by the first item that needs it; the items then read `packed` instead of `args` */
  float *kv_pack;
  void *kv_pack_raw;
  unsigned char *kv_state; /* per (sequence, kv head): 0 not copied, 1 being copied, 2 copied */
  attngen_args packed;
  size_t bytes;
};

/* attngen_plan_create with each sequence's causal offset (attngen_step: its cache length; NULL: kv_len - q_len). */
int attngen_plan_create_at(const attngen_kernel *kernel, const attngen_args *args, const int32_t *offsets,
                           int nthreads, attngen_plan **out);

/* ---- memory (attngen_memory.c) */

/* bytes from malloc, 64-byte aligned; *raw is what free takes. */
void *attngen_aligned64(size_t bytes, void **raw);
/* Scratch of at least `bytes`, 64-byte aligned, from the cache of earlier plans' buffers when one fits; *raw and
 * *cap are what attngen_scratch_put takes back. */
void *attngen_scratch_get(size_t bytes, void **raw, size_t *cap);
void attngen_scratch_put(void *raw, size_t cap);

/* ---- K/V repack (attngen_repack.c) */

int attngen_plan_kv_pack(attngen_plan *p);
void attngen_kv_pack_ensure(attngen_plan *p, int b, int h);

/* ---- RoPE (attngen_rope.c) */

int attngen_rope_check(const attngen_kernel *k);
void attngen_rope_cos_sin(const attngen_rope *r, const int32_t *pos, long long base, int n, float *cs, double *w);
int attngen_plan_rope(attngen_plan *p);

/* ---- running (attngen_pool.c) */

/* nthreads <= 0: the online CPUs; capped at the most threads a run starts. */
int attngen_run_threads(int nthreads);
/* Runs every item of a plan on nthreads threads (the plan was created for at least that many), then merges. */
int attngen_plan_execute(attngen_plan *p, int nthreads);

#endif /* ATTNGEN_INTERNAL_H */

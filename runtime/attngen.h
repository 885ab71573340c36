/* attngen runtime: kernel selection, argument checking, threading.
 *
 * out = softmax(Q·Kᵀ·scale + mask)·V, fp32, token-major tensors with explicit strides.
 *
 * Masks are given as LENGTHS, never as 0/1 tensors, so "does 1 mean keep or drop?" cannot arise:
 *   NONE            query i sees every key j < kv_len.
 *   CAUSAL          query i sees key j iff j <= i + (kv_len - q_len)   (bottom-right aligned: KV cache, chunked prefill).
 *   PADDING         query i of sequence b sees key j iff j < kv_lens[b].
 *   CAUSAL_PADDING  both conditions above.
 *   CROSS           like PADDING, for q_len != kv_len (encoder-decoder cross attention).
 * A query row that sees no key at all outputs zeros and log-sum-exp = -INFINITY (never NaN).
 *
 * Builds as C99 with no ISA flags: ISA-specific kernels carry per-function target attributes and are
 * only selected when the CPU (and OS, for AVX state) supports them.
 */
#ifndef ATTNGEN_H
#define ATTNGEN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ATTNGEN_MAX_HEAD_DIM 512
#define ATTNGEN_DECODE_MAX_Q 8 /* decode kernels take 1 <= q_len <= this */

typedef enum {
  ATTNGEN_MASK_NONE = 0,
  ATTNGEN_MASK_CAUSAL = 1,
  ATTNGEN_MASK_PADDING = 2,
  ATTNGEN_MASK_CAUSAL_PADDING = 3,
  ATTNGEN_MASK_CROSS = 4,
  ATTNGEN_MASK_COUNT_ = 5
} attngen_mask;

typedef enum {
  ATTNGEN_PHASE_PREFILL = 0, /* any q_len (q_len == kv_len, or chunked prefill q_len < kv_len) */
  ATTNGEN_PHASE_DECODE = 1,  /* 1 <= q_len <= ATTNGEN_DECODE_MAX_Q against a KV cache */
  ATTNGEN_PHASE_COUNT_ = 2
} attngen_phase;

typedef enum {
  ATTNGEN_ISA_SCALAR = 0,
  ATTNGEN_ISA_AVX2 = 1, /* AVX2 + FMA on x86-64 */
  ATTNGEN_ISA_NEON = 2, /* AdvSIMD on aarch64 */
  ATTNGEN_ISA_COUNT_ = 3
} attngen_isa;

typedef enum {
  ATTNGEN_OK = 0,
  ATTNGEN_ERR_NULL = -1,        /* a required pointer is NULL */
  ATTNGEN_ERR_SIZE = -2,        /* a size is non-positive or too large */
  ATTNGEN_ERR_CAPACITY = -3,    /* kv_len > kv_capacity */
  ATTNGEN_ERR_LENGTHS = -4,     /* kv_lens[b] outside [0, kv_len], or missing for a padding mask */
  ATTNGEN_ERR_SHAPE = -5,       /* the arguments do not match the kernel's shape */
  ATTNGEN_ERR_UNSUPPORTED = -6, /* no kernel can run this (e.g. head_dim > 512, heads % kv_heads != 0) */
  ATTNGEN_ERR_NOMEM = -7,
  ATTNGEN_ERR_STRIDE = -8       /* a stride would make rows overlap or is negative */
} attngen_status;

/* What a caller asks for. */
typedef struct {
  int heads;    /* query heads */
  int kv_heads; /* key/value heads; heads % kv_heads == 0 (MHA: equal, MQA: 1, GQA: between) */
  int head_dim; /* 1..ATTNGEN_MAX_HEAD_DIM */
  attngen_mask mask;
  attngen_phase phase;
} attngen_shape;

/* Strides are in floats. The innermost dimension (head_dim) is always contiguous.
 * A stride of 0 means "the dense token-major default":
 *   head = head_dim, seq = heads_of_that_tensor * head_dim, batch = rows * seq
 * where rows is q_len for Q/O and kv_capacity for K/V. */
typedef struct {
  ptrdiff_t batch, seq, head;
} attngen_strides;

typedef struct {
  /* Optional shape check: when non-zero, each must equal the kernel's shape or attngen_run refuses. */
  int heads, kv_heads, head_dim;
  int batch;       /* sequences */
  int q_len;       /* queries per sequence */
  int kv_len;      /* keys per sequence in use (<= kv_capacity) */
  int kv_capacity; /* key rows allocated per sequence (0: equal to kv_len) */
  const float *q;  /* [batch][q_len][heads][head_dim] (see strides) */
  const float *k;  /* [batch][kv_capacity][kv_heads][head_dim] */
  const float *v;  /* [batch][kv_capacity][kv_heads][head_dim] */
  float *o;        /* [batch][q_len][heads][head_dim] */
  attngen_strides q_stride, k_stride, v_stride, o_stride;
  const int32_t *kv_lens; /* [batch] valid keys per sequence: PADDING, CAUSAL_PADDING, CROSS only */
  float scale;            /* 0: the kernel's default, 1/sqrt(head_dim) or the config's `scale` */
  float *lse;             /* optional [batch][heads][q_len]: natural-log log-sum-exp of the scaled scores */
} attngen_args;

/* One independent piece of work: batch b, kv heads [kvh0, kvh1) (all of their q heads), query rows [q0,q1),
 * key rows [k0,k1). Written to o/lse with the given strides (the user's tensors or split-KV partials). */
typedef struct {
  int b, kvh0, kvh1, q0, q1, k0, k1;
  float *o;
  ptrdiff_t o_seq, o_head; /* o points at (q row 0, q head kvh0 * group) of sequence b */
  float *lse;              /* may be NULL; lse[h * lse_head + i] for q head kvh0 * group + h, row i */
  ptrdiff_t lse_head;
  /* Split-KV partials only (else NULL): the row's max score and sum of exp, at [2 * (h * lse_head + i)] and
   * [... + 1]. Merging through these instead of a rounded fp32 lse keeps full precision for large scores. */
  float *max_sum;
} attngen_item;

/* shape: the bound shape (generic kernels read heads/kv_heads/head_dim/mask from it; specialized ones ignore it).
 * scratch: at least info->scratch_floats floats, 64-byte aligned, private to the calling thread. */
typedef void (*attngen_kernel_fn)(const attngen_shape *shape, const attngen_args *args, const attngen_item *item,
                                  float *scratch);

/* How a kernel wants its work cut for a bound shape and q_len. */
typedef struct {
  int q_tile;            /* query rows per work item */
  int kv_heads_per_item; /* 1 (prefill), or every kv head (decode: K/V rows are then read page by page) */
  size_t scratch_floats; /* per-thread scratch for one item */
} attngen_tiling;
typedef void (*attngen_tile_fn)(const attngen_shape *shape, int q_len, attngen_tiling *tiling);

/* A kernel descriptor. Specialized kernels have fixed heads/kv_heads/head_dim;
 * generic ones have 0 there and take them from the shape bound at run time. */
typedef struct {
  const char *name; /* e.g. "attn_h32_kv8_d128_causal_prefill__avx2" */
  int heads, kv_heads, head_dim;
  attngen_mask mask;
  attngen_phase phase;
  attngen_isa isa;
  attngen_kernel_fn fn;
  attngen_tile_fn tile; /* how the kernel wants the work cut, and the scratch it then needs */
} attngen_kernel_info;

/* A generated model's kernels (one per generated .c file). */
typedef struct {
  const char *model;
  const char *generator_version;
  const attngen_kernel_info *kernels;
  int count;
} attngen_table;

/* What runs: the kernel plus the shape it was bound to (generic kernels need it). */
typedef struct {
  const attngen_kernel_info *info;
  attngen_shape shape;
} attngen_kernel;

/* ---- CPU ---- */
unsigned attngen_cpu_isas(void);            /* bit (1u << attngen_isa) per usable ISA; scalar always set */
const char *attngen_isa_name(attngen_isa isa); /* "scalar", "avx2", "neon" */
const char *attngen_mask_name(attngen_mask m);
const char *attngen_phase_name(attngen_phase p);

/* ---- selection ----
 * Picks the best usable kernel for shape: a specialized kernel from `table` (may be NULL) on the best ISA
 * this CPU has, else the generic kernel on the best ISA. Returns ATTNGEN_OK or an error (message in
 * attngen_last_error()). ATTNGEN_VERBOSE=1 logs each selection and the reason for any fallback to stderr;
 * ATTNGEN_ISA=scalar|avx2|neon caps the ISA used (an ISA the CPU lacks is refused with a log line). */
int attngen_select(const attngen_table *table, const attngen_shape *shape, attngen_kernel *out);

/* Generic kernels on a given ISA (for benchmarks and tests); fails if the CPU lacks the ISA. */
int attngen_select_generic(const attngen_shape *shape, attngen_isa isa, attngen_kernel *out);
/* The specialized kernel of `table` for exactly (shape, isa), or ATTNGEN_ERR_UNSUPPORTED. */
int attngen_select_specialized(const attngen_table *table, const attngen_shape *shape, attngen_isa isa,
                               attngen_kernel *out);

/* ---- running ----
 * Single-threaded. Validates every argument first; on error nothing is written. */
int attngen_run(const attngen_kernel *kernel, const attngen_args *args);
/* Built-in parallel entry (pthreads). Results are bit-identical for any nthreads. nthreads <= 0: online CPUs. */
int attngen_run_parallel(const attngen_kernel *kernel, const attngen_args *args, int nthreads);

/* Range API for a caller's own thread pool: a plan lists independent items; run any subset of them on any
 * thread (each thread passes its own thread index < nthreads), then call attngen_plan_finish once
 * (merges split-KV partials through the log-sum-exp). */
typedef struct attngen_plan attngen_plan;
int attngen_plan_create(const attngen_kernel *kernel, const attngen_args *args, int nthreads, attngen_plan **out);
size_t attngen_plan_items(const attngen_plan *plan);
int attngen_plan_run(attngen_plan *plan, size_t begin, size_t end, int thread);
int attngen_plan_finish(attngen_plan *plan);
size_t attngen_plan_scratch_bytes(const attngen_plan *plan); /* peak extra memory the plan holds */
void attngen_plan_destroy(attngen_plan *plan);

/* ---- errors ---- */
const char *attngen_last_error(void); /* message of the last failing call on this thread ("" if none) */
const char *attngen_status_name(int status);

/* Fills zero strides with the dense token-major defaults (what attngen_run does internally). */
void attngen_args_default_strides(const attngen_shape *shape, attngen_args *args);

#ifdef __cplusplus
}
#endif
#endif /* ATTNGEN_H */

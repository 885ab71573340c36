/* SPDX-License-Identifier: MIT */
/* attngen runtime: kernel selection, argument checking, threading.
 *
 * out = softmax(Q·Kᵀ·scale + mask)·V, token-major tensors with explicit strides. Q, O and all arithmetic are fp32; the
 * K/V cache is fp32 or another storage type (attngen_kv_dtype: f16, bf16, int8 with fp32 scales), converted to fp32
 * as it is read.
 *
 * Masks are given as LENGTHS, never as 0/1 tensors, so "does 1 mean keep or drop?" cannot arise:
 *   NONE            query i sees every key j < kv_len.
 *   CAUSAL          query i sees key j iff j <= i + (kv_len - q_len)   (bottom-right aligned: KV cache, chunked prefill).
 *   PADDING         query i of sequence b sees key j iff j < kv_lens[b].
 *   CAUSAL_PADDING  both conditions above.
 *   CROSS           like PADDING, for q_len != kv_len (encoder-decoder cross attention).
 * A query row that sees no key at all outputs zeros and log-sum-exp = -INFINITY (never NaN).
 *
 * Attention features (attngen_shape.features, bits ATTNGEN_ATTN_*: part of a kernel's identity and name; their values
 * come from the table's params.features, or per call from attngen_args). Query i's position is p = i + kv_len - q_len
 * (attngen_step: cache_len[b] + i), key j's is j:
 *   WINDOW   query at p sees keys p - window < j <= p (window keys, itself included: HF transformers' sliding_window),
 *            and keys j < sink_tokens (StreamingLLM attention sinks). Needs a causal mask. Keys no query of a work item
 *            can see are never read.
 *   SOFTCAP  each scaled score s becomes softcap * tanh(s / softcap), before the mask (Gemma-2).
 *   ALIBI    each score gains slope[h] * (j - p), slope[h] of query head h (attngen_alibi_slopes: BLOOM's rule).
 *   SINKS    a logit sinks[h] per query head joins the softmax denominator, with no value row (gpt-oss):
 *            o = sum_j exp(s_j - m) v_j / (exp(sinks[h] - m) + sum_j exp(s_j - m)); lse includes it.
 * Order: scale, soft-cap, ALiBi, then the mask.
 *
 * Builds as C99 with no ISA flags: ISA-specific kernels carry per-function target attributes and are
 * only selected when the CPU (and OS, for AVX state) supports them.
 */
#ifndef ATTNGEN_H
#define ATTNGEN_H

#include <stddef.h>
#include <stdint.h>

/* Generated from gen/spec.lua (generated/runtime/): the version, the table ABI, and every axis as enums and
 * X-macro lists: attngen_isa, attngen_phase, attngen_mask (presets of mask features), attngen_params. */
#include "attngen_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits checked before anything is computed or allocated (ATTNGEN_ERR_SIZE beyond them):
 *  - q_len, kv_len and kv_capacity are at most ATTNGEN_MAX_LEN (2^30), which leaves the kernels' int
 *    arithmetic on row indices (tiles, split boundaries) room to spare;
 *  - each tensor's extent, (batch-1)*stride.batch + (rows-1)*stride.seq + (heads-1)*stride.head + head_dim
 *    floats (rows = q_len for Q/O, kv_len for K/V), and the split-KV partials the runtime allocates, are at
 *    most PTRDIFF_MAX bytes; every product and sum on the way is checked for overflow;
 *  - attngen_plan_create takes 1 <= nthreads <= ATTNGEN_MAX_THREADS (attngen_run_parallel starts at most 64
 *    threads and caps a larger request). */
#define ATTNGEN_MAX_LEN (1 << 30)
#define ATTNGEN_MAX_PAGE_SIZE 4096 /* rows per page of a paged cache (a power of two) */
#define ATTNGEN_MAX_THREADS 1024

typedef enum {
  ATTNGEN_OK = 0,
  ATTNGEN_ERR_NULL = -1,        /* a required pointer is NULL */
  ATTNGEN_ERR_SIZE = -2,        /* a size is non-positive or too large */
  ATTNGEN_ERR_CAPACITY = -3,    /* kv_len > kv_capacity */
  ATTNGEN_ERR_LENGTHS = -4,     /* kv_lens[b] outside [0, kv_len], or missing for a padding mask */
  ATTNGEN_ERR_SHAPE = -5,       /* the arguments do not match the kernel's shape */
  ATTNGEN_ERR_UNSUPPORTED = -6, /* no kernel can run this (e.g. head_dim > 512, heads % kv_heads != 0) */
  ATTNGEN_ERR_NOMEM = -7,
  ATTNGEN_ERR_STRIDE = -8,      /* a stride would make rows overlap or is negative */
  ATTNGEN_ERR_ALIAS = -9,       /* an output overlaps an input or the other output (see attngen_args) */
  ATTNGEN_ERR_DTYPE = -10,      /* the K/V pointers given are not those of the kernel's storage type */
  ATTNGEN_ERR_PAGE = -11        /* a block table entry names no page of the pools (paged caches) */
} attngen_status;

/* What a caller asks for. */
typedef struct {
  int heads;    /* query heads */
  int kv_heads; /* key/value heads; heads % kv_heads == 0 (MHA: equal, MQA: 1, GQA: between) */
  int head_dim; /* 1..ATTNGEN_MAX_HEAD_DIM */
  attngen_mask mask;
  attngen_phase phase;
  attngen_kv_dtype kv_dtype; /* the cache's storage type; 0 (ATTNGEN_KV_F32) when zero-initialized */
  unsigned features;         /* attention features, ATTNGEN_ATTN_* bits; 0 (none) when zero-initialized */
  int page_size;             /* rows per page of a paged K/V cache (attngen_pages); 0: a contiguous cache */
} attngen_shape;

/* A paged K/V cache (vLLM's PagedAttention layout): K and V (and int8 scales) each live in a pool of num_pages pages
 * of page_size rows; sequence b's row x is row x % page_size of page block_table[b * max_pages + x / page_size].
 * In attngen_args / attngen_append_args the K/V pointers then point at the pools and their strides' `batch` is the
 * stride between pages: dense NHD pages ([page_size][kv_heads][head_dim]) by default; head-major HND pages
 * ([kv_heads][page_size][head_dim]) are seq = head_dim, head = page_size * head_dim, batch = kv_heads * head (the
 * scales' strides likewise, in floats). Several sequences may name the same page (a shared prompt): attention reads
 * it as each one's own rows; an append must not write one page from two sequences.
 * The kernel must be paged for the same page_size (attngen_shape.page_size; config `page_size`) and kv_capacity must be
 * 0: a sequence holds max_pages * page_size rows, fewer where its block table has a negative entry (no page there
 * yet). Attention reads the entries of the rows it sees (kv_len, kv_lens[b] for a padding mask, cache_len[b] + n_new in
 * a step), each must lie in [0, num_pages) (ATTNGEN_ERR_PAGE); an append refuses a row whose entry is negative
 * (ATTNGEN_ERR_CAPACITY: nothing is appended) or past the pools (ATTNGEN_ERR_PAGE). */
typedef struct {
  const int32_t *block_table; /* [batch][max_pages] page indices; NULL: a contiguous cache (the other fields 0) */
  int max_pages;              /* entries per sequence (the block table's row stride), >= 1 */
  int num_pages;              /* pages in each pool, >= 1 */
  int page_size;              /* rows per page: the kernel's shape.page_size */
} attngen_pages;

/* A ring-buffer cache for a sliding-window layer, on pages: a block table (`table`, [entries]) whose logical page i is
 * pages[i] for the first sink_pages = ceil(sink_tokens / page_size) pages (the sink tokens' own pages, never
 * overwritten) and pages[sink_pages + (i - sink_pages) % ring] after them (ring = n_pages - sink_pages), so an append
 * at row x overwrites row x - ring * page_size: rows older than the window, which a windowed kernel never reads.
 * The ring holds (n_pages - sink_pages) * page_size rows, at least window + max_new - 1 (a step of max_new tokens
 * still finds its first query's window whole; decode: max_new 1, the window rounded up to whole pages). RoPE uses
 * absolute positions (the row index), as with any cache. Fill entries for every row a sequence will reach (entries
 * * page_size rows); the table may be one row of attngen_pages.block_table. Returns ATTNGEN_OK, or ATTNGEN_ERR_SIZE /
 * ATTNGEN_ERR_CAPACITY / ATTNGEN_ERR_NULL with a message (nothing written). */
int attngen_ring_block_table(int page_size, int window, int sink_tokens, int max_new, const int32_t *pages,
                             int n_pages, int32_t *table, int entries);

/* Strides are in elements of the tensor's own type: floats for Q, O and an fp32 cache, 16-bit elements for an
 * f16/bf16 cache, bytes for an int8 cache, floats for int8 scales. The innermost dimension is always contiguous.
 * A stride of 0 means "the dense token-major default":
 *   head = head_dim, seq = heads_of_that_tensor * head_dim, batch = rows * seq
 * where rows is q_len for Q/O and kv_capacity for K/V. */
typedef struct {
  ptrdiff_t batch, seq, head;
} attngen_strides;

/* Outputs must not overlap inputs or each other: o, lse (when given), q, k, v and kv_lens (for the masks
 * that read it) are each taken as the address range [start, start + extent) their sizes and strides span
 * (K/V: the kv_len rows read), and any overlap of o or lse with another range is refused with
 * ATTNGEN_ERR_ALIAS, also when the rows themselves would interleave without touching. In-place attention
 * (o == q) is not supported. Inputs may overlap each other (e.g. q == k, or k and v in one buffer). */
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
  /* RoPE kernels only (kernel->params.rope.style != ATTNGEN_ROPE_NONE; ignored otherwise): optional dense
   * [batch][q_len] position of each query, any int32. Query i of sequence b is rotated by q_pos[b * q_len + i];
   * NULL: by kv_len - q_len + i, the position of a bottom-right aligned query. Q is rotated while it is packed;
   * K is used as stored: a RoPE kernel expects a cache of ROTATED K, as attngen_kv_append writes it. */
  const int32_t *q_pos;
  /* A cache of another storage type than fp32: the kernel's type (kernel->shape.kv_dtype) says which fields it
   * reads, and every other K/V pointer must be NULL (ATTNGEN_ERR_DTYPE otherwise: a call with the wrong type, or a
   * struct that was not zero-initialized, is refused, never read). f32: k and v above. f16: k_f16 and v_f16. bf16:
   * k_bf16 and v_bf16. int8, int8_g64, int8_g32: k_i8 and v_i8, and the fp32 scales k_scale and v_scale: element c
   * of a row is i8[c] * scale[c / group] (group = head_dim for int8, 64 or 32 for the others), scales laid out
   * [batch][kv_capacity][kv_heads][head_dim / group] by default (k_scale_stride / v_scale_stride, in floats, 0 =
   * that dense default). attngen_kv_append writes such caches (rounding to nearest even, or quantizing each row). */
  ATTNGEN_KV_ARGS_FIELDS /* attngen_spec.h: const attngen_f16 *k_f16, *v_f16; ...; const int8_t *k_i8, *v_i8; */
  const float *k_scale, *v_scale;
  attngen_strides k_scale_stride, v_scale_stride;
  /* Attention features' values for this call (see the top of this file). Each applies only to a kernel with the
   * feature (set for one without it: ATTNGEN_ERR_SHAPE). 0 / NULL: the table's value (params.features); a kernel
   * with the feature and no value from either is refused (window, softcap, alibi_slopes: ATTNGEN_ERR_SIZE / NULL). */
  int window;                /* WINDOW: keys a query sees, itself included, >= 1 */
  int sink_tokens;           /* WINDOW: the first keys every query also sees */
  float softcap;             /* SOFTCAP: > 0 */
  const float *alibi_slopes; /* ALIBI: [heads] */
  const float *sinks;        /* SINKS: [heads] sink logit of each query head; required (no table value) */
  attngen_pages pages;       /* a paged cache (a paged kernel: shape.page_size); zero: contiguous */
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
  int causal_offset;    /* causal masks: query row i sees keys j <= i + causal_offset (attngen_run: kv_len - q_len;
                           attngen_step: cache_len[b], which lets a ragged batch be causal per sequence) */
  const float *rope_cs; /* RoPE: cos/sin of query row i at rope_cs + (i - q0) * rotary_dim (see attngen_rope_rotate
                           in attngen_kernel.h); NULL: Q is not rotated */
} attngen_item;

/* How a kernel's work is cut, chosen by the generator's plan (gen/plan.lua): constants for a specialized
 * kernel, computed for the bound shape by the generic kernel's work function. The runtime only executes it. */
typedef struct {
  int q_tile;            /* most queries per work item */
  int kv_heads_per_item; /* 0: every kv head in one item (decode streams K/V rows page after page) */
  int row_stride;        /* rows (queries x group, padded) of the item's Q, S and O tiles */
  int keys_per_tile;     /* keys per KV tile */
  size_t scratch_floats; /* per-thread scratch for one item, in floats (64-byte aligned) */
  /* split-KV, for fewer than split_below_batch sequences: the KV range is cut into at most split_max chunks of
   * at least split_min_keys keys, aligned to split_align; 1 = never. Never depends on the thread count. */
  int split_max, split_min_keys, split_align, split_below_batch;
  /* K/V repack: from this many queries per sequence on (0 = never), the run first copies each (sequence, kv
   * head)'s K and V rows into contiguous head-major buffers, once per call, and every work item of that head
   * reads them there: token-major rows sit a whole token apart (a page per row for 8 kv heads at d128), which
   * defeats the prefetchers and the TLB once a prefill is long. */
  int pack_kv_min_q;
  /* Head split: items that hold every kv head (kv_heads_per_item 0), fewer than the threads, are cut by kv heads
   * among as many items as there are threads when each part still reads at least head_split_min_bytes bytes of
   * K/V or does head_split_min_flop flops (a threshold of 0 is no criterion; both 0: never). A kv head computes
   * alike in whichever item holds it, so results do not depend on the cut. */
  int head_split_min_bytes, head_split_min_flop;
} attngen_work;

struct attngen_kernel_info;

/* What runs: a kernel bound to a shape, with its work cut and parameters. */
typedef struct {
  const struct attngen_kernel_info *info;
  attngen_shape shape;
  attngen_work work;
  attngen_params params; /* from the table the kernel was selected for (also on the generic fallback) */
} attngen_kernel;

/* scratch: at least kernel->work.scratch_floats floats, 64-byte aligned, private to the calling thread. */
typedef void (*attngen_kernel_fn)(const attngen_kernel *kernel, const attngen_args *args, const attngen_item *item,
                                  float *scratch);

/* A kernel descriptor. Specialized kernels have fixed heads/kv_heads/head_dim and their work cut as data;
 * generic ones have 0 there and a function that computes the work cut for the shape bound at run time. */
typedef struct attngen_kernel_info {
  const char *name; /* e.g. "attn_h32_kv8_d128_causal_prefill__avx2" */
  int heads, kv_heads, head_dim;
  attngen_mask mask;
  attngen_phase phase;
  attngen_isa isa;
  attngen_kv_dtype kv_dtype; /* the cache's storage type it reads */
  unsigned features;         /* attention features (ATTNGEN_ATTN_* bits); generic kernels: 0, they take any */
  attngen_work work;
  void (*work_fn)(const attngen_shape *shape, attngen_work *work); /* generic kernels only, else NULL */
  attngen_kernel_fn fn;
  int page_size; /* a paged cache's rows per page (config page_size); 0: contiguous */
} attngen_kernel_info;

/* A generated model's kernels (one per generated .c file). */
typedef struct {
  int abi;                       /* ATTNGEN_ABI of the generator that wrote it: must equal the runtime's */
  const char *model;
  const char *generator_version;
  int heads, kv_heads, head_dim; /* the model's shape; its params apply to it, on any ISA or the generic fallback */
  attngen_params params;
  const attngen_kernel_info *kernels;
  int count;
} attngen_table;

/* ---- CPU ---- */
unsigned attngen_cpu_isas(void);            /* bit (1u << attngen_isa) per usable ISA; scalar always set */
const char *attngen_isa_name(attngen_isa isa); /* "scalar", "avx512", "avx2", "neon" */
const char *attngen_mask_name(attngen_mask m);
const char *attngen_phase_name(attngen_phase p);
const char *attngen_kv_dtype_name(attngen_kv_dtype t); /* "f32", "f16", "bf16", "int8", "int8_g64", "int8_g32" */

/* ---- storage-type conversions, for callers that fill a cache themselves: the 16-bit elements' (attngen_f16_from_float,
 * attngen_f16_to_float, and bf16's) are declared in attngen_spec.h with their types.
 * n floats into n int8 with one scale: returns max|x| / 127 and writes rint(x[i] / scale) (see attngen_append_args);
 * element i reads back as q[i] * scale. */
float attngen_int8_quantize(const float *x, int n, int8_t *q);
/* A row of n elements of any type t, as the append writes it and the kernels read it: attngen_kv_from_float rounds
 * (f16, bf16) or quantizes (a type with scales: one per group, written to scales[n / group]; int8's group is the whole
 * row), attngen_kv_to_float widens exactly (times each group's scale). out / in hold n elements of the type; scales
 * is NULL for a type without. Returns ATTNGEN_OK, or with a message (nothing written) ATTNGEN_ERR_DTYPE (t is not a
 * type, or scales given to a type without them), ATTNGEN_ERR_SIZE (n < 1, or not a multiple of the type's group),
 * ATTNGEN_ERR_NULL. */
int attngen_kv_from_float(attngen_kv_dtype t, const float *x, int n, void *out, float *scales);
int attngen_kv_to_float(attngen_kv_dtype t, const void *in, const float *scales, int n, float *x);

/* ALiBi slopes of `heads` query heads, as the generator computes them for a table (in float64, rounded once): with n
 * the largest power of two <= heads, slope[h] = 2^(-max_bias (h + 1) / n) for h < n, and the heads past n take the
 * odd powers 1, 3, 5, ... of 2^(-max_bias / (2n)) (HF transformers' BLOOM build_alibi_tensor; max_bias 8 there).
 * For a generic kernel with ALIBI and no table, pass the result as attngen_args.alibi_slopes. Returns ATTNGEN_OK, or
 * an error for heads outside [1, ATTNGEN_MAX_HEADS], max_bias not positive and finite, or out NULL. */
int attngen_alibi_slopes(int heads, double max_bias, float *out);

/* ---- selection ----
 * Picks the best usable kernel for shape: a specialized kernel from `table` (may be NULL) on the best ISA
 * this CPU has, else the generic kernel on the best ISA. Returns ATTNGEN_OK or an error (message in
 * attngen_last_error()). ATTNGEN_VERBOSE=1 logs each selection and the reason for any fallback to stderr;
 * ATTNGEN_ISA=scalar|avx512|avx2|neon caps the ISA used. A value that is not an ISA name (names are lower-case) or
 * names an ISA this CPU lacks is ignored, and the first attngen_select of the process says so in one line on
 * stderr, with or without ATTNGEN_VERBOSE. */
int attngen_select(const attngen_table *table, const attngen_shape *shape, attngen_kernel *out);

/* Generic kernels on a given ISA (for benchmarks and tests); fails if the CPU lacks the ISA. */
int attngen_select_generic(const attngen_shape *shape, attngen_isa isa, attngen_kernel *out);
/* The specialized kernel of `table` for exactly (shape, isa), or ATTNGEN_ERR_UNSUPPORTED. */
int attngen_select_specialized(const attngen_table *table, const attngen_shape *shape, attngen_isa isa,
                               attngen_kernel *out);

/* ---- running ----
 * Single-threaded. Validates every argument first; on error nothing is written. */
int attngen_run(const attngen_kernel *kernel, const attngen_args *args);
/* Built-in parallel entry (pthreads). Results are bit-identical for any nthreads. nthreads <= 0: online CPUs;
 * at most 64 threads are started (a larger nthreads is capped, not refused). The threads persist between calls;
 * after a call they poll for the next one for ATTNGEN_POOL_SPIN_US microseconds (default 200; 0 to 1000000, 0:
 * sleep at once; another value is said once on stderr and the default kept), then sleep. They do not poll when
 * nthreads exceeds the CPUs the caller may use. On Linux they run on any of those CPUs but the caller's. */
int attngen_run_parallel(const attngen_kernel *kernel, const attngen_args *args, int nthreads);

/* Range API for a caller's own thread pool: a plan lists independent items; run any subset of them on any
 * thread (each thread passes its own thread index < nthreads), then call attngen_plan_finish once
 * (merges split-KV partials through the log-sum-exp). nthreads must be in [1, ATTNGEN_MAX_THREADS]: the plan
 * allocates one scratch buffer per thread. A short decode step (one item for the whole step) may list more
 * items for more threads, each with some of the kv heads: the results are the same bits for any nthreads. */
typedef struct attngen_plan attngen_plan;
int attngen_plan_create(const attngen_kernel *kernel, const attngen_args *args, int nthreads, attngen_plan **out);
size_t attngen_plan_items(const attngen_plan *plan);
int attngen_plan_run(attngen_plan *plan, size_t begin, size_t end, int thread);
int attngen_plan_finish(attngen_plan *plan);
size_t attngen_plan_scratch_bytes(const attngen_plan *plan); /* peak extra memory the plan holds */
void attngen_plan_destroy(attngen_plan *plan);

/* ---- merging partial attention states (cascade attention) ----
 * Attention over keys cut into disjoint parts, each part run on its own with lse output, merges into attention over
 * all the keys: lse = log Σ_s exp(lse_s), o = Σ_s exp(lse_s - lse) o_s, in fp32 with the largest lse subtracted
 * first, in state order (the arithmetic of attngen_plan_finish's split-KV merge). E.g. a prompt prefix shared by a
 * batch: one pass over it with every sequence's queries as one sequence (batch 1, mask none), whose lse is then
 * [heads][batch * q_len] (lse_in_stride {q_len, 1, batch * q_len}), and one causal pass per sequence over its own
 * keys. A state whose lse is -INFINITY (it saw no key) weighs 0 and its o is not read; a row where every state's is
 * gives zeros and -INFINITY, as attngen_run writes for a row with no key. A NaN or +INFINITY lse, or a NaN in a
 * weighed o, makes the row NaN. In place: o may be o_in[s] itself and lse may be lse_in[s] itself (same pointer,
 * same strides); any other overlap of an output with an input or with the other output is ATTNGEN_ERR_ALIAS.
 * Errors as attngen_run's (NULL pointers, n < 1, sizes, strides, extents); nothing is written when a call fails.
 * lse strides are in floats over (batch, query row, head) like the others; their dense default (a 0 field) is
 * attngen_args.lse's [batch][heads][q_len]: head = q_len, seq = 1, batch = heads * q_len. */
typedef struct {
  int batch, q_len, heads, head_dim;    /* each >= 1; q_len <= ATTNGEN_MAX_LEN */
  int n;                                /* partial states, >= 1 */
  const float *const *o_in;             /* [n] pointers, each [batch][q_len][heads][head_dim] */
  const float *const *lse_in;           /* [n] pointers, each [batch][heads][q_len] */
  const attngen_strides *o_in_stride;   /* NULL (all dense) or [n] */
  const attngen_strides *lse_in_stride; /* NULL (all dense) or [n] */
  float *o;                             /* [batch][q_len][heads][head_dim] */
  float *lse;                           /* optional [batch][heads][q_len] */
  attngen_strides o_stride, lse_stride;
} attngen_merge_args;
int attngen_merge_states(const attngen_merge_args *args);

/* Decode for a batch whose sequences share a prefix (cascade attention): the prefix's K/V rows are read once for
 * all the batch's queries (as the rows of one sequence, so a decode kernel reads them once per 8 query rows), each
 * sequence's own rows after the prefix on their own, and the two states merged as attngen_merge_states does. The
 * result is attention over each sequence's whole cache (the prefix's rows, then its own), causal, to fp32 rounding.
 *   prefix: the shared rows of ONE sequence: kv_len (>= 1) rows of K/V of the kernel's type, with their strides
 *           (batch strides unused); its q, o, batch, q_len, lse and kv_lens are not read.
 *   suffix: the step as attngen_run takes it: batch sequences of q_len queries (q, o, optional lse, scale, strides)
 *           and each sequence's own rows: kv_len (0: none) and kv_lens for the masks that read it, causal at
 *           each sequence's own length (its queries are its last rows, as in attngen_step). RoPE kernels:
 *           q_pos are positions in the whole cache (NULL: prefix.kv_len + own rows - q_len + i). Every query
 *           comes after the prefix (position >= prefix.kv_len - 1, so own rows >= q_len - 1; else ATTNGEN_ERR_SHAPE).
 * Kernels with a window, ALiBi or sink logits are refused (ATTNGEN_ERR_UNSUPPORTED): their scores depend on where
 * the prefix ends, or the sink must join the softmax once. nthreads as attngen_run_parallel. */
typedef struct {
  attngen_args prefix;
  attngen_args suffix;
} attngen_cascade_args;
int attngen_cascade_decode(const attngen_kernel *kernel, const attngen_cascade_args *args, int nthreads);

/* ---- KV cache: append with RoPE, and the fused decode / chunked-prefill step ----
 *
 * A KV cache holds, for each sequence b, cache_len[b] valid rows of K and of V in a buffer of kv_capacity rows:
 * k_cache and v_cache are [batch][kv_capacity][kv_heads][head_dim], with strides like attngen_args (in elements
 * of the stored type, 0 = dense: head = head_dim, seq = kv_heads * head_dim, batch = kv_capacity * seq). The
 * lengths belong to the caller: these calls read cache_len and never change it; after a successful call, add
 * n_new to each.
 * With a RoPE kernel (kernel->params.rope, from its table) the cache holds K ALREADY ROTATED: the append rotates
 * each new K row by its token's position as it writes it (V is copied as is), so attention never rotates K.
 * Positions: pos[b * n_new + i] when pos is given (any int32; packed or shifted positions), else
 * cache_len[b] + i. The angle pos * inv_freq[p] is computed in float64 (exact to ~1e-10 rad up to |pos| = 2^20)
 * and the rotation in fp32: a rotated row is within ~2^-23 * |row| of the float64 one.
 * Errors (nothing is written when a call fails): NULL pointers (ATTNGEN_ERR_NULL); batch, n_new or kv_capacity
 * not positive or above ATTNGEN_MAX_LEN, tensors too large (ATTNGEN_ERR_SIZE); cache_len[b] outside
 * [0, kv_capacity] (ATTNGEN_ERR_LENGTHS); cache_len[b] + n_new > kv_capacity for ANY sequence (ATTNGEN_ERR_CAPACITY:
 * no sequence is appended); negative strides or overlapping cache rows (ATTNGEN_ERR_STRIDE); k_cache and v_cache
 * overlapping each other, k_new, v_new or (step) q (ATTNGEN_ERR_ALIAS: whole address ranges, as for attngen_args).
 * cache_len and pos may live anywhere: they are read before anything is written. */
typedef struct {
  int batch;                   /* sequences */
  int n_new;                   /* new tokens per sequence, >= 1 */
  int kv_capacity;             /* rows allocated per sequence in k_cache and v_cache */
  const int32_t *cache_len;    /* [batch] rows already in each sequence's cache, in [0, kv_capacity] */
  const int32_t *pos;          /* optional [batch][n_new] position of each new token; NULL: cache_len[b] + i */
  const float *k_new, *v_new;  /* [batch][n_new][kv_heads][head_dim]: the new tokens' K (NOT rotated) and V */
  attngen_strides k_new_stride, v_new_stride; /* 0 = dense [batch][n_new][kv_heads][head_dim] */
  float *k_cache, *v_cache;    /* written at rows cache_len[b] .. cache_len[b] + n_new - 1 of sequence b only */
  attngen_strides k_cache_stride, v_cache_stride;
  /* A cache of another storage type (the kernel's kv_dtype), as in attngen_args: exactly the fields of that type
   * are set, the others NULL. k_new and v_new stay fp32: each new row is rotated (K), then rounded to f16/bf16
   * (nearest even) or quantized to int8 with one scale per group: scale = max|x| / 127 over the group, element
   * rint(x / scale) (an all-zero group: scale 0, elements 0; a group holding Inf or NaN: scale NaN). */
  ATTNGEN_KV_CACHE_FIELDS /* attngen_spec.h: attngen_f16 *k_cache_f16, *v_cache_f16; ...; int8_t *k_cache_i8, ... */
  float *k_cache_scale, *v_cache_scale;
  attngen_strides k_cache_scale_stride, v_cache_scale_stride;
  attngen_pages pages; /* a paged cache (kv_capacity 0; the caches are the pools); zero: contiguous */
} attngen_append_args;

/* For code generic over storage types, holding a cache as untyped memory and its attngen_kv_dtype: sets the K/V
 * fields of type t (f32: k and v; another type: its k_<field> and v_<field>, and k_scale and v_scale for a type with
 * scales) and clears every other type's, in attngen_args (cache fields in attngen_append_args). The memory must hold
 * elements of type t: nothing can check that. Returns ATTNGEN_OK, or with a message (nothing changed)
 * ATTNGEN_ERR_DTYPE for a t that is not a type or scales given to a type without them, ATTNGEN_ERR_NULL for a NULL
 * a. */
int attngen_args_set_kv(attngen_args *a, attngen_kv_dtype t, const void *k, const void *v, const float *k_scale,
                        const float *v_scale);
int attngen_append_args_set_kv(attngen_append_args *a, attngen_kv_dtype t, void *k, void *v, float *k_scale,
                               float *v_scale);

/* Rotates (RoPE kernels) and writes the new tokens' K and V into the cache, each sequence at its own length.
 * kernel gives the shape (kv_heads, head_dim) and params.rope; any kernel of the model's table will do. */
int attngen_kv_append(const attngen_kernel *kernel, const attngen_append_args *args);

/* One decode or chunked-prefill step, in one call: attngen_kv_append(kernel, &args->kv), then attention of the
 * n_new new queries of each sequence against its cache, the new rows included. Query i of sequence b is the token
 * at cache row cache_len[b] + i: it sees keys j <= cache_len[b] + i (causal, per sequence, so a ragged batch is
 * exact), and RoPE rotates it by the same position as its K row. The result equals a full causal prefill of the
 * sequence (and a loop that concatenates the cache and attends) to the usual fp32 tolerance.
 * The kernel: PREFILL (any n_new: a prompt or a chunk of it) or DECODE (n_new <= ATTNGEN_DECODE_MAX_Q); its mask
 * needs the causal feature (causal, causal_padding), except that n_new == 1 also works with a kv_lens mask
 * (padding: kv_lens[b] = cache_len[b] + 1) and, when every cache_len[b] is equal, with none; anything else is
 * ATTNGEN_ERR_SHAPE. Outputs o and lse as in attngen_args (lse [batch][heads][n_new]); o and lse must not overlap
 * q, the caches or each other. Every check (the attention's included) runs before the cache is written. */
typedef struct {
  attngen_append_args kv;      /* the new tokens' K and V, and the cache; kv.n_new is also the query count */
  const float *q;              /* [batch][n_new][heads][head_dim], NOT rotated (rotated while packed) */
  float *o;                    /* [batch][n_new][heads][head_dim] */
  attngen_strides q_stride, o_stride; /* 0 = dense */
  float scale;                 /* 0: the kernel's default */
  float *lse;                  /* optional [batch][heads][n_new] */
  int window, sink_tokens;     /* attention features' values, as in attngen_args */
  float softcap;
  const float *alibi_slopes, *sinks;
} attngen_step_args;

int attngen_step(const attngen_kernel *kernel, const attngen_step_args *args);
/* The same with nthreads as attngen_run_parallel (the attention runs on them; bit-identical for any count). */
int attngen_step_parallel(const attngen_kernel *kernel, const attngen_step_args *args, int nthreads);

/* ---- memory for large tensors (a KV cache above all) ----
 * attngen_alloc returns `bytes` of uninitialized memory, 64-byte aligned; from 2 MiB up it is 2 MiB aligned and,
 * on Linux, marked for transparent huge pages (madvise MADV_HUGEPAGE: the kernel may still use 4 KiB pages, e.g.
 * with THP "never"; ATTNGEN_HUGEPAGES=0 turns the mark off). Why: decode reads K and V once per step, and the
 * hardware prefetchers stop at each page boundary. How much this gains depends on the machine and its THP mode:
 * `make bench` times every decode case beyond the last-level cache on both page sizes and prints the ratio per
 * case (docs/performance.md has a measured run). Any caller memory works with every call: this is optional.
 * Returns NULL when bytes is 0 or memory runs out (message in attngen_last_error()). Free it with attngen_free,
 * not free(); attngen_free(NULL) does nothing. */
void *attngen_alloc(size_t bytes);
void attngen_free(void *p);

/* ---- errors ---- */
const char *attngen_last_error(void); /* message of the last failing call on this thread ("" if none) */
const char *attngen_status_name(int status);

/* Fills zero strides with the dense token-major defaults (what attngen_run does internally). A default that does
 * not fit in ptrdiff_t becomes PTRDIFF_MAX (attngen_run then refuses the extent); with a non-positive size the
 * field stays 0. */
void attngen_args_default_strides(const attngen_shape *shape, attngen_args *args);

#ifdef __cplusplus
}
#endif
#endif /* ATTNGEN_H */

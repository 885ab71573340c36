/* SPDX-License-Identifier: MIT */
/* bench/peers/shim.c: a fixed, int-and-pointer-only C surface over attngen for bench_peers.py (ctypes).
 *
 * Why a shim: ctypes has to mirror every struct it passes, and attngen's structs (attngen_shape,
 * attngen_args, attngen_kernel) are still changing. Keeping them on the C side means an API change breaks
 * this file's compile (loudly, in `make bench-peers`) instead of silently mis-laying out memory in Python.
 *
 * Which tables are compiled in is decided by peers.mk, which writes peers_tables.h: one #include per
 * generated table header, plus PEERS_TABLES(X) with X(attngen_table_<name>) per table. A shape that no
 * table has a specialized kernel for runs attngen's generic kernel, and peers_kernel_name says so.
 *
 * Tensors are dense token-major: Q/O fp32 [batch][q_len][heads][head_dim], K/V [batch][kv_len][kv_heads][head_dim]
 * in the cache's storage type (fp32 for peers_attn; any attngen_kv_dtype for the *_kv entry points, with int8's fp32
 * scales [batch][kv_len][kv_heads][head_dim / group]), or head-major where the entry point says so.
 * Not thread-safe (the kernel cache is a plain static array): bench_peers.py calls it from one thread. */
#include <stddef.h>
#include <stdio.h>

#include "attngen.h"
#include "peers_tables.h"

static const attngen_table *const peers_tables[] = {
#define PEERS_TABLE_PTR(t) &t,
    PEERS_TABLES(PEERS_TABLE_PTR)
#undef PEERS_TABLE_PTR
        NULL};

static char peers_error[512];

static attngen_shape make_shape(int heads, int kv_heads, int head_dim, int causal, int decode, int kv_dtype)
{
  attngen_shape s;
  s.heads = heads;
  s.kv_heads = kv_heads;
  s.head_dim = head_dim;
  s.mask = causal ? ATTNGEN_MASK_CAUSAL : ATTNGEN_MASK_NONE;
  s.phase = decode ? ATTNGEN_PHASE_DECODE : ATTNGEN_PHASE_PREFILL;
  s.kv_dtype = (attngen_kv_dtype)kv_dtype;
  return s;
}

static int same_shape(const attngen_shape *a, const attngen_shape *b)
{
  return a->heads == b->heads && a->kv_heads == b->kv_heads && a->head_dim == b->head_dim && a->mask == b->mask &&
         a->phase == b->phase && a->kv_dtype == b->kv_dtype;
}

/* The first compiled-in table with a specialized kernel for the shape (storage type included) on any ISA;
 * attngen_select then picks the ISA (and logs under ATTNGEN_VERBOSE=1), exactly as an application would. */
static const attngen_table *table_for(const attngen_shape *s)
{
  int t, i;
  for (t = 0; peers_tables[t]; ++t)
    for (i = 0; i < peers_tables[t]->count; ++i) {
      const attngen_kernel_info *k = &peers_tables[t]->kernels[i];
      if (k->heads == s->heads && k->kv_heads == s->kv_heads && k->head_dim == s->head_dim &&
          k->mask == s->mask && k->phase == s->phase && k->kv_dtype == s->kv_dtype)
        return peers_tables[t];
    }
  return NULL;
}

/* Selection is cached so the timed calls measure the kernel and attngen_run_parallel, not the table walk
 * (and ATTNGEN_VERBOSE logs each shape once instead of once per call). */
#define PEERS_CACHE 32
static struct {
  attngen_shape shape;
  attngen_kernel kernel;
} cache[PEERS_CACHE];
static int cached;

static const attngen_kernel *kernel_for(int heads, int kv_heads, int head_dim, int causal, int decode, int kv_dtype)
{
  const attngen_shape s = make_shape(heads, kv_heads, head_dim, causal, decode, kv_dtype);
  attngen_kernel k;
  int i, st;
  if (kv_dtype < 0 || kv_dtype >= ATTNGEN_KV_COUNT_) {
    snprintf(peers_error, sizeof peers_error, "no storage type %d", kv_dtype);
    return NULL;
  }
  for (i = 0; i < cached; ++i)
    if (same_shape(&cache[i].shape, &s)) return &cache[i].kernel;
  st = attngen_select(table_for(&s), &s, &k);
  if (st != ATTNGEN_OK) {
    snprintf(peers_error, sizeof peers_error, "attngen_select: %s (%s)", attngen_last_error(),
             attngen_status_name(st));
    return NULL;
  }
  if (cached == PEERS_CACHE) cached = 0; /* more shapes than any bench run uses: just start over */
  cache[cached].shape = s;
  cache[cached].kernel = k;
  return &cache[cached++].kernel;
}

/* Name of the kernel attngen picks for the shape ("attn_..._avx2" or a generic one), NULL on error. */
const char *peers_kernel_name(int heads, int kv_heads, int head_dim, int causal, int decode)
{
  const attngen_kernel *k = kernel_for(heads, kv_heads, head_dim, causal, decode, ATTNGEN_KV_F32);
  return k ? k->info->name : NULL;
}

/* The same for a cache of storage type kv_dtype (an attngen_kv_dtype value). */
const char *peers_kernel_name_kv(int heads, int kv_heads, int head_dim, int causal, int decode, int kv_dtype)
{
  const attngen_kernel *k = kernel_for(heads, kv_heads, head_dim, causal, decode, kv_dtype);
  return k ? k->info->name : NULL;
}

/* Bytes of one stored element of the type, and scales per (token, kv head) row (0 for the float types): Python
 * sizes its buffers with these. -1 for a type the runtime does not have. */
int peers_kv_elem_bytes(int kv_dtype)
{
  return kv_dtype < 0 || kv_dtype >= ATTNGEN_KV_COUNT_ ? -1 : attngen_kv_dtype_bytes((attngen_kv_dtype)kv_dtype);
}

int peers_kv_scales_per_row(int kv_dtype, int head_dim)
{
  return kv_dtype < 0 || kv_dtype >= ATTNGEN_KV_COUNT_ ? -1 : attngen_kv_scales_per_row((attngen_kv_dtype)kv_dtype, head_dim);
}

/* The K/V fields of storage type t in attngen_args / attngen_append_args. */
static void set_kv_args(attngen_args *a, int t, const void *k, const void *v, const float *ks, const float *vs)
{
  switch (t) {
  case ATTNGEN_KV_F32: a->k = (const float *)k, a->v = (const float *)v; break;
  case ATTNGEN_KV_F16: a->k_f16 = (const attngen_f16 *)k, a->v_f16 = (const attngen_f16 *)v; break;
  case ATTNGEN_KV_BF16: a->k_bf16 = (const attngen_bf16 *)k, a->v_bf16 = (const attngen_bf16 *)v; break;
  default: a->k_i8 = (const int8_t *)k, a->v_i8 = (const int8_t *)v, a->k_scale = ks, a->v_scale = vs;
  }
}

static void set_cache_args(attngen_append_args *a, int t, void *k, void *v, float *ks, float *vs)
{
  switch (t) {
  case ATTNGEN_KV_F32: a->k_cache = (float *)k, a->v_cache = (float *)v; break;
  case ATTNGEN_KV_F16: a->k_cache_f16 = (attngen_f16 *)k, a->v_cache_f16 = (attngen_f16 *)v; break;
  case ATTNGEN_KV_BF16: a->k_cache_bf16 = (attngen_bf16 *)k, a->v_cache_bf16 = (attngen_bf16 *)v; break;
  default:
    a->k_cache_i8 = (int8_t *)k, a->v_cache_i8 = (int8_t *)v, a->k_cache_scale = ks, a->v_cache_scale = vs;
  }
}

/* Fills a dense token-major cache of storage type kv_dtype from fp32 K/V [batch][kv_len][kv_heads][head_dim], as a
 * model fills it: attngen_kv_append of all kv_len rows (rounding to nearest even, or quantizing each row or group).
 * kc/vc hold batch * kv_len * kv_heads * head_dim elements of the type; ks/vs (int8 types, else NULL) batch * kv_len *
 * kv_heads * peers_kv_scales_per_row floats. Returns 0 or a negative attngen status (message in peers_last_error). */
int peers_kv_fill(int heads, int kv_heads, int head_dim, int kv_dtype, int batch, int kv_len, const float *k,
                  const float *v, void *kc, void *vc, float *ks, float *vs)
{
  const attngen_kernel *kern = kernel_for(heads, kv_heads, head_dim, 1, 1, kv_dtype);
  static int32_t zeros[64];
  attngen_append_args a = {0};
  int st;
  if (!kern) return ATTNGEN_ERR_UNSUPPORTED;
  if (batch > 64) {
    snprintf(peers_error, sizeof peers_error, "peers_kv_fill: batch %d > 64", batch);
    return ATTNGEN_ERR_SIZE;
  }
  a.batch = batch;
  a.n_new = kv_len;
  a.kv_capacity = kv_len;
  a.cache_len = zeros;
  a.k_new = k;
  a.v_new = v;
  set_cache_args(&a, kv_dtype, kc, vc, ks, vs);
  st = attngen_kv_append(kern, &a);
  if (st != ATTNGEN_OK)
    snprintf(peers_error, sizeof peers_error, "attngen_kv_append (%s): %s (%s)", attngen_kv_dtype_name(kv_dtype),
             attngen_last_error(), attngen_status_name(st));
  return st;
}

/* out = softmax(Q·Kᵀ/sqrt(head_dim) + mask)·V on nthreads threads, K/V of storage type kv_dtype token-major
 * [batch][kv_len][kv_heads][head_dim] or (head_major) [batch][kv_heads][kv_len][head_dim], HF's and ONNX Runtime's
 * BNSH cache, through the strides (in elements of the type; an int8 cache's scales laid out the same way, in floats).
 * Returns 0 or a negative attngen status (message in peers_last_error). causal is bottom-right aligned; decode takes
 * 1 <= q_len <= 8. */
static int attend(int heads, int kv_heads, int head_dim, int causal, int decode, int kv_dtype, int batch, int q_len,
                  int kv_len, const float *q, const void *k, const void *v, const float *ks, const float *vs,
                  float *o, int nthreads, int head_major)
{
  const attngen_kernel *kern = kernel_for(heads, kv_heads, head_dim, causal, decode, kv_dtype);
  attngen_args a = {0};
  int st;
  if (!kern) return ATTNGEN_ERR_UNSUPPORTED;
  a.batch = batch;
  a.q_len = q_len;
  a.kv_len = kv_len;
  a.q = q;
  a.o = o;
  set_kv_args(&a, kv_dtype, k, v, ks, vs);
  if (head_major) {
    const int ns = attngen_kv_scales_per_row((attngen_kv_dtype)kv_dtype, head_dim);
    a.k_stride.seq = a.v_stride.seq = head_dim;
    a.k_stride.head = a.v_stride.head = (ptrdiff_t)kv_len * head_dim;
    a.k_stride.batch = a.v_stride.batch = (ptrdiff_t)kv_heads * kv_len * head_dim;
    if (ns) {
      a.k_scale_stride.seq = a.v_scale_stride.seq = ns;
      a.k_scale_stride.head = a.v_scale_stride.head = (ptrdiff_t)kv_len * ns;
      a.k_scale_stride.batch = a.v_scale_stride.batch = (ptrdiff_t)kv_heads * kv_len * ns;
    }
  }
  st = attngen_run_parallel(kern, &a, nthreads);
  if (st != ATTNGEN_OK)
    snprintf(peers_error, sizeof peers_error, "attngen_run_parallel (%s K/V, %s): %s (%s)",
             attngen_kv_dtype_name((attngen_kv_dtype)kv_dtype), head_major ? "head-major" : "token-major",
             attngen_last_error(), attngen_status_name(st));
  return st;
}

int peers_attn(int heads, int kv_heads, int head_dim, int causal, int decode, int batch, int q_len, int kv_len,
               const float *q, const float *k, const float *v, float *o, int nthreads)
{
  return attend(heads, kv_heads, head_dim, causal, decode, ATTNGEN_KV_F32, batch, q_len, kv_len, q, k, v, NULL, NULL,
                o, nthreads, 0);
}

int peers_attn_head_major(int heads, int kv_heads, int head_dim, int causal, int decode, int batch, int q_len,
                          int kv_len, const float *q, const float *k, const float *v, float *o, int nthreads)
{
  return attend(heads, kv_heads, head_dim, causal, decode, ATTNGEN_KV_F32, batch, q_len, kv_len, q, k, v, NULL, NULL,
                o, nthreads, 1);
}

/* A cache of any storage type: k/v as peers_kv_fill writes them (or their head-major transpose), ks/vs the int8
 * types' scales (NULL for the others). */
int peers_attn_kv(int heads, int kv_heads, int head_dim, int causal, int decode, int kv_dtype, int batch, int q_len,
                  int kv_len, const float *q, const void *k, const void *v, const float *ks, const float *vs,
                  float *o, int nthreads, int head_major)
{
  return attend(heads, kv_heads, head_dim, causal, decode, kv_dtype, batch, q_len, kv_len, q, k, v, ks, vs, o,
                nthreads, head_major);
}

/* The message of the last failing shim call ("" if none). */
const char *peers_last_error(void) { return peers_error; }

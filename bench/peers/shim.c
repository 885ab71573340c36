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
 * Tensors are dense token-major fp32: Q/O [batch][q_len][heads][head_dim], K/V [batch][kv_len][kv_heads][head_dim].
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

static attngen_shape make_shape(int heads, int kv_heads, int head_dim, int causal, int decode)
{
  attngen_shape s;
  s.heads = heads;
  s.kv_heads = kv_heads;
  s.head_dim = head_dim;
  s.mask = causal ? ATTNGEN_MASK_CAUSAL : ATTNGEN_MASK_NONE;
  s.phase = decode ? ATTNGEN_PHASE_DECODE : ATTNGEN_PHASE_PREFILL;
  return s;
}

/* The first compiled-in table with a specialized kernel for the shape on any ISA; attngen_select then
 * picks the ISA (and logs under ATTNGEN_VERBOSE=1), exactly as an application would. */
static const attngen_table *table_for(const attngen_shape *s)
{
  int t, i;
  for (t = 0; peers_tables[t]; ++t)
    for (i = 0; i < peers_tables[t]->count; ++i) {
      const attngen_kernel_info *k = &peers_tables[t]->kernels[i];
      if (k->heads == s->heads && k->kv_heads == s->kv_heads && k->head_dim == s->head_dim &&
          k->mask == s->mask && k->phase == s->phase)
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

static const attngen_kernel *kernel_for(int heads, int kv_heads, int head_dim, int causal, int decode)
{
  const attngen_shape s = make_shape(heads, kv_heads, head_dim, causal, decode);
  attngen_kernel k;
  int i, st;
  for (i = 0; i < cached; ++i)
    if (cache[i].shape.heads == s.heads && cache[i].shape.kv_heads == s.kv_heads &&
        cache[i].shape.head_dim == s.head_dim && cache[i].shape.mask == s.mask && cache[i].shape.phase == s.phase)
      return &cache[i].kernel;
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
  const attngen_kernel *k = kernel_for(heads, kv_heads, head_dim, causal, decode);
  return k ? k->info->name : NULL;
}

/* out = softmax(Q·Kᵀ/sqrt(head_dim) + mask)·V on nthreads threads, K/V token-major [batch][kv_len][kv_heads][head_dim]
 * or (head_major) [batch][kv_heads][kv_len][head_dim], HF's and ONNX Runtime's BNSH cache, through the strides.
 * Returns 0 or a negative attngen status (message in peers_last_error). causal is bottom-right aligned; decode takes
 * 1 <= q_len <= 8. */
static int attend(int heads, int kv_heads, int head_dim, int causal, int decode, int batch, int q_len, int kv_len,
                  const float *q, const float *k, const float *v, float *o, int nthreads, int head_major)
{
  const attngen_kernel *kern = kernel_for(heads, kv_heads, head_dim, causal, decode);
  attngen_args a = {0};
  int st;
  if (!kern) return ATTNGEN_ERR_UNSUPPORTED;
  a.batch = batch;
  a.q_len = q_len;
  a.kv_len = kv_len;
  a.q = q;
  a.k = k;
  a.v = v;
  a.o = o;
  if (head_major) {
    a.k_stride.seq = a.v_stride.seq = head_dim;
    a.k_stride.head = a.v_stride.head = (ptrdiff_t)kv_len * head_dim;
    a.k_stride.batch = a.v_stride.batch = (ptrdiff_t)kv_heads * kv_len * head_dim;
  }
  st = attngen_run_parallel(kern, &a, nthreads);
  if (st != ATTNGEN_OK)
    snprintf(peers_error, sizeof peers_error, "attngen_run_parallel%s: %s (%s)", head_major ? " (head-major K/V)" : "",
             attngen_last_error(), attngen_status_name(st));
  return st;
}

int peers_attn(int heads, int kv_heads, int head_dim, int causal, int decode, int batch, int q_len, int kv_len,
               const float *q, const float *k, const float *v, float *o, int nthreads)
{
  return attend(heads, kv_heads, head_dim, causal, decode, batch, q_len, kv_len, q, k, v, o, nthreads, 0);
}

int peers_attn_head_major(int heads, int kv_heads, int head_dim, int causal, int decode, int batch, int q_len,
                          int kv_len, const float *q, const float *k, const float *v, float *o, int nthreads)
{
  return attend(heads, kv_heads, head_dim, causal, decode, batch, q_len, kv_len, q, k, v, o, nthreads, 1);
}

/* The message of the last failing shim call ("" if none). */
const char *peers_last_error(void) { return peers_error; }

/* SPDX-License-Identifier: MIT */
/* attngen runtime: the K/V repack, one fp32 head-major copy per (sequence, kv head) that a plan's items share. */
#include "attngen_internal.h"

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

/* Row j of sequence b, kv head h of K (v = 0) or V (v = 1), whose elements start at `base`, as fp32 into dst
 * (attngen_kv_decode_row: copied, or widened exactly and times the group's scale: the same floats the decode kernels
 * compute with). */
static void kv_row_to_float(const attngen_args *a, attngen_kv_dtype t, const unsigned char *base, int d, int v, int b,
                            int h, int j, float *dst)
{
  const attngen_strides *st = v ? &a->v_stride : &a->k_stride;
  const ptrdiff_t off = attngen_row_offset(&a->pages, st, b, j) + h * st->head;
  const unsigned char *y = base + off * attngen_kv_dtype_bytes(t);
  const float *sc = NULL;
  if (attngen_kv_scales_per_row(t, d)) {
    const attngen_strides *ss = v ? &a->v_scale_stride : &a->k_scale_stride;
    sc = (v ? a->v_scale : a->k_scale) + attngen_row_offset(&a->pages, ss, b, j) + h * ss->head;
  }
  attngen_kv_decode_row(t, y, sc, d, dst);
}

static void kv_pack_copy(const attngen_plan *p, int b, int h)
{
  const int d = p->kernel.shape.head_dim;
  int n = kv_pack_rows(p, b);
  const attngen_kv_dtype t = p->kernel.shape.kv_dtype;
  float *kd = (float *)p->packed.k + b * p->packed.k_stride.batch + h * p->packed.k_stride.head;
  float *vd = (float *)p->packed.v + b * p->packed.v_stride.batch + h * p->packed.v_stride.head;
  /* a sliding window: the rows below the first query's window (past the sink tokens) are read by no item */
  const int offset = p->items[(size_t)b * (p->n_items / (size_t)p->args.batch)].causal_offset; /* items: b-major */
  const int lo = attngen_window_first_key(&p->args, offset), sinks = p->args.window ? p->args.sink_tokens : 0;
  const attngen_kv_encoding e = attngen_kv_dtype_encoding(t);
  const void *kvp[KVP_COUNT];
  int j;
  attngen_args_kv_pointers(&p->args, kvp);
  /* causal: no row past the last query's limit is read (a paged sequence may have no page there) */
  if ((attngen_mask_features(p->kernel.shape.mask) & ATTNGEN_FEATURE_CAUSAL) && offset + p->args.q_len < n)
    n = offset + p->args.q_len;
  for (j = 0; j < n; ++j) {
    if (j >= sinks && j < lo) j = lo;
    if (j >= n) break;
    kv_row_to_float(&p->args, t, (const unsigned char *)kvp[KVP_K(e)], d, 0, b, h, j, kd + (size_t)j * d);
    kv_row_to_float(&p->args, t, (const unsigned char *)kvp[KVP_V(e)], d, 1, b, h, j, vd + (size_t)j * d);
  }
}

/* Make sure (b, h) is copied before an item reads it. Copying is a pure copy, so results do not depend on which
 * thread did it. A thread that finds another one copying waits for it (one head's rows: well under a tile's
 * worth of work per query tile that then reads them). */
void attngen_kv_pack_ensure(attngen_plan *p, int b, int h)
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
  (void)p, (void)b, (void)h; /* copied by attngen_plan_kv_pack */
#endif
}

/* Set up the repack when the kernel's plan asks for it (q_len >= work.pack_kv_min_q) and K/V are not already
 * head-major, or always when a prefill kernel reads a cache of another type than fp32: its code reads fp32 rows,
 * so the repack converts them, once per call (each row is then read by every query tile). Not an error for an
 * fp32 cache when the copy does not fit in memory (the items then read K/V in place); for another type it is. */
int attngen_plan_kv_pack(attngen_plan *p)
{
  const attngen_args *a = &p->args;
  const attngen_shape *sh = &p->kernel.shape;
  const int d = sh->head_dim;
  /* a paged cache is gathered by the repack too: the prefill kernels read contiguous rows */
  const int convert = (sh->kv_dtype != ATTNGEN_KV_F32 || a->pages.block_table) && sh->phase == ATTNGEN_PHASE_PREFILL;
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
  p->kv_pack = (float *)attngen_aligned64(bytes, &p->kv_pack_raw);
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
  attngen_args_set_kv(&p->packed, ATTNGEN_KV_F32, p->packed.k, p->packed.v, NULL, NULL);
  memset(&p->packed.pages, 0, sizeof p->packed.pages);
#if !ATTNGEN_LAZY_PACK
  {
    int b, h;
    for (b = 0; b < a->batch; ++b)
      for (h = 0; h < sh->kv_heads; ++h) kv_pack_copy(p, b, h);
  }
#endif
  return 0;
nomem:
  return convert ? attngen_fail(ATTNGEN_ERR_NOMEM,
                                "attngen: out of memory for the fp32 copy of the %s%s cache (%d rows of "
                                "%d kv heads) a prefill reads",
                                a->pages.block_table ? "paged " : "", attngen_kv_dtype_name(sh->kv_dtype), a->kv_len,
                                sh->kv_heads)
                 : 0;
}

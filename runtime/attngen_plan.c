/* SPDX-License-Identifier: MIT */
/* attngen runtime: plans (a call cut into work items), running a range of items, the split-KV merge. */
#include "attngen_internal.h"

/* The work cut comes from the kernel (attngen_work, chosen by the generator's plan); the runtime executes it.
 * What it computes depends only on the shape and lengths, never on the thread count, so results are
 * bit-identical for any thread count (more threads than items only spreads a decode step's kv heads over more
 * items, which computes each head the same way). */

/* Whether a part of `floats` K (and as many V) floats per item, for `rows` query rows per kv head, is worth a
 * thread by the kernel's head-split thresholds (w->head_split_min_*: 0 is no criterion). */
static int head_part_worth_a_thread(const attngen_work *w, double floats, double rows)
{
  return (w->head_split_min_bytes > 0 && floats * 2.0 * sizeof(float) >= w->head_split_min_bytes) ||
         (w->head_split_min_flop > 0 && floats * 4.0 * rows >= w->head_split_min_flop);
}

/* Kv heads per item for a plan of `items` items (each holding every kv head) on nthreads threads: as many parts as
 * the threads want, fewer if they would be too small; all kv heads when no part is worth a thread. */
static int head_split(const attngen_work *w, const attngen_shape *sh, long items, int nthreads, double chunk_keys,
                      double rows)
{
  long parts = items < nthreads ? (nthreads + items - 1) / items : 1;
  if (parts > sh->kv_heads) parts = sh->kv_heads; /* a part holds at least one kv head */
  for (; parts >= 2; --parts) {
    const int part_heads = (int)((sh->kv_heads + parts - 1) / parts);
    if (head_part_worth_a_thread(w, chunk_keys * part_heads * sh->head_dim, rows)) return part_heads;
  }
  return sh->kv_heads;
}

/* offsets: [batch] causal offset of each sequence (attngen_step: its cache length), NULL: kv_len - q_len for all. */
int attngen_plan_create_at(const attngen_kernel *kernel, const attngen_args *args, const int32_t *offsets,
                           int nthreads, attngen_plan **out)
{
  attngen_plan *p;
  attngen_args a;
  int st, q_tile, b, h, s, q0, t, hpi;
  const attngen_work *w;
  size_t n = 0, cap, rows = 0, part_floats = 0;
  const attngen_shape *sh;
  if (!out) return attngen_fail(ATTNGEN_ERR_NULL, "attngen: plan out pointer is NULL");
  *out = NULL;
  /* before anything is allocated: the plan holds one scratch buffer per thread */
  if (nthreads <= 0 || nthreads > ATTNGEN_MAX_THREADS)
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: nthreads (%d) must be in [1, ATTNGEN_MAX_THREADS = %d]", nthreads,
                        ATTNGEN_MAX_THREADS);
  if ((st = attngen_check_args_at(kernel, args, offsets, &a))) return st;
  sh = &kernel->shape;
  p = (attngen_plan *)calloc(1, sizeof *p);
  if (!p) return attngen_fail(ATTNGEN_ERR_NOMEM, "attngen: out of memory");
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
    /* a sliding window: only the keys of the queries' windows are cut (at most q_len - 1 + window per sequence) */
    p->splits = (a.window && a.window - 1 < a.kv_len - a.q_len ? a.q_len - 1 + a.window : a.kv_len) / w->split_min_keys;
    if (p->splits > w->split_max) p->splits = w->split_max;
    if (p->splits < 1) p->splits = 1;
  }
  /* A decode step with fewer items than threads (one sequence, one KV chunk: kv_len below 2 x split_min_keys)
   * cuts its kv heads among as many items as there are threads, when each part is still worth a thread by the
   * plan's thresholds (work.head_split_min_*); with one thread nothing changes. The results do not depend on it:
   * a kv head's rows are computed alike in whichever item holds them (the softmax works lane by lane, every block
   * stays within one head), so they stay bit-identical for any thread count. The split-KV cut above, which does
   * change the arithmetic, never depends on the threads. */
  if (w->kv_heads_per_item == 0 && nthreads > 1)
    hpi = head_split(w, sh, (long)a.batch * ((a.q_len - 1) / q_tile + 1) * p->splits, nthreads,
                     (double)((a.kv_len + p->splits - 1) / p->splits), (double)p->group * a.q_len);
  {
    /* item count and split-KV partial sizes, checked before anything else is allocated */
    size_t item_bytes, scratch_bytes;
    if (q_tile <= 0 || hpi <= 0 || p->splits <= 0) {
      st = attngen_fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: kernel %s asked for a bad work cut (q_tile %d, kv heads per "
                        "item %d, splits %d)", kernel->info->name, q_tile, hpi, p->splits);
      attngen_plan_destroy(p); /* after the message: it reads p */
      return st;
    }
    if (mul_size((size_t)a.batch, (size_t)((sh->kv_heads - 1) / hpi + 1), &cap) ||
        mul_size(cap, (size_t)((a.q_len - 1) / q_tile + 1), &cap) || mul_size(cap, (size_t)p->splits, &cap) ||
        mul_size(cap, sizeof(attngen_item), &item_bytes) || item_bytes > (size_t)PTRDIFF_MAX) {
      st = attngen_fail(ATTNGEN_ERR_SIZE,
                        "attngen: the work items (batch %d x kv heads %d / %d x q_len %d / %d x splits %d) "
                        "do not fit in memory",
                        a.batch, sh->kv_heads, hpi, a.q_len, q_tile, p->splits);
      attngen_plan_destroy(p);
      return st;
    }
    if (mul_size(p->scratch_floats, sizeof(float), &scratch_bytes) || scratch_bytes > (size_t)PTRDIFF_MAX - 64) {
      st = attngen_fail(ATTNGEN_ERR_SIZE, "attngen: kernel %s asked for %zu scratch floats", kernel->info->name,
                        p->scratch_floats);
      attngen_plan_destroy(p);
      return st;
    }
    if (p->splits > 1 &&
        (mul_size((size_t)p->splits, (size_t)a.batch, &rows) || mul_size(rows, (size_t)sh->heads, &rows) ||
         mul_size(rows, (size_t)a.q_len, &rows) || mul_size(rows, (size_t)sh->head_dim + 2, &part_floats) ||
         part_floats > ATTNGEN_MAX_FLOATS)) {
      st = attngen_fail(ATTNGEN_ERR_SIZE, "attngen: split-KV partials (splits %d x batch %d x heads %d x q_len %d x "
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
    p->scratch[t] =
        (float *)attngen_scratch_get(p->scratch_floats * sizeof(float), &p->scratch_raw[t], &p->scratch_cap[t]);
    if (!p->scratch[t]) goto nomem;
  }
  p->bytes = cap * sizeof *p->items + (size_t)nthreads * (p->scratch_floats * sizeof(float) + 64);

  if (p->splits > 1) {
    /* rows * (head_dim + 2) floats fit in PTRDIFF_MAX bytes (checked above), so these products do too */
    p->part_o = (float *)malloc(rows * (size_t)sh->head_dim * sizeof(float));
    p->part_ms = (float *)malloc(2 * rows * sizeof(float));
    p->part_rows = (const float **)malloc(3 * (size_t)p->splits * sizeof *p->part_rows);
    p->part_st = (attngen_strides *)malloc(2 * (size_t)p->splits * sizeof *p->part_st);
    p->merge.acc = (float *)malloc((size_t)sh->head_dim * sizeof(float));
    if (!p->part_o || !p->part_ms || !p->part_rows || !p->part_st || !p->merge.acc) goto nomem;
    p->bytes += rows * ((size_t)sh->head_dim + 2) * sizeof(float) + (size_t)sh->head_dim * sizeof(float) +
                (size_t)p->splits * (3 * sizeof *p->part_rows + 2 * sizeof *p->part_st);
    /* split s: [batch][heads][q_len] rows of head_dim floats, and of (max, sum) pairs, after split s - 1's */
    for (s = 0; s < p->splits; ++s) {
      const size_t split_rows = rows / (size_t)p->splits;
      const attngen_strides o_st = { (ptrdiff_t)sh->heads * a.q_len * sh->head_dim, sh->head_dim,
                                     (ptrdiff_t)a.q_len * sh->head_dim };
      const attngen_strides ms_st = { 2 * (ptrdiff_t)sh->heads * a.q_len, 2, 2 * (ptrdiff_t)a.q_len };
      p->part_rows[s] = p->part_o + s * split_rows * sh->head_dim;
      p->part_rows[p->splits + s] = p->part_ms + 2 * s * split_rows;
      p->part_rows[2 * p->splits + s] = p->part_ms + 2 * s * split_rows + 1;
      p->part_st[s] = o_st;
      p->part_st[p->splits + s] = ms_st;
    }
    p->merge.n = p->splits;
    p->merge.d = sh->head_dim;
    p->merge.o = p->part_rows;
    p->merge.m = p->part_rows + p->splits;
    p->merge.l = p->part_rows + 2 * p->splits;
    p->merge.o_st = p->part_st;
    p->merge.ms_st = p->part_st + p->splits;
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
            it->causal_offset = offsets ? offsets[b] : a.kv_len - a.q_len; /* bottom-right aligned */
            if (a.window && p->splits > 1) { /* the splits share the window's keys; the first also holds the sinks */
              const int lo = attngen_window_first_key(&a, it->causal_offset);
              int wchunk = (a.kv_len - lo + p->splits - 1) / p->splits;
              wchunk = (wchunk + align - 1) / align * align;
              it->k0 = s == 0 ? 0 : lo + s * wchunk < a.kv_len ? lo + s * wchunk : a.kv_len;
              it->k1 = lo + (s + 1) * wchunk < a.kv_len ? lo + (s + 1) * wchunk : a.kv_len;
            } else {
              it->k0 = s * chunk < a.kv_len ? s * chunk : a.kv_len;
              it->k1 = (s + 1) * chunk < a.kv_len ? (s + 1) * chunk : a.kv_len;
            }
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
  if ((st = attngen_plan_kv_pack(p)) || (st = attngen_plan_rope(p))) {
    attngen_plan_destroy(p);
    return st;
  }
  *out = p;
  return ATTNGEN_OK;
nomem:
  attngen_plan_destroy(p);
  return attngen_fail(ATTNGEN_ERR_NOMEM, "attngen: out of memory for the plan");
}

int attngen_plan_create(const attngen_kernel *kernel, const attngen_args *args, int nthreads, attngen_plan **out)
{
  return attngen_plan_create_at(kernel, args, NULL, nthreads, out);
}

size_t attngen_plan_items(const attngen_plan *p) { return p ? p->n_items : 0; }
size_t attngen_plan_scratch_bytes(const attngen_plan *p) { return p ? p->bytes : 0; }

int attngen_plan_run(attngen_plan *p, size_t begin, size_t end, int thread)
{
  size_t i;
  if (!p) return attngen_fail(ATTNGEN_ERR_NULL, "attngen: plan is NULL");
  if (thread < 0 || thread >= p->nthreads)
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: thread %d outside [0, %d)", thread, p->nthreads);
  if (begin > end || end > p->n_items)
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: item range [%zu, %zu) outside [0, %zu)", begin, end, p->n_items);
  for (i = begin; i < end; ++i) {
    const attngen_item *it = &p->items[i];
    if (p->kv_pack) {
      int h;
      for (h = it->kvh0; h < it->kvh1; ++h) attngen_kv_pack_ensure(p, it->b, h);
    }
    p->kernel.info->fn(&p->kernel, p->kv_pack ? &p->packed : &p->args, it, p->scratch[thread]);
  }
  return ATTNGEN_OK;
}

/* Merge split-KV partials, in split order (fixed, so bit-identical for any thread count): attngen_merge_row over
 * each split's normalized output o_s, row max m_s and sum l_s. The maxima are exact scores, so nothing is lost to a
 * rounded per-split log-sum-exp even when scores are large. */
int attngen_plan_finish(attngen_plan *p)
{
  const attngen_args *a;
  int b, h, i, heads;
  if (!p) return attngen_fail(ATTNGEN_ERR_NULL, "attngen: plan is NULL");
  if (p->splits == 1) return ATTNGEN_OK;
  a = &p->args;
  heads = p->kernel.shape.heads;
  for (b = 0; b < a->batch; ++b)
    for (h = 0; h < heads; ++h)
      for (i = 0; i < a->q_len; ++i) {
        /* a sink logit joins the denominator once, here */
        const float lse = attngen_merge_row(&p->merge, b, i, h, a->sinks ? a->sinks[h] : -INFINITY,
                                            a->o + b * a->o_stride.batch + i * a->o_stride.seq + h * a->o_stride.head);
        if (a->lse) a->lse[((size_t)b * heads + h) * a->q_len + i] = lse;
      }
  return ATTNGEN_OK;
}

void attngen_plan_destroy(attngen_plan *p)
{
  int t;
  if (!p) return;
  if (p->scratch_raw && p->scratch_cap) /* both exist before any buffer is taken */
    for (t = 0; t < p->nthreads; ++t) attngen_scratch_put(p->scratch_raw[t], p->scratch_cap[t]);
  free(p->scratch_raw);
  free(p->scratch_cap);
  free((void *)p->scratch);
  free(p->items);
  free(p->part_o);
  free(p->part_ms);
  free((void *)p->part_rows);
  free(p->part_st);
  free(p->merge.acc);
  free(p->rope_cs);
  free(p->kv_pack_raw);
  free(p->kv_state);
  free(p);
}

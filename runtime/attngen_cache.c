/* SPDX-License-Identifier: MIT */
/* attngen runtime: the KV-cache append and the step (append, then attend). */
#include "attngen_internal.h"

/* An append's arguments, checked and normalized: strides resolved, cache_len and pos copied (so that they may
 * live anywhere: nothing reads them once the cache is being written), the longest cache, the caches' ranges. */
typedef struct {
  attngen_append_args a;
  int32_t *len, *pos; /* copies of cache_len [batch] and pos [batch][n_new] (or NULL) */
  int max_len;
  addr_range k_cache, v_cache, k_scale, v_scale; /* what the append writes (scales: int8 types only) */
} append_job;

/* The append's caches as attngen_args' K/V fields, strides and scales (the step's attention reads what the append
 * wrote; the append's checks read its fields through the same list). */
static void cache_as_args(const attngen_append_args *c, attngen_args *a)
{
#define CACHE_FIELDS_(F, f, api, stored, scale_max) a->k_##f = c->k_cache_##f, a->v_##f = c->v_cache_##f;
  a->k = c->k_cache, a->v = c->v_cache;
  ATTNGEN_KV_ENCODING_LIST(CACHE_FIELDS_)
#undef CACHE_FIELDS_
  a->k_scale = c->k_cache_scale, a->v_scale = c->v_cache_scale;
  a->k_stride = c->k_cache_stride, a->v_stride = c->v_cache_stride;
  a->k_scale_stride = c->k_cache_scale_stride, a->v_scale_stride = c->v_cache_scale_stride;
}

static void append_kv_pointers(const attngen_append_args *c, const void *p[KVP_COUNT])
{
  attngen_args a;
  memset(&a, 0, sizeof a);
  cache_as_args(c, &a);
  attngen_args_kv_pointers(&a, p);
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
  addr_range inr[3];
  const void *kvp[KVP_COUNT];
  int st, b, i, n0, rows;
  const int paged = kernel && kernel->info && in && kernel->shape.page_size != 0;
  memset(j, 0, sizeof *j);
  if (!kernel || !kernel->info) return attngen_fail(ATTNGEN_ERR_NULL, "attngen: kernel is NULL (select one first)");
  if (!in) return attngen_fail(ATTNGEN_ERR_NULL, "attngen: append args are NULL");
  s = &kernel->shape;
  if ((st = attngen_check_shape(s)) || (st = attngen_rope_check(kernel))) return st;
  if (!in->k_new || !in->v_new || !in->cache_len)
    return attngen_fail(ATTNGEN_ERR_NULL, "attngen: k_new, v_new and cache_len must not be NULL (k_new=%p v_new=%p "
                        "cache_len=%p)", (const void *)in->k_new, (const void *)in->v_new, (const void *)in->cache_len);
  append_kv_pointers(in, kvp);
  if ((st = attngen_check_kv_pointers(s->kv_dtype, kvp, kernel->info->name, attngen_kvp_cache_names))) return st;
  if (in->batch <= 0 || in->n_new <= 0 || (in->kv_capacity <= 0 && !s->page_size))
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: batch (%d), n_new (%d) and kv_capacity (%d) must be positive",
                        in->batch, in->n_new, in->kv_capacity);
  if (in->batch > ATTNGEN_MAX_LEN || in->n_new > ATTNGEN_MAX_LEN || in->kv_capacity > ATTNGEN_MAX_LEN)
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: batch (%d), n_new (%d) and kv_capacity (%d) must be at most "
                        "ATTNGEN_MAX_LEN (%d)", in->batch, in->n_new, in->kv_capacity, ATTNGEN_MAX_LEN);
  if ((st = attngen_check_pages(s, &in->pages, in->kv_capacity, in->batch))) return st;
  *a = *in;
  if (paged) { /* the pools are the "batch" of the cache tensors: num_pages of page_size rows */
    a->kv_capacity = a->pages.max_pages * a->pages.page_size;
    n0 = a->pages.num_pages, rows = a->pages.page_size;
  } else {
    n0 = a->batch, rows = a->kv_capacity;
  }
  if ((st = attngen_check_strides("k_new", &a->k_new_stride)) ||
      (st = attngen_check_strides("v_new", &a->v_new_stride)) ||
      (st = attngen_check_strides("k_cache", &a->k_cache_stride)) ||
      (st = attngen_check_strides("v_cache", &a->v_cache_stride)))
    return st;
  attngen_fill_default_strides(&a->k_new_stride, s->kv_heads, s->head_dim, a->n_new);
  attngen_fill_default_strides(&a->v_new_stride, s->kv_heads, s->head_dim, a->n_new);
  attngen_fill_default_strides(&a->k_cache_stride, s->kv_heads, s->head_dim, rows);
  attngen_fill_default_strides(&a->v_cache_stride, s->kv_heads, s->head_dim, rows);
  if (attngen_kv_scales_per_row(s->kv_dtype, s->head_dim)) {
    const int groups = attngen_kv_scales_per_row(s->kv_dtype, s->head_dim);
    size_t eks, evs;
    addr_range ks, vs;
    if ((st = attngen_check_strides("k_cache_scale", &a->k_cache_scale_stride)) ||
        (st = attngen_check_strides("v_cache_scale", &a->v_cache_scale_stride)))
      return st;
    attngen_fill_default_strides(&a->k_cache_scale_stride, s->kv_heads, groups, rows);
    attngen_fill_default_strides(&a->v_cache_scale_stride, s->kv_heads, groups, rows);
    if ((st = attngen_tensor_extent("k_cache_scale", "kv_capacity", &a->k_cache_scale_stride, n0, rows, s->kv_heads,
                                    groups, &eks)) ||
        (st = attngen_tensor_extent("v_cache_scale", "kv_capacity", &a->v_cache_scale_stride, n0, rows, s->kv_heads,
                                    groups, &evs)) ||
        (st = attngen_rows_disjoint("k_cache_scale", &a->k_cache_scale_stride, n0, rows, s->kv_heads, groups)) ||
        (st = attngen_rows_disjoint("v_cache_scale", &a->v_cache_scale_stride, n0, rows, s->kv_heads, groups)) ||
        (st = attngen_make_range("k_cache_scale", a->k_cache_scale, eks, sizeof(float), &ks)) ||
        (st = attngen_make_range("v_cache_scale", a->v_cache_scale, evs, sizeof(float), &vs)))
      return st;
    j->k_scale = ks, j->v_scale = vs;
  }
  if ((st = attngen_tensor_extent("k_new", "n_new", &a->k_new_stride, a->batch, a->n_new, s->kv_heads, s->head_dim,
                                  &ekn)) ||
      (st = attngen_tensor_extent("v_new", "n_new", &a->v_new_stride, a->batch, a->n_new, s->kv_heads, s->head_dim,
                                  &evn)) ||
      (st = attngen_tensor_extent("k_cache", "kv_capacity", &a->k_cache_stride, n0, rows, s->kv_heads, s->head_dim,
                                  &ekc)) ||
      (st = attngen_tensor_extent("v_cache", "kv_capacity", &a->v_cache_stride, n0, rows, s->kv_heads, s->head_dim,
                                  &evc)))
    return st;
  if ((st = attngen_rows_disjoint("k_cache", &a->k_cache_stride, n0, rows, s->kv_heads, s->head_dim)) ||
      (st = attngen_rows_disjoint("v_cache", &a->v_cache_stride, n0, rows, s->kv_heads, s->head_dim)))
    return st;
  /* the caches are written: they must not overlap each other or the rows being appended (whole ranges) */
  {
    int f[4];
    const size_t kv_bytes = (size_t)attngen_kv_dtype_bytes(s->kv_dtype);
    attngen_kv_fields(s->kv_dtype, f);
    if ((st = attngen_make_range(attngen_kvp_cache_names[f[0]], kvp[f[0]], ekc, kv_bytes, &j->k_cache)) ||
        (st = attngen_make_range(attngen_kvp_cache_names[f[1]], kvp[f[1]], evc, kv_bytes, &j->v_cache)))
      return st;
  }
  if ((st = attngen_make_range("k_new", a->k_new, ekn, sizeof(float), &inr[0])) ||
      (st = attngen_make_range("v_new", a->v_new, evn, sizeof(float), &inr[1])))
    return st;
  if (paged && (st = attngen_make_range("pages.block_table", a->pages.block_table,
                                        (size_t)a->batch * (size_t)a->pages.max_pages, sizeof(int32_t), &inr[2])))
    return st;
  {
    /* every written range (caches, and int8 scales) against every other one, then against the new rows */
    const addr_range *w[4] = { &j->k_cache, &j->v_cache, &j->k_scale, &j->v_scale };
    const int nw = attngen_kv_scales_per_row(s->kv_dtype, s->head_dim) ? 4 : 2;
    for (i = 0; i < nw; ++i)
      for (b = i + 1; b < nw; ++b)
        if (w[i]->lo < w[b]->hi && w[b]->lo < w[i]->hi)
          return attngen_fail(ATTNGEN_ERR_ALIAS,
                              "attngen: %s and %s overlap (the caches are written: they must not overlap "
                              "each other or the new rows)",
                              w[i]->name, w[b]->name);
    for (i = 0; i < nw; ++i)
      for (b = 0; b < (paged ? 3 : 2); ++b)
        if (w[i]->lo < inr[b].hi && inr[b].lo < w[i]->hi)
          return attngen_fail(ATTNGEN_ERR_ALIAS,
                              "attngen: %s overlaps %s (the caches are written: they must not overlap each "
                              "other or the new rows)",
                              w[i]->name, inr[b].name);
  }
  /* lengths and positions: copied first, then checked; every sequence must fit before any is appended */
  j->len = (int32_t *)malloc((size_t)a->batch * sizeof(int32_t));
  if (!j->len) return attngen_fail(ATTNGEN_ERR_NOMEM, "attngen: out of memory");
  memcpy(j->len, in->cache_len, (size_t)a->batch * sizeof(int32_t));
  if (in->pos) {
    if (mul_size((size_t)a->batch, (size_t)a->n_new, &npos) || npos > (size_t)PTRDIFF_MAX / sizeof(int32_t)) {
      append_job_free(j);
      return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: pos (batch %d x n_new %d) is too large", a->batch, a->n_new);
    }
    j->pos = (int32_t *)malloc(npos * sizeof(int32_t));
    if (!j->pos) {
      append_job_free(j);
      return attngen_fail(ATTNGEN_ERR_NOMEM, "attngen: out of memory");
    }
    memcpy(j->pos, in->pos, npos * sizeof(int32_t));
  }
  for (b = 0; b < a->batch; ++b)
    if (j->len[b] < 0 || j->len[b] > a->kv_capacity) {
      st = attngen_fail(ATTNGEN_ERR_LENGTHS, "attngen: cache_len[%d] = %d is outside [0, kv_capacity = %d]", b,
                        (int)j->len[b], a->kv_capacity);
      append_job_free(j);
      return st;
    }
  for (b = 0; b < a->batch; ++b) {
    if (j->len[b] > a->kv_capacity - a->n_new) {
      st = attngen_fail(ATTNGEN_ERR_CAPACITY,
                        "attngen: sequence %d holds %d of kv_capacity %d rows: %d more do not fit "
                        "(nothing was appended)",
                        b, (int)j->len[b], a->kv_capacity, a->n_new);
      append_job_free(j);
      return st;
    }
    if (j->len[b] > j->max_len) j->max_len = j->len[b];
  }
  if (paged) /* every new row's page: given (else the capacity ends there) and in the pools */
    for (b = 0; b < a->batch; ++b)
      if ((st = attngen_check_block_table(&a->pages, b, j->len[b], j->len[b] + a->n_new, 1))) {
        append_job_free(j);
        return st;
      }
  return ATTNGEN_OK;
}

/* One fp32 row x of d elements into row `row` of sequence b, kv head h of the K (v = 0) or V (v = 1) cache, whose
 * elements start at `base`, in the cache's type (attngen_kv_encode_row: copied, rounded, or quantized per scale
 * group). */
static void kv_row_store(const attngen_append_args *a, attngen_kv_dtype t, unsigned char *base, int d, int v, int b,
                         ptrdiff_t row, int h, const float *x)
{
  const attngen_strides *st = v ? &a->v_cache_stride : &a->k_cache_stride;
  const ptrdiff_t off = attngen_row_offset(&a->pages, st, b, row) + h * st->head;
  unsigned char *y = base + off * attngen_kv_dtype_bytes(t);
  float *sc = NULL;
  if (attngen_kv_scales_per_row(t, d)) {
    const attngen_strides *ss = v ? &a->v_cache_scale_stride : &a->k_cache_scale_stride;
    sc = (v ? a->v_cache_scale : a->k_cache_scale) + attngen_row_offset(&a->pages, ss, b, row) + h * ss->head;
  }
  attngen_kv_encode_row(t, x, d, y, sc);
}

/* Writes the checked append: for each new token its K row, rotated by its position (RoPE kernels), and its V
 * row. cs_all: the tokens' cos/sin [batch][n_new][rotary_dim] when the caller has them (the step shares its
 * plan's), else NULL and cs_tmp [n_new][rotary_dim] plus w (attngen_rope_cos_sin's scratch) to compute them. */
static void append_write(const attngen_kernel *kernel, const append_job *j, const float *cs_all, float *cs_tmp,
                         double *w, float *krow)
{
  const attngen_append_args *a = &j->a;
  const attngen_rope *r = &kernel->params.rope;
  const int kvh = kernel->shape.kv_heads, d = kernel->shape.head_dim, n = a->n_new;
  const int rope = r->style != ATTNGEN_ROPE_NONE;
  const attngen_kv_dtype t = kernel->shape.kv_dtype;
  const size_t rot = rope ? (size_t)r->rotary_dim : 0;
  const attngen_kv_encoding e = attngen_kv_dtype_encoding(t);
  const void *kvp[KVP_COUNT];
  unsigned char *kbase, *vbase;
  int b, i, h;
  append_kv_pointers(a, kvp);
  /* the cache fields of attngen_append_args are writable; the KVP list holds every field as const */
  kbase = (unsigned char *)kvp[KVP_K(e)], vbase = (unsigned char *)kvp[KVP_V(e)];
  for (b = 0; b < a->batch; ++b) {
    const float *cs = NULL;
    if (rope) {
      if (cs_all) {
        cs = cs_all + (size_t)b * (size_t)n * rot;
      } else {
        attngen_rope_cos_sin(r, j->pos ? j->pos + (size_t)b * (size_t)n : NULL, j->len[b], n, cs_tmp, w);
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
        kv_row_store(a, t, kbase, d, 0, b, row, h, rope ? krow : kn);
        kv_row_store(a, t, vbase, d, 1, b, row, h, vn);
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
      return attngen_fail(ATTNGEN_ERR_NOMEM, "attngen: out of memory for the RoPE cos/sin of %d tokens", args->n_new);
    }
  }
  append_write(kernel, &j, NULL, cs, w, krow);
  free(cs);
  free(w);
  append_job_free(&j);
  return ATTNGEN_OK;
}

/* The step: the append's checks, the attention's (attngen_plan_create: attngen_check_args), then the append, then the
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
  size_t eq;
  addr_range qr;
  int st, b, t, n, uniform = 1, rope;
  if (!s) return attngen_fail(ATTNGEN_ERR_NULL, "attngen: step args are NULL");
  memset(&qr, 0, sizeof qr);
  if ((st = append_check(kernel, &s->kv, &j))) return st;
  n = j.a.n_new;
  features = attngen_mask_features(kernel->shape.mask);
  for (b = 1; b < j.a.batch; ++b) uniform &= j.len[b] == j.len[0];
  if (!(features & ATTNGEN_FEATURE_CAUSAL) && (n > 1 || (!(features & ATTNGEN_FEATURE_KV_LENS) && !uniform))) {
    st = attngen_fail(ATTNGEN_ERR_SHAPE, "attngen: attngen_step needs a causal kernel for %s (kernel %s has mask %s)",
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
  a.kv_capacity = j.a.pages.block_table ? 0 : j.a.kv_capacity; /* paged: the block table's */
  a.pages = j.a.pages;
  a.q = s->q;
  cache_as_args(&j.a, &a);
  a.o = s->o;
  a.q_stride = s->q_stride;
  a.o_stride = s->o_stride;
  a.kv_lens = kv_lens;
  a.scale = s->scale;
  a.lse = s->lse;
  a.window = s->window, a.sink_tokens = s->sink_tokens, a.softcap = s->softcap;
  a.alibi_slopes = s->alibi_slopes, a.sinks = s->sinks;
  a.q_pos = rope ? (j.pos ? j.pos : q_pos) : NULL;
  nthreads = attngen_run_threads(nthreads);
  if ((st = attngen_plan_create_at(kernel, &a, j.len, nthreads, &p))) goto out;
  /* q is read after the append wrote the caches: it must not overlap them */
  if ((st = attngen_tensor_extent("q", "n_new", &p->args.q_stride, a.batch, n, kernel->shape.heads,
                                  kernel->shape.head_dim, &eq)) ||
      (st = attngen_make_range("q", a.q, eq, sizeof(float), &qr)))
    goto out;
  if ((qr.lo < j.k_cache.hi && j.k_cache.lo < qr.hi) || (qr.lo < j.v_cache.hi && j.v_cache.lo < qr.hi)) {
    st = attngen_fail(ATTNGEN_ERR_ALIAS, "attngen: q overlaps %s (the step writes the caches before it reads q)",
                      qr.lo < j.k_cache.hi && j.k_cache.lo < qr.hi ? "k_cache" : "v_cache");
    goto out;
  }
  append_write(kernel, &j, rope ? p->rope_cs : NULL, NULL, NULL, krow);
  st = attngen_plan_execute(p, nthreads);
  goto out;
nomem:
  st = attngen_fail(ATTNGEN_ERR_NOMEM, "attngen: out of memory");
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

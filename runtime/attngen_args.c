/* SPDX-License-Identifier: MIT */
/* attngen runtime: default strides and the checks of a call's arguments (sizes, strides, extents, aliasing). */
#include "attngen_internal.h"

/* a * n for a default stride; PTRDIFF_MAX when it does not fit (attngen_check_args then refuses the extent), 0 when a
 * size is not positive (left to attngen_check_args to report). */
static ptrdiff_t default_stride(ptrdiff_t a, ptrdiff_t n)
{
  if (a <= 0 || n <= 0) return 0;
  return a > PTRDIFF_MAX / n ? PTRDIFF_MAX : a * n;
}

/* The dense token-major default of each zero stride: head = head_dim, seq = heads * head_dim, batch = rows * seq. */
void attngen_fill_default_strides(attngen_strides *st, int heads, int head_dim, ptrdiff_t rows)
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
  if (a->pages.block_table) cap = a->pages.page_size; /* paged: a "batch" of the K/V tensors is a page */
  attngen_fill_default_strides(&a->q_stride, s->heads, s->head_dim, a->q_len);
  attngen_fill_default_strides(&a->o_stride, s->heads, s->head_dim, a->q_len);
  attngen_fill_default_strides(&a->k_stride, s->kv_heads, s->head_dim, cap);
  attngen_fill_default_strides(&a->v_stride, s->kv_heads, s->head_dim, cap);
  if ((unsigned)s->kv_dtype < ATTNGEN_KV_COUNT_ && s->head_dim > 0 &&
      attngen_kv_scales_per_row(s->kv_dtype, s->head_dim)) {
    const int groups = attngen_kv_scales_per_row(s->kv_dtype, s->head_dim);
    attngen_fill_default_strides(&a->k_scale_stride, s->kv_heads, groups, cap);
    attngen_fill_default_strides(&a->v_scale_stride, s->kv_heads, groups, cap);
  }
}

int attngen_check_strides(const char *what, const attngen_strides *st)
{
  if (st->batch < 0 || st->seq < 0 || st->head < 0)
    return attngen_fail(ATTNGEN_ERR_STRIDE, "attngen: %s strides must be non-negative (batch %td, seq %td, head %td)",
                        what, st->batch, st->seq, st->head);
  return ATTNGEN_OK;
}

/* The rows (batch, row, head) of a tensor that is written must not overlap (non-negative strides): sorted by
 * stride, each must step over the whole block of the dimensions below it. */
int attngen_rows_disjoint(const char *what, const attngen_strides *st, int n_batch, int n_rows, int n_heads, int d)
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
      return attngen_fail(ATTNGEN_ERR_STRIDE, "attngen: %s strides (batch %td, seq %td, head %td) make rows overlap",
                          what, st->batch, st->seq, st->head);
    if (mul_size((size_t)s[i], (size_t)n[i], &span))
      return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: %s strides (batch %td, seq %td, head %td) overflow size_t", what,
                          st->batch, st->seq, st->head);
  }
  return ATTNGEN_OK;
}

/* Output rows (batch, query, head) must not overlap, or threads would race and results would be garbage. */
static int check_output_strides(const attngen_shape *s, const attngen_args *a)
{
  return attngen_rows_disjoint("output", &a->o_stride, a->batch, a->q_len, s->heads, s->head_dim);
}

/* Extent in floats of a [n0][n1][n2][d] tensor with non-negative strides (n0, n1, n2, d >= 1): the offset of
 * its last element + 1. Refused when it, or any product or sum on the way, exceeds ATTNGEN_MAX_FLOATS. */
int attngen_tensor_extent(const char *what, const char *rows_name, const attngen_strides *st, int n0, int n1, int n2,
                         int d, size_t *out)
{
  const ptrdiff_t s[3] = { st->batch, st->seq, st->head };
  const int n[3] = { n0, n1, n2 };
  size_t e = (size_t)d, t;
  int i;
  for (i = 0; i < 3; ++i)
    if (mul_size((size_t)(n[i] - 1), (size_t)s[i], &t) || add_size(e, t, &e) || e > ATTNGEN_MAX_FLOATS)
      return attngen_fail(ATTNGEN_ERR_SIZE,
                          "attngen: %s spans more than PTRDIFF_MAX bytes: (batch %d - 1) * batch stride %td + "
                          "(%s %d - 1) * seq stride %td + (heads %d - 1) * head stride %td + head_dim %d floats",
                          what, n0, st->batch, rows_name, n1, st->seq, n2, st->head, d);
  *out = e;
  return ATTNGEN_OK;
}

int attngen_make_range(const char *name, const void *p, size_t floats, size_t elem, addr_range *r)
{
  size_t bytes = floats * elem; /* floats <= ATTNGEN_MAX_FLOATS: no overflow */
  r->name = name;
  r->lo = (uintptr_t)p;
  if (r->lo > UINTPTR_MAX - bytes)
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: %s (%zu bytes at %p) runs past the end of the address space", name,
                        bytes, p);
  r->hi = r->lo + bytes;
  return ATTNGEN_OK;
}

#define KVP_NAMES_(F, f, api, stored, scale_max) "k_" #f, "v_" #f,
#define KVP_CACHE_NAMES_(F, f, api, stored, scale_max) "k_cache_" #f, "v_cache_" #f,
const char *const attngen_kvp_names[KVP_COUNT] = { "k", "v", ATTNGEN_KV_ENCODING_LIST(KVP_NAMES_) "k_scale",
                                                   "v_scale" };
const char *const attngen_kvp_cache_names[KVP_COUNT] = { "k_cache", "v_cache",
                                                         ATTNGEN_KV_ENCODING_LIST(KVP_CACHE_NAMES_) "k_cache_scale",
                                                         "v_cache_scale" };

/* The fields type t reads: its K and V (and scales: a type with scale groups), as KVP_ indices; returns how many. */
int attngen_kv_fields(attngen_kv_dtype t, int f[4])
{
  const attngen_kv_encoding e = attngen_kv_dtype_encoding(t);
  f[0] = KVP_K(e), f[1] = KVP_V(e);
  if (!attngen_kv_group(t, 1)) return 2;
  f[2] = KVP_SCALE_K, f[3] = KVP_SCALE_V;
  return 4;
}

static const char *kv_name(int t) { return attngen_kv_dtype_name((attngen_kv_dtype)t); }

/* The types whose field p[i] is, for a message: "f16", "int8, int8_g64 or int8_g32", "any type with scales". */
static const char *kvp_owner(int i, char *buf, size_t cap)
{
  int t, n = 0, last = -1, len = 0;
  if (i >= KVP_SCALE_K) return "any type with scales";
  buf[0] = '\0';
  for (t = 0; t < ATTNGEN_KV_COUNT_; ++t) {
    if (KVP_K(attngen_kv_dtype_encoding((attngen_kv_dtype)t)) != (i & ~1)) continue;
    if (last >= 0 && len >= 0 && (size_t)len < cap) /* the one before, now known not to be the last */
      len += snprintf(buf + len, cap - (size_t)len, "%s%s", n > 1 ? ", " : "", kv_name(last));
    last = t, ++n;
  }
  if (last >= 0 && len >= 0 && (size_t)len < cap)
    snprintf(buf + len, cap - (size_t)len, "%s%s", n > 1 ? " or " : "", kv_name(last));
  return buf;
}

/* p[KVP_*]: the call's pointers (names: attngen_kvp_names or attngen_kvp_cache_names). NULL ones of type t:
 * ATTNGEN_ERR_NULL; another type's set: ATTNGEN_ERR_DTYPE. */
int attngen_check_kv_pointers(attngen_kv_dtype t, const void *const p[KVP_COUNT], const char *kernel_name,
                             const char *const names[KVP_COUNT])
{
  int f[4], n = attngen_kv_fields(t, f), i, j, wanted;
  char owner[96];
  /* another type's field first: a cache of the wrong type is ATTNGEN_ERR_DTYPE, whatever else is missing */
  for (i = 0; i < KVP_COUNT; ++i) {
    for (wanted = 0, j = 0; j < n; ++j) wanted |= f[j] == i;
    if (!wanted && p[i])
      return attngen_fail(ATTNGEN_ERR_DTYPE,
                          "attngen: kernel %s reads a K/V cache of type %s, but %s is set (a field of "
                          "type %s; the fields of other types must be NULL)",
                          kernel_name, attngen_kv_dtype_name(t), names[i], kvp_owner(i, owner, sizeof owner));
  }
  for (i = 0; i < n; ++i)
    if (!p[f[i]])
      return attngen_fail(ATTNGEN_ERR_NULL, "attngen: kernel %s reads a K/V cache of type %s: %s must not be NULL",
                          kernel_name, attngen_kv_dtype_name(t), names[f[i]]);
  return ATTNGEN_OK;
}

void attngen_args_kv_pointers(const attngen_args *a, const void *p[KVP_COUNT])
{
#define KVP_ARGS_(F, f, api, stored, scale_max)                                                                        \
  p[KVP_K(ATTNGEN_KV_ENC_##F)] = a->k_##f, p[KVP_V(ATTNGEN_KV_ENC_##F)] = a->v_##f;
  p[KVP_K(ATTNGEN_KV_ENC_F32)] = a->k, p[KVP_V(ATTNGEN_KV_ENC_F32)] = a->v;
  ATTNGEN_KV_ENCODING_LIST(KVP_ARGS_)
  p[KVP_SCALE_K] = a->k_scale, p[KVP_SCALE_V] = a->v_scale;
#undef KVP_ARGS_
}

/* attngen_args_set_kv and attngen_append_args_set_kv: t a type, scales only for a type with them. */
static int check_set_kv(const void *a, attngen_kv_dtype t, const void *k_scale, const void *v_scale, const char *fn)
{
  if (!a) return attngen_fail(ATTNGEN_ERR_NULL, "attngen: %s: args are NULL", fn);
  return attngen_check_kv_dtype(fn, t, k_scale || v_scale);
}

int attngen_args_set_kv(attngen_args *a, attngen_kv_dtype t, const void *k, const void *v, const float *k_scale,
                        const float *v_scale)
{
  int st = check_set_kv(a, t, k_scale, v_scale, "attngen_args_set_kv");
  attngen_kv_encoding e;
  if (st) return st;
  e = attngen_kv_dtype_encoding(t);
  a->k = e == ATTNGEN_KV_ENC_F32 ? (const float *)k : NULL;
  a->v = e == ATTNGEN_KV_ENC_F32 ? (const float *)v : NULL;
#define SET_KV_(F, f, api, stored, scale_max)                                                                          \
  a->k_##f = e == ATTNGEN_KV_ENC_##F ? (const api *)k : NULL;                                                          \
  a->v_##f = e == ATTNGEN_KV_ENC_##F ? (const api *)v : NULL;
  ATTNGEN_KV_ENCODING_LIST(SET_KV_)
#undef SET_KV_
  a->k_scale = k_scale, a->v_scale = v_scale;
  return ATTNGEN_OK;
}

int attngen_append_args_set_kv(attngen_append_args *a, attngen_kv_dtype t, void *k, void *v, float *k_scale,
                               float *v_scale)
{
  int st = check_set_kv(a, t, k_scale, v_scale, "attngen_append_args_set_kv");
  attngen_kv_encoding e;
  if (st) return st;
  e = attngen_kv_dtype_encoding(t);
  a->k_cache = e == ATTNGEN_KV_ENC_F32 ? (float *)k : NULL;
  a->v_cache = e == ATTNGEN_KV_ENC_F32 ? (float *)v : NULL;
#define SET_KV_(F, f, api, stored, scale_max)                                                                          \
  a->k_cache_##f = e == ATTNGEN_KV_ENC_##F ? (api *)k : NULL;                                                          \
  a->v_cache_##f = e == ATTNGEN_KV_ENC_##F ? (api *)v : NULL;
  ATTNGEN_KV_ENCODING_LIST(SET_KV_)
#undef SET_KV_
  a->k_cache_scale = k_scale, a->v_cache_scale = v_scale;
  return ATTNGEN_OK;
}

/* Every extent, in checked arithmetic, and the aliasing rule: outputs must not overlap inputs or each other
 * (a conservative test on whole address ranges, documented in attngen.h). a has its default strides. */
static int check_extents(const attngen_shape *s, const attngen_args *a, int reads_lens)
{
  size_t eq = 0, ek = 0, ev = 0, eo = 0, el = 0; /* (initialized: gcc -O3 cannot see attngen_tensor_extent set them) */
  const size_t kv_bytes = (size_t)attngen_kv_dtype_bytes(s->kv_dtype);
  const int groups = attngen_kv_scales_per_row(s->kv_dtype, s->head_dim);
  const void *kvp[KVP_COUNT];
  addr_range out[2], in[7];
  int nout = 0, nin = 0, i, j, st;
  /* K/V rows: kv_len of each sequence, or (paged) every page of the pools */
  const int paged = a->pages.block_table != NULL;
  const int kv_n0 = paged ? a->pages.num_pages : a->batch, kv_n1 = paged ? a->pages.page_size : a->kv_len;
  const char *kv_rows = paged ? "page_size" : "kv_len";
  if ((st = attngen_tensor_extent("q", "q_len", &a->q_stride, a->batch, a->q_len, s->heads, s->head_dim, &eq)) ||
      (st = attngen_tensor_extent("k", kv_rows, &a->k_stride, kv_n0, kv_n1, s->kv_heads, s->head_dim, &ek)) ||
      (st = attngen_tensor_extent("v", kv_rows, &a->v_stride, kv_n0, kv_n1, s->kv_heads, s->head_dim, &ev)) ||
      (st = attngen_tensor_extent("o", "q_len", &a->o_stride, a->batch, a->q_len, s->heads, s->head_dim, &eo)))
    return st;
  if (a->lse &&
      (mul_size((size_t)a->batch, (size_t)s->heads, &el) || mul_size(el, (size_t)a->q_len, &el) ||
       el > ATTNGEN_MAX_FLOATS))
    return attngen_fail(ATTNGEN_ERR_SIZE,
                        "attngen: lse (batch %d * heads %d * q_len %d floats) spans more than PTRDIFF_MAX bytes",
                        a->batch, s->heads, a->q_len);
  if ((st = attngen_make_range("o", a->o, eo, sizeof(float), &out[nout++]))) return st;
  if (a->lse && (st = attngen_make_range("lse", a->lse, el, sizeof(float), &out[nout++]))) return st;
  attngen_args_kv_pointers(a, kvp);
  {
    int f[4];
    attngen_kv_fields(s->kv_dtype, f);
    if ((st = attngen_make_range("q", a->q, eq, sizeof(float), &in[nin++])) ||
        (st = attngen_make_range(attngen_kvp_names[f[0]], kvp[f[0]], ek, kv_bytes, &in[nin++])) ||
        (st = attngen_make_range(attngen_kvp_names[f[1]], kvp[f[1]], ev, kv_bytes, &in[nin++])))
      return st;
  }
  if (groups) { /* int8 scales: [batch][kv rows][kv_heads][head_dim / group] through their own strides */
    size_t eks = 0, evs = 0;
    if ((st = attngen_tensor_extent("k_scale", kv_rows, &a->k_scale_stride, kv_n0, kv_n1, s->kv_heads, groups,
                                    &eks)) ||
        (st = attngen_tensor_extent("v_scale", kv_rows, &a->v_scale_stride, kv_n0, kv_n1, s->kv_heads, groups,
                                    &evs)) ||
        (st = attngen_make_range("k_scale", a->k_scale, eks, sizeof(float), &in[nin++])) ||
        (st = attngen_make_range("v_scale", a->v_scale, evs, sizeof(float), &in[nin++])))
      return st;
  }
  if (reads_lens && (st = attngen_make_range("kv_lens", a->kv_lens, (size_t)a->batch, sizeof(int32_t), &in[nin++])))
    return st;
  if (paged && (st = attngen_make_range("pages.block_table", a->pages.block_table,
                                        (size_t)a->batch * (size_t)a->pages.max_pages, sizeof(int32_t), &in[nin++])))
    return st;
  for (i = 0; i < nout; ++i) {
    for (j = i + 1; j < nout; ++j)
      if (out[i].lo < out[j].hi && out[j].lo < out[i].hi)
        return attngen_fail(ATTNGEN_ERR_ALIAS,
                            "attngen: %s and %s overlap (outputs must not overlap inputs or each other)", out[i].name,
                            out[j].name);
    for (j = 0; j < nin; ++j)
      if (out[i].lo < in[j].hi && in[j].lo < out[i].hi)
        return attngen_fail(ATTNGEN_ERR_ALIAS,
                            "attngen: output %s overlaps input %s (outputs must not overlap inputs or each other)",
                            out[i].name, in[j].name);
  }
  return ATTNGEN_OK;
}

/* Validates everything and returns a normalized copy (default strides, capacity, scale). */
int attngen_check_args(const attngen_kernel *kern, const attngen_args *in, attngen_args *a)
{
  return attngen_check_args_at(kern, in, NULL, a);
}

int attngen_check_args_at(const attngen_kernel *kern, const attngen_args *in, const int32_t *offsets, attngen_args *a)
{
  const attngen_kernel_info *info;
  const attngen_shape *s;
  int st, b, reads_lens;
  if (!kern || !kern->info) return attngen_fail(ATTNGEN_ERR_NULL, "attngen: kernel is NULL (select one first)");
  if (!in) return attngen_fail(ATTNGEN_ERR_NULL, "attngen: args is NULL");
  info = kern->info;
  s = &kern->shape;
  if ((st = attngen_check_shape(s))) return st;
  if ((info->heads && (info->heads != s->heads || info->kv_heads != s->kv_heads || info->head_dim != s->head_dim)) ||
      info->phase != s->phase || (info->heads && info->mask != s->mask))
    return attngen_fail(ATTNGEN_ERR_SHAPE, "attngen: kernel %s does not match the bound shape h%d kv%d d%d %s %s",
                        info->name, s->heads, s->kv_heads, s->head_dim, attngen_mask_name(s->mask),
                        attngen_phase_name(s->phase));
  if ((in->heads && in->heads != s->heads) || (in->kv_heads && in->kv_heads != s->kv_heads) ||
      (in->head_dim && in->head_dim != s->head_dim)) {
    /* name only what the caller set: a field left at 0 is not part of the check */
    char said[3][32];
    const int v[3] = { in->heads, in->kv_heads, in->head_dim };
    for (b = 0; b < 3; ++b)
      if (v[b]) snprintf(said[b], sizeof said[b], "%d", v[b]);
      else snprintf(said[b], sizeof said[b], "(unset)");
    return attngen_fail(ATTNGEN_ERR_SHAPE,
                        "attngen: args say heads %s, kv_heads %s, head_dim %s but kernel %s is for heads %d, "
                        "kv_heads %d, head_dim %d",
                        said[0], said[1], said[2], info->name, s->heads, s->kv_heads, s->head_dim);
  }
  if (info->page_size != s->page_size && !(info->page_size == 0 && info->heads == 0 && s->phase == ATTNGEN_PHASE_PREFILL))
    return attngen_fail(ATTNGEN_ERR_SHAPE, "attngen: kernel %s reads %s cache, the bound shape says page_size %d",
                        info->name, info->page_size ? "a paged" : "a contiguous", s->page_size);
  if (info->kv_dtype != s->kv_dtype)
    return attngen_fail(ATTNGEN_ERR_SHAPE, "attngen: kernel %s reads a K/V cache of type %s, the bound shape says %s",
                        info->name, attngen_kv_dtype_name(info->kv_dtype), attngen_kv_dtype_name(s->kv_dtype));
  if (!in->q || !in->o)
    return attngen_fail(ATTNGEN_ERR_NULL, "attngen: q and o must not be NULL (q=%p o=%p)", (const void *)in->q,
                        (void *)in->o);
  {
    const void *kvp[KVP_COUNT];
    attngen_args_kv_pointers(in, kvp);
    if ((st = attngen_check_kv_pointers(s->kv_dtype, kvp, info->name, attngen_kvp_names))) return st;
  }
  if (in->batch <= 0 || in->q_len <= 0 || in->kv_len <= 0)
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: batch (%d), q_len (%d) and kv_len (%d) must be positive", in->batch,
                        in->q_len, in->kv_len);
  if (in->kv_capacity < 0)
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: kv_capacity (%d) is negative", in->kv_capacity);
  if (in->q_len > ATTNGEN_MAX_LEN || in->kv_len > ATTNGEN_MAX_LEN || in->kv_capacity > ATTNGEN_MAX_LEN)
    return attngen_fail(
        ATTNGEN_ERR_SIZE, "attngen: %s (%d) is above ATTNGEN_MAX_LEN (%d)",
        in->q_len > ATTNGEN_MAX_LEN ? "q_len" : in->kv_len > ATTNGEN_MAX_LEN ? "kv_len" : "kv_capacity",
        in->q_len > ATTNGEN_MAX_LEN ? in->q_len : in->kv_len > ATTNGEN_MAX_LEN ? in->kv_len : in->kv_capacity,
        ATTNGEN_MAX_LEN);
  if (in->kv_capacity > 0 && in->kv_len > in->kv_capacity)
    return attngen_fail(ATTNGEN_ERR_CAPACITY, "attngen: kv_len (%d) exceeds kv_capacity (%d)", in->kv_len,
                        in->kv_capacity);
  if (s->phase == ATTNGEN_PHASE_DECODE && in->q_len > ATTNGEN_DECODE_MAX_Q)
    return attngen_fail(ATTNGEN_ERR_SHAPE, "attngen: decode kernel %s takes q_len <= %d, got %d (use a prefill kernel)",
                        info->name, ATTNGEN_DECODE_MAX_Q, in->q_len);
  if (!(in->scale >= 0.0f) || isinf(in->scale))
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: scale must be finite and >= 0 (0 = default), got %g",
                        (double)in->scale);
  reads_lens = (attngen_mask_features(s->mask) & ATTNGEN_FEATURE_KV_LENS) != 0; /* the spec decides, not the name */
  if (reads_lens && !in->kv_lens)
    return attngen_fail(ATTNGEN_ERR_LENGTHS, "attngen: mask %s needs kv_lens (valid keys per sequence)",
                        attngen_mask_name(s->mask));
  if ((st = attngen_check_pages(s, &in->pages, in->kv_capacity, in->batch))) return st;
  *a = *in;
  if (a->pages.block_table) a->kv_capacity = a->pages.max_pages * a->pages.page_size; /* checked to fit */
  if (a->kv_len > a->kv_capacity && a->kv_capacity > 0)
    return attngen_fail(ATTNGEN_ERR_CAPACITY, "attngen: kv_len (%d) exceeds the block table's max_pages (%d) x page_size (%d)",
                        a->kv_len, a->pages.max_pages, a->pages.page_size);
  if (a->kv_capacity == 0) a->kv_capacity = a->kv_len;
  if ((st = attngen_check_strides("q", &a->q_stride)) || (st = attngen_check_strides("k", &a->k_stride)) ||
      (st = attngen_check_strides("v", &a->v_stride)) || (st = attngen_check_strides("o", &a->o_stride)) ||
      (st = attngen_check_strides("k_scale", &a->k_scale_stride)) ||
      (st = attngen_check_strides("v_scale", &a->v_scale_stride)))
    return st;
  attngen_args_default_strides(s, a);
  if ((st = check_extents(s, a, reads_lens))) return st;
  if ((st = check_output_strides(s, a))) return st;
  if ((st = attngen_resolve_features(kern, a))) return st;
  /* last: kv_lens is read only once everything else, batch included, has passed */
  if (reads_lens)
    for (b = 0; b < a->batch; ++b)
      if (a->kv_lens[b] < 0 || a->kv_lens[b] > a->kv_len)
        return attngen_fail(ATTNGEN_ERR_LENGTHS, "attngen: kv_lens[%d] = %d is outside [0, kv_len = %d]", b,
                            a->kv_lens[b], a->kv_len);
  if (a->pages.block_table) /* the pages of the rows each sequence reads */
    for (b = 0; b < a->batch; ++b) {
      int rows = reads_lens ? a->kv_lens[b] : a->kv_len;
      if (offsets && (attngen_mask_features(s->mask) & ATTNGEN_FEATURE_CAUSAL) && offsets[b] + a->q_len < rows)
        rows = offsets[b] + a->q_len;
      if ((st = attngen_check_block_table(&a->pages, b, 0, rows, 0))) return st;
    }
  return ATTNGEN_OK;
}

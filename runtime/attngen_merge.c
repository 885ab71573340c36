/* SPDX-License-Identifier: MIT */
/* attngen runtime: merging partial attention states through the log-sum-exp, one row at a time (the split-KV merge
 * of attngen_plan_finish), and attngen_merge_states, the same merge for a caller's own partial results. */
#include "attngen_internal.h"

/* The offset of row (b, i, h) through strides st. */
static ptrdiff_t off(const attngen_strides *st, int b, int i, int h)
{
  return b * st->batch + i * st->seq + h * st->head;
}

/* acc[c] += w * o[c], and out[c] = acc[c] / sum, for c < d: in runs of 8 independent lanes a compiler vectorizes
 * at -O2 (each element's arithmetic, and so its bits, as one at a time) */
static void add_scaled(float *restrict acc, const float *restrict o, float w, int d)
{
  int c = 0;
  for (; c + 8 <= d; c += 8) {
    acc[c] += w * o[c], acc[c + 1] += w * o[c + 1], acc[c + 2] += w * o[c + 2], acc[c + 3] += w * o[c + 3];
    acc[c + 4] += w * o[c + 4], acc[c + 5] += w * o[c + 5], acc[c + 6] += w * o[c + 6], acc[c + 7] += w * o[c + 7];
  }
  for (; c < d; ++c) acc[c] += w * o[c];
}

static void divide(float *restrict out, const float *restrict acc, float sum, int d)
{
  int c = 0;
  for (; c + 8 <= d; c += 8) {
    out[c] = acc[c] / sum, out[c + 1] = acc[c + 1] / sum, out[c + 2] = acc[c + 2] / sum, out[c + 3] = acc[c + 3] / sum;
    out[c + 4] = acc[c + 4] / sum, out[c + 5] = acc[c + 5] / sum, out[c + 6] = acc[c + 6] / sum;
    out[c + 7] = acc[c + 7] / sum;
  }
  for (; c < d; ++c) out[c] = acc[c] / sum;
}

/* With M = max(sink, max m_s) and w_s = exp(m_s - M) * l_s: out = Σ w_s o_s / (exp(sink - M) + Σ w_s) and lse =
 * M + log of that denominator, in state order. sink is a logit with no value row that joins the denominator once
 * (attention sinks; -INFINITY: none). A state with l_s = 0 (no key) weighs 0 and its o is not read; every state
 * empty and no sink: zeros and -INFINITY; a NaN max, sum or sink: NaN. The sum goes through set->acc, so out may be
 * one of the states' rows. */
float attngen_merge_row(const attngen_merge_set *set, int b, int i, int h, float sink, float *out)
{
  const int n = set->n, d = set->d;
  float *acc = set->acc;
  float m = sink, sum;
  int s, c, nan = sink != sink;
  for (s = 0; s < n && !nan; ++s) {
    const ptrdiff_t k = off(&set->ms_st[s], b, i, h);
    const float ms = set->m[s][k], l = set->l ? set->l[s][k] : 1.0f;
    if (l != l || ms != ms) nan = 1; /* a NaN score: the row is NaN, as in the reference */
    else if (ms > m) m = ms;
  }
  if (nan) {
    for (c = 0; c < d; ++c) out[c] = NAN;
    return NAN;
  }
  if (m == -INFINITY) {
    for (c = 0; c < d; ++c) out[c] = 0.0f;
    return -INFINITY;
  }
  sum = expf(sink - m);
  for (c = 0; c < d; ++c) acc[c] = 0.0f;
  for (s = 0; s < n; ++s) {
    const ptrdiff_t k = off(&set->ms_st[s], b, i, h);
    const float l = set->l ? set->l[s][k] : 1.0f;
    const float w = l > 0.0f ? expf(set->m[s][k] - m) * l : 0.0f;
    if (w == 0.0f) continue; /* add nothing, not 0 x its O */
    sum += w;
    add_scaled(acc, set->o[s] + off(&set->o_st[s], b, i, h), w, d);
  }
  divide(out, acc, sum, d);
  return m + logf(sum);
}

static int overlap(const addr_range *a, const addr_range *b) { return a->lo < b->hi && b->lo < a->hi; }

static int same_strides(const attngen_strides *a, const attngen_strides *b)
{
  return a->batch == b->batch && a->seq == b->seq && a->head == b->head;
}

/* lse's dense default [batch][heads][q_len] for zero fields; PTRDIFF_MAX when it does not fit (then refused). */
static void lse_default_strides(attngen_strides *st, int heads, int q_len)
{
  if (!st->head) st->head = q_len;
  if (!st->seq) st->seq = 1;
  if (!st->batch) st->batch = heads > PTRDIFF_MAX / q_len ? PTRDIFF_MAX : (ptrdiff_t)heads * q_len;
}

/* One tensor's strides (given or 0 = dense), checked, defaulted, and its address range. d: head_dim, or 1 (lse). */
static int tensor(const char *what, const void *p, const attngen_strides *given, int d, const attngen_merge_args *a,
                  attngen_strides *st, addr_range *r)
{
  size_t e = 0;
  int status;
  static const attngen_strides zero = { 0, 0, 0 };
  *st = given ? *given : zero;
  if ((status = attngen_check_strides(what, st))) return status;
  if (d == 1) lse_default_strides(st, a->heads, a->q_len);
  else attngen_fill_default_strides(st, a->heads, d, a->q_len);
  if ((status = attngen_tensor_extent(what, "q_len", st, a->batch, a->q_len, a->heads, d, &e))) return status;
  return attngen_make_range(what, p, e, sizeof(float), r);
}

/* Sizes, strides, extents and aliasing (see attngen.h). st: [2n + 2] strides, filled: o_in, lse_in, o, lse. */
static int check_merge(const attngen_merge_args *a, attngen_strides *st)
{
  const int n = a->n;
  attngen_strides *const o_st = st + 2 * n, *const l_st = st + 2 * n + 1;
  addr_range ro, rl, r;
  char name[40];
  int s, status;
  if ((status = tensor("o", a->o, &a->o_stride, a->head_dim, a, o_st, &ro)) ||
      (status = attngen_rows_disjoint("o", o_st, a->batch, a->q_len, a->heads, a->head_dim)))
    return status;
  if (a->lse && ((status = tensor("lse", a->lse, &a->lse_stride, 1, a, l_st, &rl)) ||
                 (status = attngen_rows_disjoint("lse", l_st, a->batch, a->q_len, a->heads, 1))))
    return status;
  if (a->lse && overlap(&ro, &rl)) return attngen_fail(ATTNGEN_ERR_ALIAS, "attngen_merge_states: o and lse overlap");
  /* an output may be exactly one input (each row is read before it is written), else touch no input */
  for (s = 0; s < n; ++s) {
    snprintf(name, sizeof name, "o_in[%d]", s);
    if ((status = tensor(name, a->o_in[s], a->o_in_stride ? &a->o_in_stride[s] : NULL, a->head_dim, a, &st[s], &r)))
      return status;
    if (overlap(&ro, &r) && !(a->o == a->o_in[s] && same_strides(o_st, &st[s])))
      return attngen_fail(ATTNGEN_ERR_ALIAS, "attngen_merge_states: o overlaps o_in[%d] (it may only be o_in[%d] "
                          "itself, with the same strides)", s, s);
    if (a->lse && overlap(&rl, &r))
      return attngen_fail(ATTNGEN_ERR_ALIAS, "attngen_merge_states: lse overlaps o_in[%d]", s);
    snprintf(name, sizeof name, "lse_in[%d]", s);
    if ((status = tensor(name, a->lse_in[s], a->lse_in_stride ? &a->lse_in_stride[s] : NULL, 1, a, &st[n + s], &r)))
      return status;
    if (overlap(&ro, &r)) return attngen_fail(ATTNGEN_ERR_ALIAS, "attngen_merge_states: o overlaps lse_in[%d]", s);
    if (a->lse && overlap(&rl, &r) && !(a->lse == a->lse_in[s] && same_strides(l_st, &st[n + s])))
      return attngen_fail(ATTNGEN_ERR_ALIAS, "attngen_merge_states: lse overlaps lse_in[%d] (it may only be "
                          "lse_in[%d] itself, with the same strides)", s, s);
  }
  return ATTNGEN_OK;
}

int attngen_merge_states(const attngen_merge_args *a)
{
  attngen_merge_set set;
  attngen_strides *st;
  size_t bytes, acc_bytes;
  int s, b, h, i, status;
  if (!a) return attngen_fail(ATTNGEN_ERR_NULL, "attngen_merge_states: args is NULL");
  if (a->n < 1) return attngen_fail(ATTNGEN_ERR_SIZE, "attngen_merge_states: n (%d) must be at least 1", a->n);
  if (!a->o_in || !a->lse_in || !a->o)
    return attngen_fail(ATTNGEN_ERR_NULL, "attngen_merge_states: o_in, lse_in and o must not be NULL (o_in=%p "
                        "lse_in=%p o=%p)", (const void *)a->o_in, (const void *)a->lse_in, (void *)a->o);
  for (s = 0; s < a->n; ++s)
    if (!a->o_in[s] || !a->lse_in[s])
      return attngen_fail(ATTNGEN_ERR_NULL, "attngen_merge_states: %s[%d] is NULL", a->o_in[s] ? "lse_in" : "o_in", s);
  if (a->batch <= 0 || a->q_len <= 0 || a->heads <= 0 || a->head_dim <= 0 || a->q_len > ATTNGEN_MAX_LEN)
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen_merge_states: batch (%d), heads (%d) and head_dim (%d) must be "
                        "positive, q_len (%d) in [1, ATTNGEN_MAX_LEN]", a->batch, a->heads, a->head_dim, a->q_len);
  /* every state's strides, normalized (2n + 2 of them), then head_dim floats of scratch */
  if (mul_size(2 * (size_t)a->n + 2, sizeof *st, &bytes) || mul_size((size_t)a->head_dim, sizeof(float), &acc_bytes) ||
      add_size(bytes, acc_bytes, &bytes) || !(st = (attngen_strides *)malloc(bytes)))
    return attngen_fail(ATTNGEN_ERR_NOMEM, "attngen_merge_states: out of memory for %d states", a->n);
  if ((status = check_merge(a, st))) {
    free(st);
    return status;
  }
  set.n = a->n;
  set.d = a->head_dim;
  set.o = a->o_in;
  set.m = a->lse_in; /* a log-sum-exp is a max with a sum of 1 */
  set.l = NULL;
  set.o_st = st;
  set.ms_st = st + a->n;
  set.acc = (float *)(st + 2 * a->n + 2); /* after the strides: aligned for floats */
  for (b = 0; b < a->batch; ++b)
    for (h = 0; h < a->heads; ++h)
      for (i = 0; i < a->q_len; ++i) {
        const float lse = attngen_merge_row(&set, b, i, h, -INFINITY, a->o + off(&st[2 * a->n], b, i, h));
        if (a->lse) a->lse[off(&st[2 * a->n + 1], b, i, h)] = lse;
      }
  free(st);
  return ATTNGEN_OK;
}

/* SPDX-License-Identifier: MIT */
/* attngen runtime: decode of a batch whose sequences share a prefix (cascade attention). The prefix's rows are read
 * once for every sequence's queries, stacked as the rows of one sequence; each sequence's own rows are read on their
 * own; the two partial states merge through the log-sum-exp (attngen_merge_states). */
#include "attngen_internal.h"

/* Rows of sequence b after the prefix: kv_lens[b] for the masks that read it, else kv_len. */
static int own_rows(const attngen_kernel *k, const attngen_args *s, int b)
{
  return (attngen_mask_features(k->shape.mask) & ATTNGEN_FEATURE_KV_LENS) && s->kv_lens ? s->kv_lens[b] : s->kv_len;
}

/* Runs args with each sequence's causal offset (query i of sequence b sees keys j <= offsets[b] + i). */
static int run_at(const attngen_kernel *k, const attngen_args *a, const int32_t *offsets, int nthreads)
{
  attngen_plan *p;
  int st = attngen_plan_create_at(k, a, offsets, nthreads, &p);
  if (st) return st;
  st = attngen_plan_execute(p, nthreads);
  attngen_plan_destroy(p);
  return st;
}

/* The prefix pass for sequences [b0, b1): their queries as one sequence's rows, each seeing every prefix row
 * (causal offset prefix rows - 1, kv_lens {prefix rows}); o into o_pre rows, lse into lse_pre [b][h][i]. */
static int prefix_pass(const attngen_kernel *k, const attngen_cascade_args *c, const float *qf, const int32_t *pos,
                       int b0, int b1, float *o_pre, float *lse_tmp, float *lse_pre, int nthreads)
{
  const attngen_args *s = &c->suffix;
  const int H = k->shape.heads, D = k->shape.head_dim, Q = s->q_len, n = (b1 - b0) * Q;
  const int32_t len = c->prefix.kv_len, offset = c->prefix.kv_len - 1;
  attngen_args a = c->prefix;
  int st, b, h, i;
  a.heads = a.kv_heads = a.head_dim = 0;
  a.batch = 1, a.q_len = n, a.kv_capacity = 0;
  a.q = qf + (size_t)b0 * Q * H * D, a.o = o_pre + (size_t)b0 * Q * H * D;
  memset(&a.q_stride, 0, sizeof a.q_stride), memset(&a.o_stride, 0, sizeof a.o_stride);
  a.kv_lens = (attngen_mask_features(k->shape.mask) & ATTNGEN_FEATURE_KV_LENS) ? &len : NULL;
  a.softcap = s->softcap;
  a.scale = s->scale, a.lse = lse_tmp, a.q_pos = pos ? pos + (size_t)b0 * Q : NULL;
  st = run_at(k, &a, &offset, nthreads);
  for (b = b0; b < b1 && !st; ++b) /* [1][H][n] -> [b][H][Q] */
    for (h = 0; h < H; ++h)
      for (i = 0; i < Q; ++i) lse_pre[((size_t)b * H + h) * Q + i] = lse_tmp[(size_t)h * n + (b - b0) * Q + i];
  return st;
}

int attngen_cascade_decode(const attngen_kernel *kernel, const attngen_cascade_args *args, int nthreads)
{
  const attngen_args *s;
  attngen_args own;
  attngen_merge_args m;
  const float *o_in[2], *lse_in[2];
  float *qf = NULL, *o_pre = NULL, *lse_pre = NULL, *lse_tmp = NULL, *o_own = NULL, *lse_own = NULL;
  int32_t *pos = NULL, *offsets = NULL;
  size_t rows, floats;
  int st = ATTNGEN_OK, B, Q, H, D, per, b, i, h;
  if (!kernel || !kernel->info || !args) return attngen_fail(ATTNGEN_ERR_NULL, "attngen: cascade: kernel or args is NULL");
  if (kernel->shape.features & (ATTNGEN_ATTN_WINDOW | ATTNGEN_ATTN_ALIBI | ATTNGEN_ATTN_SINKS))
    return attngen_fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: cascade: kernel %s has a window, ALiBi or sink logits, which "
                        "depend on where the prefix ends or must join the softmax once; run the whole cache instead",
                        kernel->info->name);
  nthreads = attngen_run_threads(nthreads);
  s = &args->suffix;
  if (!s->q || !s->o) return attngen_fail(ATTNGEN_ERR_NULL, "attngen: cascade: suffix.q or suffix.o is NULL");
  if (args->prefix.kv_len < 1 || args->prefix.kv_len > ATTNGEN_MAX_LEN)
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: cascade: prefix.kv_len = %d must be in [1, %d]", args->prefix.kv_len,
                        ATTNGEN_MAX_LEN);
  if (s->batch < 1 || s->q_len < 1 || s->kv_len < 0 || s->q_len > ATTNGEN_MAX_LEN || s->batch > ATTNGEN_MAX_LEN)
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: cascade: suffix batch %d, q_len %d, kv_len %d out of range", s->batch,
                        s->q_len, s->kv_len);
  B = s->batch, Q = s->q_len, H = kernel->shape.heads, D = kernel->shape.head_dim;
  if (kernel->shape.phase == ATTNGEN_PHASE_DECODE && Q > ATTNGEN_DECODE_MAX_Q)
    return attngen_fail(ATTNGEN_ERR_SHAPE, "attngen: cascade: q_len %d exceeds a decode kernel's %d", Q,
                        ATTNGEN_DECODE_MAX_Q);
  /* sequences per prefix pass: as many as a decode kernel's rows take (each pass reads the prefix once) */
  per = kernel->shape.phase == ATTNGEN_PHASE_DECODE ? ATTNGEN_DECODE_MAX_Q / Q : B;
  rows = (size_t)B * Q;
  floats = rows * (size_t)H * (size_t)D;
  qf = (float *)malloc(floats * sizeof(float));
  o_pre = (float *)malloc(floats * sizeof(float));
  o_own = (float *)malloc(floats * sizeof(float));
  lse_pre = (float *)malloc(rows * H * sizeof(float));
  lse_own = (float *)malloc(rows * H * sizeof(float));
  lse_tmp = (float *)malloc((size_t)(per < B ? per : B) * Q * H * sizeof(float));
  pos = (int32_t *)malloc(rows * sizeof(int32_t));
  offsets = (int32_t *)malloc((size_t)B * sizeof(int32_t));
  if (!qf || !o_pre || !o_own || !lse_pre || !lse_own || !lse_tmp || !pos || !offsets) {
    st = attngen_fail(ATTNGEN_ERR_NOMEM, "attngen: cascade: out of memory for %zu query rows", rows);
    goto out;
  }
  /* every query at its place in the whole cache: the caller's positions, else the bottom-right one */
  for (b = 0; b < B; ++b) {
    /* its own rows causal at its own length (bottom-right per sequence, as attngen_step), not at the longest */
    offsets[b] = own_rows(kernel, s, b) - Q;
    for (i = 0; i < Q; ++i) {
      const long long p = s->q_pos ? s->q_pos[(size_t)b * Q + i] : (long long)args->prefix.kv_len + offsets[b] + i;
      if (p < args->prefix.kv_len - 1) { /* it would see only part of the prefix: not one pass for all */
        st = attngen_fail(ATTNGEN_ERR_SHAPE, "attngen: cascade: query %d of sequence %d is at position %lld, inside the "
                          "%d-row prefix; every query must come after it (own rows >= q_len - 1)", i, b, p,
                          args->prefix.kv_len);
        goto out;
      }
      pos[(size_t)b * Q + i] = (int32_t)p;
    }
  }
  /* the sequences' own rows first: their checks (the caller's strides and lengths) run before the prefix's work */
  own = *s;
  own.o = o_own, own.lse = lse_own, own.q_pos = pos;
  memset(&own.o_stride, 0, sizeof own.o_stride);
  if (s->kv_len > 0 && (st = run_at(kernel, &own, offsets, nthreads))) goto out;
  { /* the queries, dense, as one sequence's rows (the caller's strides, a zero field its dense default) */
    attngen_strides q_st = s->q_stride;
    attngen_fill_default_strides(&q_st, H, D, Q);
    for (b = 0; b < B; ++b)
      for (i = 0; i < Q; ++i)
        for (h = 0; h < H; ++h)
          memcpy(qf + (((size_t)b * Q + i) * H + h) * D, s->q + b * q_st.batch + i * q_st.seq + h * q_st.head,
                 sizeof(float) * (size_t)D);
  }
  for (b = 0; b < B && !st; b += per)
    st = prefix_pass(kernel, args, qf, pos, b, b + per < B ? b + per : B, o_pre, lse_tmp, lse_pre, nthreads);
  if (st) goto out;
  memset(&m, 0, sizeof m);
  o_in[0] = o_pre, lse_in[0] = lse_pre, o_in[1] = o_own, lse_in[1] = lse_own;
  m.batch = B, m.q_len = Q, m.heads = H, m.head_dim = D;
  m.n = s->kv_len > 0 ? 2 : 1; /* no own rows: the prefix's state alone */
  m.o_in = o_in, m.lse_in = lse_in;
  m.o = s->o, m.lse = s->lse, m.o_stride = s->o_stride;
  st = attngen_merge_states(&m);
out:
  free(qf), free(o_pre), free(o_own), free(lse_pre), free(lse_own), free(lse_tmp), free(pos), free(offsets);
  return st;
}

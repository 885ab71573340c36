/* SPDX-License-Identifier: MIT */
/* attngen runtime: attention features' values (window, soft-cap, ALiBi slopes, sink logits): checked and resolved
 * once per call (the call's value, else the table's), and the ALiBi slopes rule. */
#include "attngen_internal.h"

int attngen_alibi_slopes(int heads, double max_bias, float *out)
{
  int n = 1, h;
  if (!out) return attngen_fail(ATTNGEN_ERR_NULL, "attngen: attngen_alibi_slopes: out is NULL");
  if (heads < 1 || heads > ATTNGEN_MAX_HEADS)
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: attngen_alibi_slopes: heads (%d) must be in [1, %d]", heads,
                        ATTNGEN_MAX_HEADS);
  if (!(max_bias > 0.0) || isinf(max_bias))
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: attngen_alibi_slopes: max_bias must be positive and finite, got %g",
                        max_bias);
  while (n * 2 <= heads) n *= 2;
  for (h = 0; h < n; ++h) out[h] = (float)pow(2.0, -max_bias * (h + 1) / n);
  for (h = n; h < heads; ++h) out[h] = (float)pow(2.0, -max_bias * (2 * (h - n) + 1) / (2.0 * n));
  return ATTNGEN_OK;
}

/* A value given for a feature the kernel lacks would be silently ignored: refused instead. */
static int refuse_unused(const attngen_kernel *k, unsigned bit, int given, const char *field)
{
  if (given && !(k->shape.features & bit))
    return attngen_fail(ATTNGEN_ERR_SHAPE, "attngen: args.%s is set but kernel %s (shape features 0x%x) lacks that "
                        "feature", field, k->info->name, k->shape.features);
  return ATTNGEN_OK;
}

int attngen_resolve_features(const attngen_kernel *k, attngen_args *a)
{
  const attngen_feature_values *t = &k->params.features;
  const unsigned f = k->shape.features;
  int st;
  if ((st = refuse_unused(k, ATTNGEN_ATTN_WINDOW, a->window != 0 || a->sink_tokens != 0, "window / sink_tokens")) ||
      (st = refuse_unused(k, ATTNGEN_ATTN_SOFTCAP, a->softcap != 0.0f, "softcap")) ||
      (st = refuse_unused(k, ATTNGEN_ATTN_ALIBI, a->alibi_slopes != NULL, "alibi_slopes")) ||
      (st = refuse_unused(k, ATTNGEN_ATTN_SINKS, a->sinks != NULL, "sinks")))
    return st;
  if (f & ATTNGEN_ATTN_WINDOW) {
    if (a->window == 0) a->window = t->window;
    if (a->sink_tokens == 0) a->sink_tokens = t->sink_tokens;
    if (a->window < 1 || a->window > ATTNGEN_MAX_LEN || a->sink_tokens < 0 || a->sink_tokens > ATTNGEN_MAX_LEN)
      return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: kernel %s has a sliding window: window (%d) must be in [1, %d] "
                          "and sink_tokens (%d) in [0, %d] (args, else the table's)", k->info->name, a->window,
                          ATTNGEN_MAX_LEN, a->sink_tokens, ATTNGEN_MAX_LEN);
  }
  if (f & ATTNGEN_ATTN_SOFTCAP) {
    if (a->softcap == 0.0f) a->softcap = t->softcap;
    if (!(a->softcap > 0.0f) || isinf(a->softcap))
      return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: kernel %s has a logit soft-cap: softcap must be positive and "
                          "finite, got %g (args, else the table's)", k->info->name, (double)a->softcap);
  }
  if (f & ATTNGEN_ATTN_ALIBI) {
    if (!a->alibi_slopes) a->alibi_slopes = t->alibi_slopes;
    if (!a->alibi_slopes)
      return attngen_fail(ATTNGEN_ERR_NULL, "attngen: kernel %s has ALiBi and neither args.alibi_slopes nor its table "
                          "gives the slopes (attngen_alibi_slopes computes them)", k->info->name);
  }
  if ((f & ATTNGEN_ATTN_SINKS) && !a->sinks)
    return attngen_fail(ATTNGEN_ERR_NULL, "attngen: kernel %s has sink logits: args.sinks ([heads] floats) is NULL",
                        k->info->name);
  return ATTNGEN_OK;
}

/* The first key the window lets query 0 of a sequence see when its causal offset is `offset` (0: no window). */
int attngen_window_first_key(const attngen_args *a, int offset)
{
  const long long lo = (long long)offset + 1 - a->window;
  return a->window && lo > 0 ? (int)lo : 0;
}

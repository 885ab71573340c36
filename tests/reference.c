/* SPDX-License-Identifier: MIT */
/* Float64 reference attention; see reference.h. */
#include "reference.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

attngen_strides ref_strides(attngen_strides s, int rows, int nheads, int head_dim) {
  if (s.head == 0) s.head = head_dim;
  if (s.seq == 0) s.seq = (ptrdiff_t)nheads * head_dim;
  /* saturated: a call with one sequence never uses its batch stride, and the runtime accepts any seq stride whose
   * rows it reads (make test-fuzz, seed 22: seq stride 2^61 with 5 rows, kv_len 1) */
  if (s.batch == 0) s.batch = rows > 0 && s.seq > PTRDIFF_MAX / rows ? PTRDIFF_MAX : (ptrdiff_t)rows * s.seq;
  return s;
}

int ref_visible(attngen_mask mask, const attngen_args *a, int b, int i, int j) {
  if (j < 0 || j >= a->kv_len) return 0;
  /* the preset's features, as the spec defines them (data, not kernel code) */
  int causal = (attngen_mask_features(mask) & ATTNGEN_FEATURE_CAUSAL) != 0;
  int padded = (attngen_mask_features(mask) & ATTNGEN_FEATURE_KV_LENS) != 0;
  if (causal && !(j <= i + (a->kv_len - a->q_len))) return 0;
  if (padded && !(j < a->kv_lens[b])) return 0;
  return 1;
}

/* The attention features of runtime/attngen.h, from their definitions, with the call's resolved values (args).
 * p: the query's position (kv_len - q_len + i), j: the key's. */
static int ref_in_window(const attngen_shape *sh, const attngen_args *a, long long p, int j) {
  if (!(sh->features & ATTNGEN_ATTN_WINDOW)) return 1;
  return j > p - a->window || j < a->sink_tokens;
}
static double ref_feature_score(const attngen_shape *sh, const attngen_args *a, int h, long long p, int j, double s) {
  if (sh->features & ATTNGEN_ATTN_SOFTCAP) s = (double)a->softcap * tanh(s / (double)a->softcap);
  if (sh->features & ATTNGEN_ATTN_ALIBI) s += (double)a->alibi_slopes[h] * (double)(j - p);
  return s;
}

/* ALiBi's slope of head h of `heads`, float64: HF transformers' BLOOM build_alibi_tensor with max_bias for its 8 (the
 * closest power of two n <= heads: base 2^(-max_bias / n) to the powers 1..n, then 2^(-max_bias / 2n) to the odd
 * powers 1, 3, 5, ... for the heads past n). */
double ref_alibi_slope(int heads, double max_bias, int h) {
  int n = 1;
  while (2 * n <= heads) n *= 2;
  if (h < n) return pow(pow(2.0, -max_bias / n), h + 1);
  return pow(pow(2.0, -max_bias / (2.0 * n)), 2 * (h - n) + 1);
}

/* YaRN's mscale(s, m) of transformers' _compute_yarn_parameters. */
static double ref_yarn_mscale(double s, double m) { return s <= 1.0 ? 1.0 : 0.1 * m * log(s) + 1.0; }

/* transformers' find_correction_dim: the dim whose pair turns `rotations` times over the original context. */
static double ref_yarn_dim(const attngen_rope *r, double rotations) {
  return r->rotary_dim * log(r->original_max_position_embeddings / (rotations * 2.0 * M_PI)) / (2.0 * log(r->theta));
}

double ref_rope_cs_scale(const attngen_rope *r) {
  if (r->scaling != ATTNGEN_ROPE_SCALING_YARN) return 1.0;
  if (r->attention_factor > 0.0) return r->attention_factor;
  if (r->mscale > 0.0 && r->mscale_all_dim > 0.0)
    return ref_yarn_mscale(r->factor, r->mscale) / ref_yarn_mscale(r->factor, r->mscale_all_dim);
  return ref_yarn_mscale(r->factor, 1.0);
}

/* RoPE from its definition, in float64 (shares no code with attngen's runtime or generator): HF's
 * 1 / theta^(2p / rotary_dim), then transformers' linear, llama3 or yarn rule. */
void ref_rope_inv_freq(const attngen_rope *r, double *inv) {
  const int half = r->rotary_dim / 2;
  double low = 0.0, high = 0.0; /* yarn: the ramp's ends, in pairs */
  if (r->scaling == ATTNGEN_ROPE_SCALING_YARN) {
    low = ref_yarn_dim(r, r->beta_fast), high = ref_yarn_dim(r, r->beta_slow);
    if (r->truncate != 0.0) low = floor(low), high = ceil(high);
    if (low < 0.0) low = 0.0;
    if (high > r->rotary_dim - 1) high = r->rotary_dim - 1;
    if (low == high) high += 0.001;
  }
  for (int p = 0; p < half; p++) {
    double f = 1.0 / pow(r->theta, (double)(2 * p) / (double)r->rotary_dim);
    if (r->scaling == ATTNGEN_ROPE_SCALING_LINEAR) f /= r->factor;
    if (r->scaling == ATTNGEN_ROPE_SCALING_LLAMA3) {
      const double old = r->original_max_position_embeddings;
      const double wavelen = 2.0 * M_PI / f;
      if (wavelen > old / r->low_freq_factor) {
        f /= r->factor; /* low frequencies */
      } else if (wavelen >= old / r->high_freq_factor) { /* medium: a smooth ramp between f / factor and f */
        const double smooth = (old / wavelen - r->low_freq_factor) / (r->high_freq_factor - r->low_freq_factor);
        f = (1.0 - smooth) * f / r->factor + smooth * f;
      }
    }
    if (r->scaling == ATTNGEN_ROPE_SCALING_YARN) { /* kept below low, divided by factor above high, a ramp between */
      double ramp = (p - low) / (high - low);
      ramp = ramp < 0.0 ? 0.0 : ramp > 1.0 ? 1.0 : ramp;
      f = (1.0 - ramp) * f + ramp * f / r->factor;
    }
    inv[p] = f;
  }
}

void ref_rope_rotate(const attngen_rope *r, const double *inv, long long pos, const float *x, int d, double *y) {
  const int half = r->rotary_dim / 2;
  const double m = ref_rope_cs_scale(r);
  for (int e = 0; e < d; e++) y[e] = x[e];
  for (int p = 0; p < half; p++) {
    /* the pair: (p, p + half) for rotate_half, (2p, 2p + 1) for interleaved */
    const int i0 = r->style == ATTNGEN_ROPE_INTERLEAVED ? 2 * p : p;
    const int i1 = r->style == ATTNGEN_ROPE_INTERLEAVED ? 2 * p + 1 : p + half;
    const double angle = (double)pos * inv[p], c = m * cos(angle), s = m * sin(angle);
    y[i0] = (double)x[i0] * c - (double)x[i1] * s;
    y[i1] = (double)x[i1] * c + (double)x[i0] * s;
  }
}

void ref_attention(const attngen_shape *shape, const attngen_args *a, double *out, double *lse) {
  ref_attention_rope(shape, a, NULL, NULL, out, lse);
}

void ref_attention_rope(const attngen_shape *shape, const attngen_args *a, const attngen_rope *rope,
                        const int32_t *k_pos, double *out, double *lse) {
  const int H = shape->heads, KVH = shape->kv_heads, D = shape->head_dim;
  const int group = H / KVH;
  const int cap = a->kv_capacity > 0 ? a->kv_capacity : a->kv_len;
  const attngen_strides qs = ref_strides(a->q_stride, a->q_len, H, D);
  const attngen_strides ks = ref_strides(a->k_stride, cap, KVH, D);
  const attngen_strides vs = ref_strides(a->v_stride, cap, KVH, D);
  const double scale = a->scale != 0.0f ? (double)a->scale : 1.0 / sqrt((double)D);
  double *s = malloc(sizeof(double) * (size_t)(a->kv_len > 0 ? a->kv_len : 1));
  const int rot = rope && rope->style != ATTNGEN_ROPE_NONE;
  double inv[ATTNGEN_MAX_HEAD_DIM / 2], qd[ATTNGEN_MAX_HEAD_DIM];
  /* keys rotated here (k_pos given): each kv head's rows once, [kv_len][D], reused by its query heads */
  double *kr = rot && k_pos ? malloc(sizeof(double) * (size_t)(a->kv_len > 0 ? a->kv_len : 1) * (size_t)D) : NULL;
  if (rot) ref_rope_inv_freq(rope, inv);

  for (int b = 0; b < a->batch; b++)
    for (int h = 0; h < H; h++) {
      const int kvh = h / group;
      if (kr && h % group == 0)
        for (int j = 0; j < a->kv_len; j++)
          ref_rope_rotate(rope, inv, k_pos[(size_t)b * a->kv_len + j], a->k + b * ks.batch + j * ks.seq + kvh * ks.head,
                          D, kr + (size_t)j * D);
      for (int i = 0; i < a->q_len; i++) {
        const float *q = a->q + b * qs.batch + i * qs.seq + h * qs.head;
        double *o = out + (((size_t)b * a->q_len + i) * H + h) * D;
        /* RoPE: q rotated by its position (q_pos, else kv_len - q_len + i); k by k_pos when given, else as stored */
        if (rot)
          ref_rope_rotate(rope, inv, a->q_pos ? a->q_pos[(size_t)b * a->q_len + i] : (long long)a->kv_len - a->q_len + i,
                          q, D, qd);
        else
          for (int e = 0; e < D; e++) qd[e] = q[e];
        /* scores of the visible keys and their maximum */
        const long long p = (long long)a->kv_len - a->q_len + i;
        double m = -INFINITY;
        int any = 0;
        for (int j = 0; j < a->kv_len; j++) {
          if (!ref_visible(shape->mask, a, b, i, j) || !ref_in_window(shape, a, p, j)) continue;
          double dot = 0.0;
          if (kr) {
            for (int e = 0; e < D; e++) dot += qd[e] * kr[(size_t)j * D + e];
          } else {
            const float *k = a->k + b * ks.batch + j * ks.seq + kvh * ks.head;
            for (int e = 0; e < D; e++) dot += qd[e] * (double)k[e];
          }
          s[j] = ref_feature_score(shape, a, h, p, j, scale * dot);
          if (s[j] > m) m = s[j];
          any = 1;
        }
        /* a sink logit joins the denominator, with no value row */
        const double sink = (shape->features & ATTNGEN_ATTN_SINKS) ? (double)a->sinks[h] : -INFINITY;
        for (int e = 0; e < D; e++) o[e] = 0.0;
        if (!any) {
          if (lse) lse[((size_t)b * H + h) * a->q_len + i] = sink;
          continue;
        }
        if (sink > m) m = sink;
        /* softmax with max subtraction, then the weighted sum of values */
        double sum = exp(sink - m);
        for (int j = 0; j < a->kv_len; j++)
          if (ref_visible(shape->mask, a, b, i, j) && ref_in_window(shape, a, p, j)) sum += exp(s[j] - m);
        for (int j = 0; j < a->kv_len; j++) {
          if (!ref_visible(shape->mask, a, b, i, j) || !ref_in_window(shape, a, p, j)) continue;
          const double p = exp(s[j] - m) / sum;
          const float *v = a->v + b * vs.batch + j * vs.seq + kvh * vs.head;
          for (int e = 0; e < D; e++) o[e] += p * (double)v[e];
        }
        if (lse) lse[((size_t)b * H + h) * a->q_len + i] = m + log(sum);
      }
    }
  free(s);
  free(kr);
}

/* Float64 reference attention; see reference.h. */
#include "reference.h"

#include <math.h>
#include <stdlib.h>

attngen_strides ref_strides(attngen_strides s, int rows, int nheads, int head_dim) {
  if (s.head == 0) s.head = head_dim;
  if (s.seq == 0) s.seq = (ptrdiff_t)nheads * head_dim;
  if (s.batch == 0) s.batch = (ptrdiff_t)rows * s.seq;
  return s;
}

int ref_visible(attngen_mask mask, const attngen_args *a, int b, int i, int j) {
  if (j < 0 || j >= a->kv_len) return 0;
  int causal = (mask == ATTNGEN_MASK_CAUSAL || mask == ATTNGEN_MASK_CAUSAL_PADDING);
  int padded = (mask == ATTNGEN_MASK_PADDING || mask == ATTNGEN_MASK_CAUSAL_PADDING || mask == ATTNGEN_MASK_CROSS);
  if (causal && !(j <= i + (a->kv_len - a->q_len))) return 0;
  if (padded && !(j < a->kv_lens[b])) return 0;
  return 1;
}

void ref_attention(const attngen_shape *shape, const attngen_args *a, double *out, double *lse) {
  const int H = shape->heads, KVH = shape->kv_heads, D = shape->head_dim;
  const int group = H / KVH;
  const int cap = a->kv_capacity > 0 ? a->kv_capacity : a->kv_len;
  const attngen_strides qs = ref_strides(a->q_stride, a->q_len, H, D);
  const attngen_strides ks = ref_strides(a->k_stride, cap, KVH, D);
  const attngen_strides vs = ref_strides(a->v_stride, cap, KVH, D);
  const double scale = a->scale != 0.0f ? (double)a->scale : 1.0 / sqrt((double)D);
  double *s = malloc(sizeof(double) * (size_t)(a->kv_len > 0 ? a->kv_len : 1));

  for (int b = 0; b < a->batch; b++)
    for (int h = 0; h < H; h++) {
      const int kvh = h / group;
      for (int i = 0; i < a->q_len; i++) {
        const float *q = a->q + b * qs.batch + i * qs.seq + h * qs.head;
        double *o = out + (((size_t)b * a->q_len + i) * H + h) * D;
        /* scores of the visible keys and their maximum */
        double m = -INFINITY;
        int any = 0;
        for (int j = 0; j < a->kv_len; j++) {
          if (!ref_visible(shape->mask, a, b, i, j)) continue;
          const float *k = a->k + b * ks.batch + j * ks.seq + kvh * ks.head;
          double dot = 0.0;
          for (int e = 0; e < D; e++) dot += (double)q[e] * (double)k[e];
          s[j] = scale * dot;
          if (s[j] > m) m = s[j];
          any = 1;
        }
        for (int e = 0; e < D; e++) o[e] = 0.0;
        if (!any) {
          if (lse) lse[((size_t)b * H + h) * a->q_len + i] = -INFINITY;
          continue;
        }
        /* softmax with max subtraction, then the weighted sum of values */
        double sum = 0.0;
        for (int j = 0; j < a->kv_len; j++)
          if (ref_visible(shape->mask, a, b, i, j)) sum += exp(s[j] - m);
        for (int j = 0; j < a->kv_len; j++) {
          if (!ref_visible(shape->mask, a, b, i, j)) continue;
          const double p = exp(s[j] - m) / sum;
          const float *v = a->v + b * vs.batch + j * vs.seq + kvh * vs.head;
          for (int e = 0; e < D; e++) o[e] += p * (double)v[e];
        }
        if (lse) lse[((size_t)b * H + h) * a->q_len + i] = m + log(sum);
      }
    }
  free(s);
}

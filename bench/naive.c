/* SPDX-License-Identifier: MIT */
/* bench/naive.c: NAIVE reference attention (see naive.h). Plain loops, three passes over the keys:
 * scores and their max, exp and sum, then the weighted sum of V. Compiled like the rest of the bench
 * (-O2, no ISA flags). */
#include "naive.h"

#include <math.h>
#include <stdlib.h>

int naive_attention(const attngen_shape *shape, const attngen_args *a) {
  const int H = shape->heads, KVH = shape->kv_heads, D = shape->head_dim;
  const int group = H / KVH;
  const float scale = a->scale != 0.0f ? a->scale : 1.0f / sqrtf((float)D);
  float *s = (float *)malloc(sizeof(float) * (size_t)(a->kv_len > 0 ? a->kv_len : 1));
  if (!s) return -1;
  for (int b = 0; b < a->batch; b++) {
    const float *Q = a->q + (size_t)b * a->q_len * H * D;
    const float *K = a->k + (size_t)b * a->kv_len * KVH * D;
    const float *V = a->v + (size_t)b * a->kv_len * KVH * D;
    float *O = a->o + (size_t)b * a->q_len * H * D;
    for (int i = 0; i < a->q_len; i++) {
      int visible = a->kv_len; /* keys j < visible are seen by query row i */
      if (attngen_mask_features(shape->mask) & ATTNGEN_FEATURE_CAUSAL) {
        long lim = (long)i + (a->kv_len - a->q_len) + 1;
        visible = lim < 0 ? 0 : (lim > a->kv_len ? a->kv_len : (int)lim);
      }
      for (int h = 0; h < H; h++) {
        const float *q = Q + ((size_t)i * H + h) * D;
        float *o = O + ((size_t)i * H + h) * D;
        const int kvh = h / group;
        for (int t = 0; t < D; t++) o[t] = 0.0f;
        if (visible == 0) continue;
        float m = -INFINITY;
        for (int j = 0; j < visible; j++) {
          const float *k = K + ((size_t)j * KVH + kvh) * D;
          float dot = 0.0f;
          for (int t = 0; t < D; t++) dot += q[t] * k[t];
          s[j] = dot * scale;
          if (s[j] > m) m = s[j];
        }
        float sum = 0.0f;
        for (int j = 0; j < visible; j++) {
          s[j] = expf(s[j] - m);
          sum += s[j];
        }
        for (int j = 0; j < visible; j++) {
          const float *v = V + ((size_t)j * KVH + kvh) * D;
          for (int t = 0; t < D; t++) o[t] += s[j] * v[t];
        }
        const float inv = 1.0f / sum;
        for (int t = 0; t < D; t++) o[t] *= inv;
      }
    }
  }
  free(s);
  return 0;
}

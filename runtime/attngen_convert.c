/* SPDX-License-Identifier: MIT */
/* attngen runtime: the public conversions of the cache's storage types. */
#include "attngen_internal.h"

#include <float.h>

/* attngen_<field>_from_float and attngen_<field>_to_float of every element type held in a struct (f16, bf16) */
#define ELEMENT_CONVERSIONS_(F, f, api, stored)                                                                        \
  api attngen_##f##_from_float(float x)                                                                                \
  {                                                                                                                    \
    api h;                                                                                                             \
    h.bits = attngen_float_to_##f##_bits(x);                                                                           \
    return h;                                                                                                          \
  }                                                                                                                    \
  float attngen_##f##_to_float(api h) { return attngen_##f##_bits_to_float(h.bits); }
ATTNGEN_KV_ELEMENT_LIST(ELEMENT_CONVERSIONS_)
#undef ELEMENT_CONVERSIONS_

/* Symmetric: scale = max|x| / scale_max, so the largest element is exactly +-scale_max and nothing clips. A group
 * holding Inf or NaN: NaN; an all-zero group, or one whose scale would be 0 (max|x| below scale_max x the smallest
 * subnormal): 0, and the group reads back as zeros. */
float attngen_kv_group_scale(const float *x, int n, float scale_max)
{
  float amax = 0.0f;
  int i;
  for (i = 0; i < n; ++i) {
    const float ax = fabsf(x[i]);
    if (!(ax <= FLT_MAX)) return NAN; /* Inf or NaN */
    if (ax > amax) amax = ax;
  }
  return amax / scale_max;
}

float attngen_int8_quantize(const float *x, int n, int8_t *q)
{
  const float scale = attngen_kv_group_scale(x, n, 127.0f);
  int i;
  for (i = 0; i < n; ++i) q[i] = attngen_float_to_i8_bits(attngen_kv_scaled(x[i], scale));
  return scale;
}

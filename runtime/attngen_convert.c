/* SPDX-License-Identifier: MIT */
/* attngen runtime: the public conversions of the cache's storage types. */
#include "attngen_internal.h"

#include <float.h>

attngen_f16 attngen_f16_from_float(float x)
{
  attngen_f16 h;
  h.bits = attngen_float_to_f16_bits(x);
  return h;
}

float attngen_f16_to_float(attngen_f16 h) { return attngen_f16_bits_to_float(h.bits); }

attngen_bf16 attngen_bf16_from_float(float x)
{
  attngen_bf16 h;
  h.bits = attngen_float_to_bf16_bits(x);
  return h;
}

float attngen_bf16_to_float(attngen_bf16 h) { return attngen_bf16_bits_to_float(h.bits); }

/* Symmetric: scale = max|x| / 127, so the largest element is exactly +-127 and nothing clips. rintf rounds to nearest
 * even in the default rounding mode. */
float attngen_int8_quantize(const float *x, int n, int8_t *q)
{
  float amax = 0.0f, scale;
  int i, bad = 0;
  for (i = 0; i < n; ++i) {
    const float ax = fabsf(x[i]);
    if (!(ax <= FLT_MAX)) bad = 1; /* Inf or NaN */
    else if (ax > amax) amax = ax;
  }
  if (bad || amax == 0.0f) {
    for (i = 0; i < n; ++i) q[i] = 0;
    return bad ? NAN : 0.0f;
  }
  scale = amax / 127.0f;
  if (scale == 0.0f) { /* max|x| below 127 x the smallest subnormal: the row reads back as zeros */
    for (i = 0; i < n; ++i) q[i] = 0;
    return 0.0f;
  }
  for (i = 0; i < n; ++i) {
    float r = rintf(x[i] / scale);
    r = r > 127.0f ? 127.0f : r < -127.0f ? -127.0f : r;
    q[i] = (int8_t)r;
  }
  return scale;
}

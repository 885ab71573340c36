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

/* n elements of type t from x into y (stored elements): copied (f32), rounded (attngen_float_to_<field>_bits), or,
 * for a type with scales (sc: one per group of the row, attngen_kv_group), each group divided by its scale first.
 * The append and attngen_kv_from_float. */
void attngen_kv_encode_row(attngen_kv_dtype t, const float *x, int n, void *y, float *sc)
{
  const int g = sc ? attngen_kv_group(t, n) : n;
  int c, i;
  switch (attngen_kv_dtype_encoding(t)) {
  case ATTNGEN_KV_ENC_F32: memcpy(y, x, sizeof(float) * (size_t)n); break;
#define ENCODE_(F, f, api, stored, scale_max)                                                                          \
  case ATTNGEN_KV_ENC_##F:                                                                                             \
    for (c = 0; c < n; c += g) {                                                                                       \
      const float s = sc ? attngen_kv_group_scale(x + c, g, (float)(scale_max)) : 1.0f;                                \
      if (sc) sc[c / g] = s;                                                                                           \
      for (i = c; i < c + g; ++i)                                                                                      \
        ((stored *)y)[i] = attngen_float_to_##f##_bits(sc ? attngen_kv_scaled(x[i], s) : x[i]);                        \
    }                                                                                                                  \
    break;
    ATTNGEN_KV_ENCODING_LIST(ENCODE_)
#undef ENCODE_
  default: break;
  }
}

/* n stored elements of type t at y as floats into x: exact (attngen_<field>_bits_to_float), times the group's scale
 * for a type with scales (sc as above): the floats the kernels compute with. The prefill copy and
 * attngen_kv_to_float. */
void attngen_kv_decode_row(attngen_kv_dtype t, const void *restrict y, const float *restrict sc, int n,
                           float *restrict x)
{
  const int g = sc ? attngen_kv_group(t, n) : n;
  int c, i;
  switch (attngen_kv_dtype_encoding(t)) {
  case ATTNGEN_KV_ENC_F32: memcpy(x, y, sizeof(float) * (size_t)n); break;
#define DECODE_(F, f, api, stored, scale_max)                                                                          \
  case ATTNGEN_KV_ENC_##F:                                                                                             \
    if (!sc)                                                                                                           \
      for (c = 0; c < n; ++c) x[c] = attngen_##f##_bits_to_float(((const stored *)y)[c]);                              \
    else /* group by group, in one pass: no division per element */                                                    \
      for (i = 0; i < n; i += g) {                                                                                     \
        const float s = sc[i / g];                                                                                     \
        for (c = i; c < i + g; ++c) x[c] = attngen_##f##_bits_to_float(((const stored *)y)[c]) * s;                    \
      }                                                                                                                \
    break;
    ATTNGEN_KV_ENCODING_LIST(DECODE_)
#undef DECODE_
  default: break;
  }
}

/* The public row conversions' checks, of the stored `elements` and the `floats`. */
static int check_row(const char *fn, attngen_kv_dtype t, int n, const void *elements, const void *floats,
                     const float *scales)
{
  int st = attngen_check_kv_dtype(fn, t, scales != NULL), per;
  if (st) return st;
  if (n < 1) return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: %s: n (%d) must be >= 1", fn, n);
  if (!elements || !floats)
    return attngen_fail(ATTNGEN_ERR_NULL, "attngen: %s: the %s are NULL", fn, elements ? "floats" : "elements");
  per = attngen_kv_group(t, n);
  if (!per) return ATTNGEN_OK;
  if (n % per)
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: %s: n (%d) is not a multiple of type %s's group of %d", fn, n,
                        attngen_kv_dtype_name(t), per);
  if (!scales)
    return attngen_fail(ATTNGEN_ERR_NULL, "attngen: %s: type %s needs its scales (n / %d floats)", fn,
                        attngen_kv_dtype_name(t), per);
  return ATTNGEN_OK;
}

int attngen_kv_from_float(attngen_kv_dtype t, const float *x, int n, void *out, float *scales)
{
  const int st = check_row("attngen_kv_from_float", t, n, out, x, scales);
  if (st) return st;
  attngen_kv_encode_row(t, x, n, out, scales);
  return ATTNGEN_OK;
}

int attngen_kv_to_float(attngen_kv_dtype t, const void *in, const float *scales, int n, float *x)
{
  const int st = check_row("attngen_kv_to_float", t, n, in, x, scales);
  if (st) return st;
  attngen_kv_decode_row(t, in, scales, n, x);
  return ATTNGEN_OK;
}

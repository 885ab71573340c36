/* SPDX-License-Identifier: MIT */
/* attngen_convert.h — the portable conversions of the cache's storage types (C99, bit operations only), shared by the
 * runtime (cache append, prefill repack), the scalar kernels and the tail elements of the vector kernels. Not part of
 * the public API (attngen.h has attngen_f16_from_float and the others). The vector ISAs convert with their own
 * instructions (F16C, AVX-512, AArch64 FCVTL): f16 and bf16 widen exactly, so every ISA reads the same floats. */
#ifndef ATTNGEN_CONVERT_H
#define ATTNGEN_CONVERT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t attngen_float_bits(float x)
{
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static inline float attngen_bits_float(uint32_t u)
{
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* binary16 -> binary32, exact (subnormals normalized, Inf and NaN kept, the NaN payload shifted up). */
static inline float attngen_f16_bits_to_float(uint16_t h)
{
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
  if (exp == 0x1Fu) return attngen_bits_float(sign | 0x7F800000u | (man << 13)); /* Inf, NaN */
  if (exp == 0) {
    if (man == 0) return attngen_bits_float(sign); /* +-0 */
    exp = 113;                                     /* 127 - 15 + 1: a subnormal, normalized */
    while (!(man & 0x400u)) {
      man <<= 1;
      --exp;
    }
    man &= 0x3FFu;
    return attngen_bits_float(sign | (exp << 23) | (man << 13));
  }
  return attngen_bits_float(sign | ((exp + 112) << 23) | (man << 13));
}

/* binary32 -> binary16, rounded to nearest, ties to even; overflow to Inf, underflow through the subnormals to 0; a
 * NaN stays a quiet NaN (its top payload bits kept). */
static inline uint16_t attngen_float_to_f16_bits(float x)
{
  const uint32_t u = attngen_float_bits(x);
  const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) /* Inf or NaN */
    return (uint16_t)(sign | 0x7C00u | (a > 0x7F800000u ? (0x200u | ((a >> 13) & 0x3FFu)) : 0u));
  if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u); /* rounds to >= 65520: Inf */
  if (a < 0x38800000u) {                                    /* below 2^-14: a subnormal half (or 0) */
    const int shift = 126 - (int)(a >> 23);                /* 14 + 112 - exponent */
    uint32_t man, q, rem, halfway;
    if (shift > 24) return sign; /* below half the smallest subnormal (2^-25): 0 */
    man = (a & 0x7FFFFFu) | 0x800000u;
    q = man >> shift;
    rem = man & ((1u << shift) - 1u);
    halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
    return (uint16_t)(sign | q);
  }
  {
    /* normal: rebias, then round the 13 dropped bits (a carry into the exponent is the right result) */
    const uint32_t r = a - 0x38000000u; /* exponent - 112 */
    const uint32_t q = r >> 13, rem = r & 0x1FFFu;
    return (uint16_t)(sign | (q + (rem > 0x1000u || (rem == 0x1000u && (q & 1u)))));
  }
}

/* bfloat16 is the top half of a binary32: widening is a shift. */
static inline float attngen_bf16_bits_to_float(uint16_t h) { return attngen_bits_float((uint32_t)h << 16); }

/* binary32 -> bfloat16, rounded to nearest, ties to even (overflow to Inf); a NaN stays a quiet NaN. */
static inline uint16_t attngen_float_to_bf16_bits(float x)
{
  const uint32_t u = attngen_float_bits(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40u);
  return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/* int8 elements hold a value divided by its group's scale (attngen_kv_group_scale): widening is exact, the scale
 * applied after. */
static inline float attngen_i8_bits_to_float(int8_t q) { return (float)q; }

/* A value already divided by its scale (|x| <= 127 but for rounding) to the nearest integer, ties to even (rintf in
 * the default rounding mode), kept in [-127, 127]. */
static inline int8_t attngen_float_to_i8_bits(float x)
{
  float r = rintf(x);
  r = r > 127.0f ? 127.0f : r < -127.0f ? -127.0f : r;
  return (int8_t)r;
}

/* x / scale for a scaled encoding's element; 0 when the group's scale is 0 or NaN (an all-zero group, or one holding
 * Inf or NaN: attngen_kv_group_scale), so such a group stores zeros. */
static inline float attngen_kv_scaled(float x, float scale) { return scale == scale && scale != 0.0f ? x / scale : 0.0f; }

#endif /* ATTNGEN_CONVERT_H */

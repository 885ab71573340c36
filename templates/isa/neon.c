/* SPDX-License-Identifier: MIT */
#include <arm_neon.h>

/* exp(x) for x <= 0 as used by online softmax: Cephes-style range reduction x = n*ln2 + r, |r| <= ln2/2,
 * degree-6 polynomial, 2^n built in the exponent field. Max relative error ~2 ulp on [-87.3, 0];
 * x < -87.33 (including -inf from masked keys) gives exactly 0 instead of a denormal or NaN. */
ATTNGEN_HELPER float32x4_t attngen_exp_neon(float32x4_t x)
{
  const float32x4_t lo = vdupq_n_f32(-87.33654f);
  const uint32x4_t keep = vcgeq_f32(x, lo);
  float32x4_t xc = vmaxq_f32(vminq_f32(x, vdupq_n_f32(88.3762626647949f)), lo);
  float32x4_t n = vrndnq_f32(vmulq_f32(xc, vdupq_n_f32(1.44269504088896341f)));
  float32x4_t r = vfmsq_f32(xc, n, vdupq_n_f32(0.693359375f));
  r = vfmsq_f32(r, n, vdupq_n_f32(-2.12194440e-4f));
  float32x4_t p = vdupq_n_f32(1.9875691500e-4f);
  p = vfmaq_f32(vdupq_n_f32(1.3981999507e-3f), p, r);
  p = vfmaq_f32(vdupq_n_f32(8.3334519073e-3f), p, r);
  p = vfmaq_f32(vdupq_n_f32(4.1665795894e-2f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.6666665459e-1f), p, r);
  p = vfmaq_f32(vdupq_n_f32(5.0000001201e-1f), p, r);
  p = vfmaq_f32(vaddq_f32(r, vdupq_n_f32(1.0f)), p, vmulq_f32(r, r));
  int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127)), 23);
  float32x4_t y = vmulq_f32(p, vreinterpretq_f32_s32(e));
  return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(y), keep));
}

/* Lanes (query rows) whose visible-key count lim is <= key j become -inf. */
ATTNGEN_HELPER float32x4_t attngen_mask_neon(float32x4_t v, int j, float32x4_t lim)
{
  uint32x4_t visible = vcltq_f32(vdupq_n_f32((float)j), lim);
  return vbslq_f32(visible, v, vdupq_n_f32(-INFINITY));
}

/* A running max that is still -inf (row saw no key yet) is used as 0 so that exp(s - m) never sees inf - inf. */
ATTNGEN_HELPER float32x4_t attngen_finite_or_zero_neon(float32x4_t m)
{
  uint32x4_t is_inf = vceqq_f32(m, vdupq_n_f32(-INFINITY));
  return vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(m), is_inf));
}

/* Keys along the lanes: lane k holds key j0 + k, kept only if j0 + k < lim. */
ATTNGEN_HELPER float32x4_t attngen_mask_lanes_neon(float32x4_t v, int j0, int lim)
{
  static const int32_t lanes[4] = { 0, 1, 2, 3 };
  uint32x4_t keep = vcgtq_s32(vdupq_n_s32(lim - j0), vld1q_s32(lanes));
  return vbslq_f32(keep, v, vdupq_n_f32(-INFINITY));
}

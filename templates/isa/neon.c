/* SPDX-License-Identifier: MIT */
#include <arm_neon.h>

/* 4 int8 as 4 floats (exact; the caller applies the scale): a 4-byte load, so no byte past the 4 is read. */
ATTNGEN_HELPER float32x4_t attngen_i8_load_neon(const int8_t *p)
{
  int32_t w;
  memcpy(&w, p, sizeof w);
  return vcvtq_f32_s32(vmovl_s16(vget_low_s16(vmovl_s8(vreinterpret_s8_s32(vdup_n_s32(w))))));
}

/* exp(x) for x <= 0 as used by online softmax, as 2^t with t = x·log2(e) = n + r, n = round(t), |r| <= 1/2: a
 * degree-5 polynomial for 2^r, n added to its exponent field (see templates/isa/avx2.c for the error budget).
 * x < -87.3 (t < -126, including -inf from masked keys) gives exactly 0; no result is denormal. */
ATTNGEN_HELPER float32x4_t attngen_exp_neon(float32x4_t x)
{
  const float32x4_t lo = vdupq_n_f32(-126.0f);
  const float32x4_t t = vmulq_f32(x, vdupq_n_f32(1.44269504088896341f));
  const uint32x4_t keep = vmvnq_u32(vcltq_f32(t, lo)); /* NaN kept (vmaxq passes it on), as in the AVX2 word */
  const float32x4_t tc = vmaxq_f32(t, lo);
  const float32x4_t n = vrndnq_f32(tc);
  const float32x4_t r = vsubq_f32(tc, n);
  float32x4_t p = vdupq_n_f32(1.3264666777e-3f);
  p = vfmaq_f32(vdupq_n_f32(9.6714952961e-3f), p, r);
  p = vfmaq_f32(vdupq_n_f32(5.5507335812e-2f), p, r);
  p = vfmaq_f32(vdupq_n_f32(2.4022242427e-1f), p, r);
  p = vfmaq_f32(vdupq_n_f32(6.9314700365e-1f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
  const int32x4_t y = vaddq_s32(vreinterpretq_s32_f32(p), vshlq_n_s32(vcvtq_s32_f32(n), 23));
  return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_s32(y), keep));
}

/* tanh(x) = sign(x) (1 - e) / (1 + e) with e = exp(-2|x|) in [0, 1]: the exp above, which never overflows here;
 * |x| = inf gives +-1, NaN stays NaN. Logit soft-capping (softcap * tanh(s / softcap)) calls it; tests/cases.c
 * measures its largest error against float64 tanh and states the tolerance that follows. */
ATTNGEN_HELPER float32x4_t attngen_tanh_neon(float32x4_t x)
{
  const float32x4_t e = attngen_exp_neon(vmulq_f32(vabsq_f32(x), vdupq_n_f32(-2.0f)));
  const float32x4_t t = vdivq_f32(vsubq_f32(vdupq_n_f32(1.0f), e), vaddq_f32(vdupq_n_f32(1.0f), e));
  return vbslq_f32(vdupq_n_u32(0x80000000u), x, t); /* x's sign bit, t's magnitude */
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

/* dst[c * ds + i] = src[i][k0 + c] * s for i, c < 4: a 4x4 block of Q rows into the transposed tile. */
ATTNGEN_HELPER void attngen_transpose_scaled_neon(const float *const *src, int k0, float s, float *dst, ptrdiff_t ds)
{
  const float32x4_t r0 = vmulq_n_f32(vld1q_f32(src[0] + k0), s), r1 = vmulq_n_f32(vld1q_f32(src[1] + k0), s);
  const float32x4_t r2 = vmulq_n_f32(vld1q_f32(src[2] + k0), s), r3 = vmulq_n_f32(vld1q_f32(src[3] + k0), s);
  const float32x4x2_t a = vtrnq_f32(r0, r1), b = vtrnq_f32(r2, r3); /* a.val[0]: r0[0] r1[0] r0[2] r1[2] */
  vst1q_f32(dst, vcombine_f32(vget_low_f32(a.val[0]), vget_low_f32(b.val[0])));
  vst1q_f32(dst + ds, vcombine_f32(vget_low_f32(a.val[1]), vget_low_f32(b.val[1])));
  vst1q_f32(dst + 2 * ds, vcombine_f32(vget_high_f32(a.val[0]), vget_high_f32(b.val[0])));
  vst1q_f32(dst + 3 * ds, vcombine_f32(vget_high_f32(a.val[1]), vget_high_f32(b.val[1])));
}

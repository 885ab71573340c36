/* SPDX-License-Identifier: MIT */
#include <immintrin.h>

/* AVX2 code is compiled per function, so the file needs no -mavx2; the runtime calls it only after cpuid and
 * xgetbv confirm AVX2, FMA and the OS's ymm state. */
#if defined(__GNUC__) || defined(__clang__)
#define ATTNGEN_TARGET_AVX2 __attribute__((target("avx2,fma")))
#else
#define ATTNGEN_TARGET_AVX2
#endif

/* Keeps a loaded vector in a register. gcc otherwise folds the load into every FMA that uses it: decode's
 * 2-row dot-product block then loaded each K vector twice (1.45 loads per FMA, bound by the load ports; pinned:
 * h64/kv8 decode 1.12x in cache). An empty asm the value passes through; nothing is emitted for it. */
#if defined(__GNUC__)
#define ATTNGEN_PIN_AVX2(v) __asm__("" : "+x"(v))
#else
#define ATTNGEN_PIN_AVX2(v) ((void)0)
#endif

/* exp(x) for x <= 0 as used by online softmax: Cephes-style range reduction x = n*ln2 + r, |r| <= ln2/2,
 * degree-6 polynomial, 2^n built in the exponent field. Max relative error ~2 ulp on [-87.3, 0];
 * x < -87.33 (including -inf from masked keys) gives exactly 0 instead of a denormal or NaN. */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX2 __m256 attngen_exp_avx2(__m256 x)
{
  const __m256 lo = _mm256_set1_ps(-87.33654f);
  const __m256 keep = _mm256_cmp_ps(x, lo, _CMP_GE_OQ);
  __m256 xc = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(88.3762626647949f)), lo);
  __m256 n = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), xc);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(e)), keep);
}

/* Lanes (query rows) whose visible-key count lim is <= key j become -inf. */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX2 __m256 attngen_mask_avx2(__m256 v, int j, __m256 lim)
{
  __m256 visible = _mm256_cmp_ps(_mm256_set1_ps((float)j), lim, _CMP_LT_OQ);
  return _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), v, visible);
}

/* A running max that is still -inf (row saw no key yet) is used as 0 so that exp(s - m) never sees inf - inf. */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX2 __m256 attngen_finite_or_zero_avx2(__m256 m)
{
  return _mm256_andnot_ps(_mm256_cmp_ps(m, _mm256_set1_ps(-INFINITY), _CMP_EQ_OQ), m);
}

ATTNGEN_HELPER ATTNGEN_TARGET_AVX2 float attngen_hsum_avx2(__m256 v)
{
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

ATTNGEN_HELPER ATTNGEN_TARGET_AVX2 float attngen_hmax_avx2(__m256 v)
{
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

/* p[0..3] = the horizontal sums of a, b, c, d: two levels of hadd transpose the four reductions into one vector. */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX2 void attngen_hsum4_avx2(float *p, __m256 a, __m256 b, __m256 c, __m256 d)
{
  const __m256 abcd = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d)); /* per 128-bit half: a b c d */
  _mm_storeu_ps(p, _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1)));
}

/* Keys along the lanes: lane k holds key j0 + k, kept only if j0 + k < lim. */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX2 __m256 attngen_mask_lanes_avx2(__m256 v, int j0, int lim)
{
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256i keep = _mm256_cmpgt_epi32(_mm256_set1_epi32(lim - j0), lane);
  return _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), v, _mm256_castsi256_ps(keep));
}

/* SPDX-License-Identifier: MIT */
/* <immintrin.h> and the helpers the x86 ISAs share come first, from templates/isa/x86.c. */

/* AVX2 code is compiled per function, so the file needs no -mavx2; the runtime calls it only after cpuid and
 * xgetbv confirm AVX2, FMA and the OS's ymm state. */
#if defined(__GNUC__) || defined(__clang__)
#define ATTNGEN_TARGET_AVX2 __attribute__((target("avx2,fma")))
#else
#define ATTNGEN_TARGET_AVX2
#endif
/* Kernels that read an f16 cache also convert with F16C (the runtime checks it for them only). */
#if defined(__GNUC__) || defined(__clang__)
#define ATTNGEN_TARGET_AVX2_F16C __attribute__((target("avx2,fma,f16c")))
#else
#define ATTNGEN_TARGET_AVX2_F16C
#endif

/* 8 bfloat16 as 8 floats: each widened into the top half of a 32-bit lane (exact). */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX2 __m256 attngen_bf16_load_avx2(const uint16_t *p)
{
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16));
}

/* 8 int8 as 8 floats (exact; the caller applies the scale). An 8-byte load: no byte past the 8 is read. */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX2 __m256 attngen_i8_load_avx2(const int8_t *p)
{
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}

/* Keeps a loaded vector in a register. gcc otherwise folds the load into every FMA that uses it: decode's
 * 2-row dot-product block then loaded each K vector twice (1.45 loads per FMA, bound by the load ports; pinned:
 * h64/kv8 decode 1.12x in cache). An empty asm the value passes through; nothing is emitted for it. */
#if defined(__GNUC__)
#define ATTNGEN_PIN_AVX2(v) __asm__("" : "+x"(v))
#else
#define ATTNGEN_PIN_AVX2(v) ((void)0)
#endif

/* exp(x) for x <= 0 as used by online softmax, as 2^t with t = x·log2(e) = n + r, n = round(t), |r| <= 1/2: a
 * degree-5 polynomial for 2^r (fitted for relative error: 1.9e-7 in float arithmetic), n added to its exponent
 * field. 14 operations; the Cephes form it replaces (two-step ln2 reduction, degree 6, a clamp from above) took 19,
 * and the exponentials are a tenth of a head_dim-64 prefill's time. The single rounding of t costs u·|t|
 * relative: ~1e-6 at x = -10, where a softmax weight is 5e-5 of the largest. x < -87.3 (t < -126, including -inf
 * from masked keys) gives exactly 0; no result is denormal (t >= -126 rounds to n >= -126 with r >= 0). */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX2 __m256 attngen_exp_avx2(__m256 x)
{
  const __m256 lo = _mm256_set1_ps(-126.0f);
  const __m256 t = _mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f));
  /* keep t >= lo, and NaN (unordered), which max(lo, t) passes on, so a NaN score gives a NaN weight as in the
   * float64 reference instead of dropping its key; no other input changes */
  const __m256 keep = _mm256_cmp_ps(t, lo, _CMP_NLT_UQ);
  const __m256 tc = _mm256_max_ps(lo, t);
  const __m256 n = _mm256_round_ps(tc, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 r = _mm256_sub_ps(tc, n);
  __m256 p = _mm256_set1_ps(1.3264666777e-3f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(9.6714952961e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.5507335812e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(2.4022242427e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(6.9314700365e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i y = _mm256_add_epi32(_mm256_castps_si256(p), _mm256_slli_epi32(_mm256_cvtps_epi32(n), 23));
  return _mm256_and_ps(_mm256_castsi256_ps(y), keep);
}

/* tanh(x) = sign(x) (1 - e) / (1 + e) with e = exp(-2|x|) in [0, 1]: the exp above, which never overflows here;
 * |x| = inf gives +-1, NaN stays NaN. Logit soft-capping (softcap * tanh(s / softcap)) calls it; tests/cases.c
 * measures its largest error against float64 tanh and states the tolerance that follows. */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX2 __m256 attngen_tanh_avx2(__m256 x)
{
  const __m256 sign = _mm256_set1_ps(-0.0f), ax = _mm256_andnot_ps(sign, x);
  const __m256 e = attngen_exp_avx2(_mm256_mul_ps(ax, _mm256_set1_ps(-2.0f)));
  const __m256 t = _mm256_div_ps(_mm256_sub_ps(_mm256_set1_ps(1.0f), e), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
  return _mm256_or_ps(t, _mm256_and_ps(sign, x));
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

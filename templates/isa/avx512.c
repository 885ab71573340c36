/* SPDX-License-Identifier: MIT */
/* <immintrin.h> and the helpers the x86 ISAs share come first, from templates/isa/x86.c. */

/* AVX-512F code is compiled per function, so the file needs no -mavx512f; the runtime calls it only after cpuid
 * and xgetbv confirm AVX-512F and the OS's opmask and zmm state. Only AVX-512F instructions are used (float
 * and/or go through the integer forms: their float forms are AVX-512DQ). */
#if defined(__GNUC__) || defined(__clang__)
#define ATTNGEN_TARGET_AVX512 __attribute__((target("avx512f,avx2,fma")))
#else
#define ATTNGEN_TARGET_AVX512
#endif

/* 16 bfloat16 as 16 floats: each widened into the top half of a 32-bit lane (exact). */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX512 __m512 attngen_bf16_load_avx512(const uint16_t *p)
{
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)), 16));
}

/* 16 int8 as 16 floats (exact; the caller applies the scale). */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX512 __m512 attngen_i8_load_avx512(const int8_t *p)
{
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p)));
}

/* Keeps a loaded vector in a register (see templates/isa/avx2.c); "v": any of the 32 zmm registers. */
#if defined(__GNUC__)
#define ATTNGEN_PIN_AVX512(v) __asm__("" : "+v"(v))
#else
#define ATTNGEN_PIN_AVX512(v) ((void)0)
#endif

/* exp(x) for x <= 0 as used by online softmax: the same 2^(x·log2 e) reduction and degree-5 polynomial as
 * templates/isa/avx2.c (error budget there), so AVX2 and AVX-512 kernels agree to the last bit on each lane.
 * x < -87.3 (t < -126, including -inf from masked keys) gives exactly 0; no result is denormal. 2^n is applied
 * by vscalefps, masked to zero in the same instruction, where AVX2 adds n to the exponent field (cvt, shift,
 * add, then a masked move): both are exact for the normal results here, so the bits are the same in 3 fewer
 * instructions. */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX512 __m512 attngen_exp_avx512(__m512 x)
{
  const __m512 lo = _mm512_set1_ps(-126.0f);
  const __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f));
  const __mmask16 keep = _mm512_cmp_ps_mask(t, lo, _CMP_NLT_UQ); /* NaN kept, as in the AVX2 word */
  const __m512 tc = _mm512_max_ps(lo, t);
  const __m512 n = _mm512_roundscale_ps(tc, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 r = _mm512_sub_ps(tc, n);
  __m512 p = _mm512_set1_ps(1.3264666777e-3f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(9.6714952961e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.5507335812e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(2.4022242427e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(6.9314700365e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_maskz_scalef_ps(keep, p, n);
}

/* tanh(x) = sign(x) (1 - e) / (1 + e) with e = exp(-2|x|) in [0, 1]: the exp above, which never overflows here;
 * |x| = inf gives +-1, NaN stays NaN. Logit soft-capping (softcap * tanh(s / softcap)) calls it; tests/cases.c
 * measures its largest error against float64 tanh and states the tolerance that follows. */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX512 __m512 attngen_tanh_avx512(__m512 x)
{
  const __m512i sign = _mm512_set1_epi32(-2147483647 - 1), xi = _mm512_castps_si512(x);
  const __m512 ax = _mm512_castsi512_ps(_mm512_andnot_si512(sign, xi));
  const __m512 e = attngen_exp_avx512(_mm512_mul_ps(ax, _mm512_set1_ps(-2.0f)));
  const __m512 t = _mm512_div_ps(_mm512_sub_ps(_mm512_set1_ps(1.0f), e), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(t), _mm512_and_si512(sign, xi)));
}

/* Lanes (query rows) whose visible-key count lim is <= key j become -inf. */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX512 __m512 attngen_mask_avx512(__m512 v, int j, __m512 lim)
{
  const __mmask16 visible = _mm512_cmp_ps_mask(_mm512_set1_ps((float)j), lim, _CMP_LT_OQ);
  return _mm512_mask_blend_ps(visible, _mm512_set1_ps(-INFINITY), v);
}

/* A running max that is still -inf (row saw no key yet) is used as 0 so that exp(s - m) never sees inf - inf. */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX512 __m512 attngen_finite_or_zero_avx512(__m512 m)
{
  return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(m, _mm512_set1_ps(-INFINITY), _CMP_NEQ_UQ), m);
}

/* The two 256-bit halves added (or maxed), then reduced as AVX2 does. */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX512 __m256 attngen_fold_add_avx512(__m512 v)
{
  return _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

ATTNGEN_HELPER ATTNGEN_TARGET_AVX512 float attngen_hsum_avx512(__m512 v)
{
  const __m256 h = attngen_fold_add_avx512(v);
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

ATTNGEN_HELPER ATTNGEN_TARGET_AVX512 float attngen_hmax_avx512(__m512 v)
{
  const __m256 h = _mm256_max_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

/* p[0..3] = the horizontal sums of a, b, c, d: each folded to 256 bits, then two levels of hadd transpose the
 * four reductions into one vector. */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX512 void attngen_hsum4_avx512(float *p, __m512 a, __m512 b, __m512 c, __m512 d)
{
  const __m256 a8 = attngen_fold_add_avx512(a), b8 = attngen_fold_add_avx512(b);
  const __m256 c8 = attngen_fold_add_avx512(c), d8 = attngen_fold_add_avx512(d);
  const __m256 abcd = _mm256_hadd_ps(_mm256_hadd_ps(a8, b8), _mm256_hadd_ps(c8, d8)); /* per 128-bit half: a b c d */
  _mm_storeu_ps(p, _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1)));
}

/* Sixteen horizontal sums in one tree: four levels, each adding two vectors' halves after one shuffle (a blend the
 * first), so each level halves what is left and the last holds all sixteen sums. Against four attngen_hsum4_avx512
 * (hadd: two shuffles an add), 45 instructions instead of about 80, 15 of them shuffles instead of 44: on the port the
 * 512-bit FMAs share. attngen_fold2: [a's 8-lane fold | b's]; fold4: four 4-lane folds from two fold2s; fold8 and
 * fold16 the same within each 128-bit lane, so fold16(fold8(r0, r1), fold8(r2, r3)) of four fold4s r_m of v[m][0..3]
 * holds v[m][k]'s sum at lane 4 k + m. */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX512 __m512 attngen_fold2_avx512(__m512 a, __m512 b)
{
  return _mm512_add_ps(_mm512_mask_blend_ps(0xFF00, a, b), _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(1, 0, 3, 2)));
}

ATTNGEN_HELPER ATTNGEN_TARGET_AVX512 __m512 attngen_fold4_avx512(__m512 a, __m512 b)
{
  return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(2, 0, 2, 0)), _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

ATTNGEN_HELPER ATTNGEN_TARGET_AVX512 __m512 attngen_fold8_avx512(__m512 a, __m512 b)
{
  return _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(1, 0, 1, 0)), _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
}

ATTNGEN_HELPER ATTNGEN_TARGET_AVX512 __m512 attngen_fold16_avx512(__m512 a, __m512 b)
{
  return _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

/* Keys along the lanes: lane k holds key j0 + k, kept only if j0 + k < lim. */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX512 __m512 attngen_mask_lanes_avx512(__m512 v, int j0, int lim)
{
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __mmask16 keep = _mm512_cmpgt_epi32_mask(_mm512_set1_epi32(lim - j0), lane);
  return _mm512_mask_blend_ps(keep, _mm512_set1_ps(-INFINITY), v);
}

/* dst[c * ds + i] = src[i][k0 + c] * s for i, c < 16: a 16x16 block of Q rows into the transposed (rows along the
 * lanes) tile, as four 8x8 quarters (templates/isa/x86.c). */
ATTNGEN_HELPER ATTNGEN_TARGET_AVX512 void attngen_transpose_scaled_avx512(const float *const *src, int k0, float s,
                                                                        float *dst, ptrdiff_t ds)
{
  const __m256 m = _mm256_set1_ps(s);
  attngen_transpose8_scaled_x86(src, k0, m, dst, ds);
  attngen_transpose8_scaled_x86(src + 8, k0, m, dst + 8, ds);
  attngen_transpose8_scaled_x86(src, k0 + 8, m, dst + 8 * ds, ds);
  attngen_transpose8_scaled_x86(src + 8, k0 + 8, m, dst + 8 * ds + 8, ds);
}

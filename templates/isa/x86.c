/* SPDX-License-Identifier: MIT */
#include <immintrin.h>

/* Helpers shared by the x86 ISAs (AVX2, AVX-512), emitted once per file before the first of their sections. They
 * are compiled per function for AVX2 + FMA, which every x86 ISA's code includes, so any x86 kernel can inline them. */
#if defined(__GNUC__) || defined(__clang__)
#define ATTNGEN_TARGET_X86 __attribute__((target("avx2,fma")))
#else
#define ATTNGEN_TARGET_X86
#endif

/* dst[c * ds + i] = src[i][k0 + c] * m for i, c < 8: an 8x8 block of Q rows into the transposed (rows along the
 * lanes) tile, 24 shuffles instead of 64 scalar stores. AVX-512 transposes its 16x16 blocks as four of these. */
ATTNGEN_HELPER ATTNGEN_TARGET_X86 void attngen_transpose8_scaled_x86(const float *const *src, int k0, __m256 m,
                                                                    float *dst, ptrdiff_t ds)
{
  const __m256 r0 = _mm256_mul_ps(_mm256_loadu_ps(src[0] + k0), m), r1 = _mm256_mul_ps(_mm256_loadu_ps(src[1] + k0), m);
  const __m256 r2 = _mm256_mul_ps(_mm256_loadu_ps(src[2] + k0), m), r3 = _mm256_mul_ps(_mm256_loadu_ps(src[3] + k0), m);
  const __m256 r4 = _mm256_mul_ps(_mm256_loadu_ps(src[4] + k0), m), r5 = _mm256_mul_ps(_mm256_loadu_ps(src[5] + k0), m);
  const __m256 r6 = _mm256_mul_ps(_mm256_loadu_ps(src[6] + k0), m), r7 = _mm256_mul_ps(_mm256_loadu_ps(src[7] + k0), m);
  /* pairs of rows interleaved, then quads: u0 holds column 0 of rows 0-3 (low half) and column 4 (high half) */
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  _mm256_storeu_ps(dst, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(dst + ds, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(dst + 2 * ds, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(dst + 3 * ds, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(dst + 4 * ds, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(dst + 5 * ds, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(dst + 6 * ds, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(dst + 7 * ds, _mm256_permute2f128_ps(u3, u7, 0x31));
}

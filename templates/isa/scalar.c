/* SPDX-License-Identifier: MIT */
/* libm expf (correctly rounded to ~1 ulp); expf(-inf) is exactly 0. */
static inline float attngen_exp_scalar(float x) { return expf(x); }
static inline float attngen_maxf(float a, float b) { return a > b ? a : b; }

/* SPDX-License-Identifier: MIT */
/* libm expf (correctly rounded to ~1 ulp); expf(-inf) is exactly 0. */
ATTNGEN_HELPER float attngen_exp_scalar(float x) { return expf(x); }
ATTNGEN_HELPER float attngen_tanh_scalar(float x) { return tanhf(x); }
ATTNGEN_HELPER float attngen_maxf(float a, float b) { return a > b ? a : b; }

-- SPDX-License-Identifier: MIT
-- python/tests: a GQA model with RoPE and paged kernels for pages of 4 and 16 rows, on every cache type the paged
-- tests run (python/tests/test_paged.py); causal_padding only (it serves the step, ragged batches and the cascade).
return {
  name      = "py-paged-h4-kv2-d32",
  source    = "python/tests/test_paged.py",
  heads     = 4,
  kv_heads  = 2,
  head_dim  = 32,
  masks     = { "causal_padding" },
  phases    = { "prefill", "decode" },
  isas      = { "avx512", "avx2", "neon", "scalar" },
  kv_dtype  = { "f32", "f16", "bf16", "int8" },
  page_size = { 4, 16 },
  rope      = { style = "half", theta = 10000 },
}

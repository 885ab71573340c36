-- SPDX-License-Identifier: MIT
-- Test config: every K/V cache storage type as specialized kernels (fp32, f16, bf16, int8 with one scale per row,
-- per 64 and per 32 elements); GQA 2, 4 heads of 64, RoPE half style, masks none / causal / padding
return {
  name     = "t-kvtype-h4-kv2-d64",
  source   = "tests/configs/t-kvtype-h4-kv2-d64.lua (synthetic test shape: every kv_dtype, RoPE half style, theta 10000)",
  heads    = 4,
  kv_heads = 2,
  head_dim = 64,
  masks    = { "none", "causal", "padding" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  kv_dtype = { "f32", "f16", "bf16", "int8", "int8_g64", "int8_g32" },
  rope     = { style = "half", theta = 10000 },
}

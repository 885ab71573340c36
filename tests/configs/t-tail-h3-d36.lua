-- SPDX-License-Identifier: MIT
-- Test config: head_dim 36 (a multiple of 4 but not of 8: an AVX2 tail, none for NEON), GQA ratio 3
return {
  name     = "t-tail-h3-d36",
  source   = "tests/configs/t-tail-h3-d36.lua (synthetic test shape: head_dim 36, 3 heads sharing 1 kv head)",
  heads    = 3,
  kv_heads = 1,
  head_dim = 36,
  masks    = { "none", "causal", "padding", "causal_padding", "cross" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
}

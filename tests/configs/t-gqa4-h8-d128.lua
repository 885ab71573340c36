-- SPDX-License-Identifier: MIT
-- Test config: grouped-query attention, ratio 4 (8 heads, 2 kv heads), head_dim 128
return {
  name     = "t-gqa4-h8-d128",
  source   = "tests/configs/t-gqa4-h8-d128.lua (synthetic test shape: grouped-query attention, ratio 4 (8 heads, 2 kv heads), head_dim 128)",
  heads    = 8,
  kv_heads = 2,
  head_dim = 128,
  masks    = { "none", "causal", "padding", "causal_padding", "cross" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
}

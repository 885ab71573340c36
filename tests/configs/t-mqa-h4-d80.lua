-- SPDX-License-Identifier: MIT
-- Test config: multi-query attention, 4 query heads share 1 kv head, head_dim 80 (not a power of two)
return {
  name     = "t-mqa-h4-d80",
  source   = "tests/configs/t-mqa-h4-d80.lua (synthetic test shape: multi-query attention, 4 query heads share 1 kv head, head_dim 80 (not a power of two))",
  heads    = 4,
  kv_heads = 1,
  head_dim = 80,
  masks    = { "none", "causal", "padding", "causal_padding", "cross" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
}

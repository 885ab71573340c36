-- SPDX-License-Identifier: MIT
-- Test config: grouped-query attention, ratio 7 (14 heads, 2 kv heads), head_dim 72
return {
  name     = "t-gqa7-h14-d72",
  source   = "tests/configs/t-gqa7-h14-d72.lua (synthetic test shape: grouped-query attention, ratio 7 (14 heads, 2 kv heads), head_dim 72)",
  heads    = 14,
  kv_heads = 2,
  head_dim = 72,
  masks    = { "none", "causal", "padding", "causal_padding", "cross" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
}

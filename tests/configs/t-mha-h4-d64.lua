-- SPDX-License-Identifier: MIT
-- Test config: multi-head attention, 4 heads of 64
return {
  name     = "t-mha-h4-d64",
  source   = "tests/configs/t-mha-h4-d64.lua (synthetic test shape: multi-head attention, 4 heads of 64)",
  heads    = 4,
  kv_heads = 4,
  head_dim = 64,
  masks    = { "none", "causal", "padding", "causal_padding", "cross" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
}

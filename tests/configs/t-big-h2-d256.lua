-- SPDX-License-Identifier: MIT
-- Test config: large head_dim 256, MQA ratio 2 (2 heads, 1 kv head)
return {
  name     = "t-big-h2-d256",
  source   = "tests/configs/t-big-h2-d256.lua (synthetic test shape: large head_dim 256, MQA ratio 2 (2 heads, 1 kv head))",
  heads    = 2,
  kv_heads = 1,
  head_dim = 256,
  masks    = { "none", "causal", "padding", "causal_padding", "cross" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
}

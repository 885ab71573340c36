-- SPDX-License-Identifier: MIT
-- Test config: odd head_dim 17 (a tail for every vector width), MHA with 2 heads
return {
  name     = "t-tail-h2-d17",
  source   = "tests/configs/t-tail-h2-d17.lua (synthetic test shape: head_dim 17, 2 heads, 2 kv heads)",
  heads    = 2,
  kv_heads = 2,
  head_dim = 17,
  masks    = { "none", "causal", "padding", "causal_padding", "cross" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
}

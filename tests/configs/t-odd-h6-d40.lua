-- SPDX-License-Identifier: MIT
-- Test config: odd head_dim 40 (not a multiple of 16), GQA ratio 2 (6 heads, 3 kv heads)
return {
  name     = "t-odd-h6-d40",
  source   = "tests/configs/t-odd-h6-d40.lua (synthetic test shape: odd head_dim 40 (not a multiple of 16), GQA ratio 2 (6 heads, 3 kv heads))",
  heads    = 6,
  kv_heads = 3,
  head_dim = 40,
  masks    = { "none", "causal", "padding", "causal_padding", "cross" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
}

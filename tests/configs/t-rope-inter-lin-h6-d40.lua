-- SPDX-License-Identifier: MIT
-- Test config: RoPE, interleaved pairs (GPT-J), linear scaling, partial rotary (24 of 40 dims); GQA ratio 2
return {
  name     = "t-rope-inter-lin-h6-d40",
  source   = "tests/configs/t-rope-inter-lin-h6-d40.lua (synthetic test shape: RoPE interleaved, linear x4, rotary_dim 24 of 40)",
  heads    = 6,
  kv_heads = 3,
  head_dim = 40,
  masks    = { "causal", "causal_padding" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  rope     = { style = "interleaved", theta = 10000, rotary_dim = 24, scaling = { type = "linear", factor = 4 } },
}

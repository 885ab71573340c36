-- SPDX-License-Identifier: MIT
-- Test config: RoPE, half-split pairs, linear scaling, partial rotary on an odd head_dim (16 of 17 dims)
return {
  name     = "t-rope-half-lin-h2-d17",
  source   = "tests/configs/t-rope-half-lin-h2-d17.lua (synthetic test shape: RoPE half, linear x2, rotary_dim 16 of 17)",
  heads    = 2,
  kv_heads = 2,
  head_dim = 17,
  masks    = { "causal", "causal_padding" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  rope     = { style = "half", theta = 1000000, rotary_dim = 16, scaling = { type = "linear", factor = 2 } },
}

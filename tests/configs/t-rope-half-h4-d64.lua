-- SPDX-License-Identifier: MIT
-- Test config: RoPE, half-split pairs (HF rotate_half), no scaling, full rotary dims; MHA, 4 heads of 64
return {
  name     = "t-rope-half-h4-d64",
  source   = "tests/configs/t-rope-half-h4-d64.lua (synthetic test shape: RoPE half style, theta 10000, no scaling)",
  heads    = 4,
  kv_heads = 4,
  head_dim = 64,
  masks    = { "causal", "causal_padding" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  rope     = { style = "half", theta = 10000 },
}

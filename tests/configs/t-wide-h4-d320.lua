-- SPDX-License-Identifier: MIT
-- Test config: head_dim 320, past the full-unroll limit (256): the Q·Kᵀ microkernel loops over chunks of 64
-- and unrolls the rest; GQA ratio 2 (4 heads, 2 kv heads)
return {
  name     = "t-wide-h4-d320",
  source   = "tests/configs/t-wide-h4-d320.lua (synthetic test shape: head_dim 320 beyond the full-unroll limit)",
  heads    = 4,
  kv_heads = 2,
  head_dim = 320,
  masks    = { "none", "causal", "padding", "causal_padding", "cross" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
}

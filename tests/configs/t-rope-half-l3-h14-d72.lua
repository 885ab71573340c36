-- SPDX-License-Identifier: MIT
-- Test config: RoPE, half-split pairs, llama3 frequency scaling, partial rotary (48 of 72 dims); GQA ratio 7.
-- With theta 500000 and 24 pairs the wavelengths 2*pi/inv_freq span 6 .. 1.4e6 positions: pairs 0-10 are below
-- original/high_freq_factor = 2048 (kept), 11-13 in the smoothed band up to original/low_freq_factor = 8192,
-- 14-23 above it (divided by factor): all three branches of the llama3 rule.
return {
  name     = "t-rope-half-l3-h14-d72",
  source   = "tests/configs/t-rope-half-l3-h14-d72.lua (synthetic test shape: RoPE half, llama3 scaling, rotary_dim 48 of 72)",
  heads    = 14,
  kv_heads = 2,
  head_dim = 72,
  masks    = { "causal" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  rope     = { style = "half", theta = 500000, rotary_dim = 48,
               scaling = { type = "llama3", factor = 8, low_freq_factor = 1, high_freq_factor = 4,
                           original_max_position_embeddings = 8192 } },
}

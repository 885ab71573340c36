-- SPDX-License-Identifier: MIT
-- Test config: RoPE, interleaved pairs, llama3 scaling (Llama 3.2's factors), full rotary dims; GQA ratio 3.
-- 18 pairs: wavelengths 6 .. 1.2e6; pairs 8-9 fall in the smoothed band (2048 .. 8192).
return {
  name     = "t-rope-inter-l3-h3-d36",
  source   = "tests/configs/t-rope-inter-l3-h3-d36.lua (synthetic test shape: RoPE interleaved, llama3 scaling)",
  heads    = 3,
  kv_heads = 1,
  head_dim = 36,
  masks    = { "causal", "causal_padding" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  rope     = { style = "interleaved", theta = 500000,
               scaling = { type = "llama3", factor = 32, low_freq_factor = 1, high_freq_factor = 4,
                           original_max_position_embeddings = 8192 } },
}

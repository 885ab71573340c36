-- SPDX-License-Identifier: MIT
-- Test config: RoPE with YaRN scaling as gpt-oss sets it ("rope_theta": 150000, "rope_scaling": { "rope_type":
-- "yarn", "factor": 32, "beta_fast": 32, "beta_slow": 1, "original_max_position_embeddings": 4096, "truncate":
-- false }), at head_dim 64: the ramp runs from pair 8.09 to 17.4, so the 32 pairs cover all three branches (kept,
-- ramp, divided by 32), and cos and sin carry the attention factor 0.1 ln 32 + 1 = 1.3466. MQA (4 heads, 1 kv head).
return {
  name     = "t-rope-yarn-h4-kv1-d64",
  source   = "tests/configs/t-rope-yarn-h4-kv1-d64.lua (synthetic test shape: RoPE with gpt-oss's YaRN scaling)",
  heads    = 4,
  kv_heads = 1,
  head_dim = 64,
  masks    = { "causal", "causal_padding" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  rope     = { style = "half", theta = 150000,
               scaling = { type = "yarn", factor = 32, beta_fast = 32, beta_slow = 1,
                           original_max_position_embeddings = 4096, truncate = false } },
}

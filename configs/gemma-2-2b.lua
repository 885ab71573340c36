-- SPDX-License-Identifier: MIT
-- Gemma 2 2B: grouped-query attention, 8 query heads sharing 4 key/value heads, head_dim 256.
-- From config.json:
--   "hidden_size": 2304, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
--   "query_pre_attn_scalar": 256, "attn_logit_softcapping": 50.0, "sliding_window": 4096
-- Scale: Gemma 2 scales scores by query_pre_attn_scalar^-0.5 = 256^-0.5 = 1/sqrt(head_dim), which is
-- attngen's default, so no `scale` is set here.
-- NOT MODELLED (not implemented in attngen yet):
--   * logit soft-capping: Gemma 2 applies 50 * tanh(score / 50) before the softmax; these kernels do
--     not, so they match Gemma 2 only where |scores| stay well below 50.
--   * sliding window: every other layer attends to only the last 4096 keys; exact here while
--     kv_len <= 4096 ("max_position_embeddings": 8192).
return {
  name     = "gemma-2-2b",
  source   = "https://huggingface.co/google/gemma-2-2b/blob/main/config.json",
  heads    = 8,
  kv_heads = 4,
  head_dim = 256,
  masks    = { "causal", "causal_padding" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  -- RoPE, from the same config.json: "rope_theta": 10000.0, no "rope_scaling". HF's Gemma2RotaryEmbedding:
  -- rotate_half over all 256 dims, style "half".
  rope     = { style = "half", theta = 10000, rotary_dim = 256 },
}

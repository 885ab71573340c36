-- SPDX-License-Identifier: MIT
-- Mistral 7B v0.1: grouped-query attention, 32 query heads sharing 8 key/value heads.
-- From config.json:
--   "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
--   "sliding_window": 4096, "max_position_embeddings": 32768
--   (no "head_dim" key: head_dim = 4096 / 32 = 128)
-- Sliding window: "sliding_window": 4096 on every layer: query i sees keys i - 4096 < j <= i (4096 keys, itself
-- included, transformers' convention), so the kernels are exact at every length; keys before the window are never
-- read (a rolling-buffer cache that keeps only the last 4096 rows works too).
-- make check-catalog compares these values with transformers' MistralConfig (its defaults are v0.1's attention
-- values; its max_position_embeddings default, 131072, is not the v0.1 file's) and Mistral's attention and RoPE.
return {
  name     = "mistral-7b",
  source   = "https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json",
  heads    = 32,
  kv_heads = 8,
  head_dim = 128,
  masks    = { "causal", "causal_padding" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  -- RoPE, from the same (v0.1) config.json: "rope_theta": 10000.0, no "rope_scaling" (v0.2 and later raised
  -- rope_theta to 1e6: a different config). HF's MistralRotaryEmbedding: rotate_half over head_dim, style "half".
  rope     = { style = "half", theta = 10000, rotary_dim = 128 },
  window   = 4096,
}

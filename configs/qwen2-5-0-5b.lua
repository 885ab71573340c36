-- SPDX-License-Identifier: MIT
-- Qwen2.5 0.5B: grouped-query attention, 14 query heads sharing 2 key/value heads (ratio 7).
-- From config.json:
--   "hidden_size": 896, "num_attention_heads": 14, "num_key_value_heads": 2,
--   "use_sliding_window": false, "max_position_embeddings": 32768
--   (no "head_dim" key: head_dim = 896 / 14 = 64)
-- Named qwen2-5-0-5b because config names allow only [a-z0-9-].
return {
  name     = "qwen2-5-0-5b",
  source   = "https://huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json",
  heads    = 14,
  kv_heads = 2,
  head_dim = 64,
  masks    = { "causal", "causal_padding" },
  phases   = { "prefill", "decode" },
  isas     = { "avx2", "neon", "scalar" },
  -- RoPE, from the same config.json: "rope_theta": 1000000.0, "rope_scaling": null. HF's Qwen2RotaryEmbedding:
  -- rotate_half over head_dim, style "half".
  rope     = { style = "half", theta = 1000000, rotary_dim = 64 },
}

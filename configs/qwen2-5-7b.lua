-- SPDX-License-Identifier: MIT
-- Qwen2.5 7B: grouped-query attention, 28 query heads sharing 4 key/value heads (ratio 7).
-- From config.json:
--   "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
--   "use_sliding_window": false, "max_position_embeddings": 131072
--   (no "head_dim" key: head_dim = 3584 / 28 = 128)
-- Named qwen2-5-7b because config names allow only [a-z0-9-].
return {
  name     = "qwen2-5-7b",
  source   = "https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json",
  heads    = 28,
  kv_heads = 4,
  head_dim = 128,
  masks    = { "causal", "causal_padding" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  -- RoPE, from the same config.json: "rope_theta": 1000000.0, "rope_scaling": null. HF's Qwen2RotaryEmbedding:
  -- rotate_half over head_dim, style "half".
  rope     = { style = "half", theta = 1000000, rotary_dim = 128 },
}

-- SPDX-License-Identifier: MIT
-- Llama 3.2 1B: grouped-query attention, 32 query heads sharing 8 key/value heads, head_dim 64.
-- From config.json:
--   "hidden_size": 2048, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64,
--   "max_position_embeddings": 131072
-- Named llama-3-2-1b because config names allow only [a-z0-9-].
return {
  name     = "llama-3-2-1b",
  source   = "https://huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json",
  heads    = 32,
  kv_heads = 8,
  head_dim = 64,
  masks    = { "causal", "causal_padding" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  -- RoPE, from the same config.json: "rope_theta": 500000.0, "rope_scaling": { "rope_type": "llama3",
  -- "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192 }.
  -- HF's LlamaRotaryEmbedding (rotate_half, all head_dim dims): style "half".
  rope     = { style = "half", theta = 500000, rotary_dim = 64,
               scaling = { type = "llama3", factor = 32, low_freq_factor = 1, high_freq_factor = 4,
                           original_max_position_embeddings = 8192 } },
}

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
  isas     = { "avx2", "neon", "scalar" },
}

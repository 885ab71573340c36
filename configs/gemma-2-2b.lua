-- SPDX-License-Identifier: MIT
-- Gemma 2 2B: grouped-query attention, 8 query heads sharing 4 key/value heads, head_dim 256.
-- From config.json:
--   "hidden_size": 2304, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
--   "num_hidden_layers": 26, "query_pre_attn_scalar": 256, "attn_logit_softcapping": 50.0,
--   "sliding_window": 4096, "max_position_embeddings": 8192
-- Scale: Gemma 2 scales scores by query_pre_attn_scalar^-0.5 = 256^-0.5 = 0.0625 (here also 1/sqrt(head_dim)).
-- Soft-cap: 50 * tanh(s / 50) on the scaled scores, before the mask, on every layer ("attn_logit_softcapping").
-- Two kinds of layers (transformers' Gemma2Config layer_types: "sliding_attention" for even layer indices,
-- "full_attention" for odd ones): "local" attends to the last 4096 keys (query i sees i - 4096 < j <= i), "global"
-- to all of them. Each kind is a table, attngen_table_gemma_2_2b_local / _global; attngen_layers_gemma_2_2b[l] is
-- layer l's. Exact at every length.
-- make check-catalog compares these values with transformers' Gemma2Config (its defaults are this 2B's, though its
-- docstring names gemma2-7b) and Gemma 2's attention (scaling, soft-cap) and RoPE.
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
  -- rotate_half over all 256 dims, style "half"; the same on both kinds of layers.
  rope     = { style = "half", theta = 10000, rotary_dim = 256 },
  scale    = 0.0625,
  softcap  = 50,
  kinds    = {
    { name = "local", window = 4096 },
    { name = "global" },
  },
  layers   = { "local", "global", "local", "global", "local", "global", "local", "global", "local", "global",
              "local", "global", "local", "global", "local", "global", "local", "global", "local", "global",
              "local", "global", "local", "global", "local", "global" },
}

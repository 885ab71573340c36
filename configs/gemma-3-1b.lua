-- SPDX-License-Identifier: MIT
-- Gemma 3 1B: multi-query attention, 4 query heads sharing 1 key/value head, head_dim 256.
-- From config.json (google/gemma-3-1b-pt):
--   "hidden_size": 1152, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256,
--   "num_hidden_layers": 26, "query_pre_attn_scalar": 256, "sliding_window": 512, "sliding_window_pattern": 6,
--   "rope_theta": 1000000, "rope_local_base_freq": 10000, "rope_scaling": null,
--   "attn_logit_softcapping": null, "max_position_embeddings": 32768
-- Scale: query_pre_attn_scalar^-0.5 = 256^-0.5 = 0.0625 (here also 1/sqrt(head_dim)). No soft-cap.
-- Two kinds of layers, 5 local : 1 global (sliding_window_pattern 6: layer l is global when (l + 1) % 6 == 0, so
-- layers 5, 11, 17 and 23; transformers' layer_types says the same): "local" attends to the last 512 keys (query i
-- sees i - 512 < j <= i) with RoPE theta 10000 (rope_local_base_freq); "global" to every key with theta 1e6
-- (rope_theta). The 1B model has no RoPE scaling ("rope_scaling": null; the 4B and larger use linear factor 8 on
-- the global layers: a different config). Gemma 3 RMS-normalizes q and k per head before RoPE: that happens before
-- attention, outside these kernels. Exact at every length.
-- make check-catalog compares these values with transformers' Gemma3TextConfig given this file's values (its
-- defaults are a 4B-like shape) and Gemma 3's attention and per-layer-type RoPE.
return {
  name     = "gemma-3-1b",
  source   = "https://huggingface.co/google/gemma-3-1b-pt/blob/main/config.json",
  heads    = 4,
  kv_heads = 1,
  head_dim = 256,
  -- HF's Gemma3RotaryEmbedding: rotate_half over all 256 dims, style "half", on both kinds
  rope     = { style = "half", theta = 1000000, rotary_dim = 256 },
  scale    = 0.0625,
  masks    = { "causal", "causal_padding" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  kinds    = {
    { name = "local", window = 512, rope = { style = "half", theta = 10000, rotary_dim = 256 } },
    { name = "global" },
  },
  layers   = { "local", "local", "local", "local", "local", "global",
              "local", "local", "local", "local", "local", "global",
              "local", "local", "local", "local", "local", "global",
              "local", "local", "local", "local", "local", "global",
              "local", "local" },
}

-- SPDX-License-Identifier: MIT
-- gpt-oss 20B: grouped-query attention, 64 query heads sharing 8 key/value heads, head_dim 64.
-- From config.json (openai/gpt-oss-20b):
--   "hidden_size": 2880, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,
--   "num_hidden_layers": 24, "sliding_window": 128, "max_position_embeddings": 131072,
--   "layer_types": [ "sliding_attention", "full_attention", ... ] (alternating, layer 0 sliding),
--   "rope_theta": 150000, "rope_scaling": { "rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0,
--   "beta_slow": 1.0, "original_max_position_embeddings": 4096, "truncate": false }
-- Sinks: every attention layer has a learned logit per query head ("sinks", in the weights, not the config) that
-- joins the softmax denominator with no value row; the kernels take them at run time (attngen_args.sinks[64]).
-- Scale: head_dim^-0.5, the default. Two kinds of layers: "local" attends to the last 128 keys (query i sees
-- i - 128 < j <= i), "global" to every key. Exact at every length.
-- make check-catalog compares these values with transformers' GptOssConfig (its attention defaults are the 20B's; its
-- 36 layers and 128 experts are gpt-oss-120b's, so 24 and 32 from this file) and gpt-oss's attention and YaRN RoPE.
return {
  name     = "gpt-oss-20b",
  source   = "https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json",
  heads    = 64,
  kv_heads = 8,
  head_dim = 64,
  -- HF's GptOssRotaryEmbedding: rotate_half over all 64 dims (style "half"), YaRN as transformers'
  -- _compute_yarn_parameters; cos and sin carry its attention factor 0.1 ln(32) + 1
  rope     = { style = "half", theta = 150000, rotary_dim = 64,
               scaling = { type = "yarn", factor = 32, beta_fast = 32, beta_slow = 1,
                           original_max_position_embeddings = 4096, truncate = false } },
  sinks    = true,
  masks    = { "causal", "causal_padding" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  kinds    = {
    { name = "local", window = 128 },
    { name = "global" },
  },
  layers   = { "local", "global", "local", "global", "local", "global", "local", "global",
              "local", "global", "local", "global", "local", "global", "local", "global",
              "local", "global", "local", "global", "local", "global", "local", "global" },
}

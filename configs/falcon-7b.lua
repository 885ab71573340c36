-- SPDX-License-Identifier: MIT
-- Falcon 7B: multi-query attention, 71 query heads sharing ONE key/value head.
-- From config.json:
--   "hidden_size": 4544, "num_attention_heads": 71, "multi_query": true,
--   "new_decoder_architecture": false, "num_kv_heads": 71  (head_dim = 4544 / 71 = 64)
-- The "num_kv_heads": 71 entry is ignored for this model: with multi_query true and the old decoder
-- architecture, transformers' Falcon uses a single K/V head (num_kv_heads = 1).
-- 71 is prime, so this is also the odd-head-count case.
return {
  name     = "falcon-7b",
  source   = "https://huggingface.co/tiiuae/falcon-7b/blob/main/config.json",
  heads    = 71,
  kv_heads = 1,
  head_dim = 64,
  masks    = { "causal" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  -- RoPE: config.json has "alibi": false (so rotary positions) and no "rope_theta" key, so transformers'
  -- FalconConfig default rope_theta = 10000.0 applies, without scaling. Falcon's rotary embedding (HF
  -- FalconRotaryEmbedding, like the original RW modelling code) uses rotate_half over all 64 dims: style "half".
  rope     = { style = "half", theta = 10000, rotary_dim = 64 },
}

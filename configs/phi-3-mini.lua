-- SPDX-License-Identifier: MIT
-- Phi-3 mini (4k instruct): multi-head attention, 32 heads, head_dim 96 (not a power of two).
-- From config.json:
--   "hidden_size": 3072, "num_attention_heads": 32, "num_key_value_heads": 32,
--   "max_position_embeddings": 4096, "sliding_window": 2047
--   (no "head_dim" key: head_dim = 3072 / 32 = 96)
-- Sliding window: "sliding_window": 2047, as transformers' Phi3 attention applies it (query i sees keys
-- i - 2047 < j <= i, 2047 keys, itself included), so the kernels are exact at every length.
-- make check-catalog compares these values with transformers' Phi3Config (its defaults are this model's, except
-- "sliding_window", None there) and Phi-3's attention, sliding-window mask and RoPE.
return {
  name     = "phi-3-mini",
  source   = "https://huggingface.co/microsoft/Phi-3-mini-4k-instruct/blob/main/config.json",
  heads    = 32,
  kv_heads = 32,
  head_dim = 96,
  masks    = { "causal" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  -- RoPE, from the same config.json: "rope_theta": 10000.0, "rope_scaling": null (the 4k model; the 128k variant,
  -- Phi-3-mini-128k-instruct, uses "longrope" scaling and is a different config). No partial_rotary_factor: all 96
  -- dims rotate. HF's Phi3 attention applies rotate_half: style "half".
  rope     = { style = "half", theta = 10000, rotary_dim = 96 },
  window   = 2047,
}

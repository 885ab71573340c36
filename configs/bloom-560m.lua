-- SPDX-License-Identifier: MIT
-- BLOOM 560M: multi-head attention, 16 heads, head_dim 64, positions by ALiBi (no RoPE, no position embeddings).
-- From config.json (bigscience/bloom-560m):
--   "hidden_size": 1024, "n_head": 16, "n_layer": 24
--   (no "head_dim" and no key/value head count: head_dim = 1024 / 16 = 64, multi-head)
-- ALiBi: each scaled score gains slope_h * (j - i), key minus query position; slopes by transformers'
-- build_alibi_tensor (16 heads, a power of two: 2^(-8 (h + 1) / 16) = 2^(-(h + 1) / 2)), max_bias 8. BLOOM adds
-- slope_h * j, which differs from this by a constant per row: the softmax is the same. Scale: head_dim^-0.5.
-- make check-catalog compares these values with transformers' BloomConfig given this file's shape (its defaults are
-- a toy one) and BLOOM's own ALiBi slopes (_get_alibi_slopes) and scaling.
return {
  name     = "bloom-560m",
  source   = "https://huggingface.co/bigscience/bloom-560m/blob/main/config.json",
  heads    = 16,
  kv_heads = 16,
  head_dim = 64,
  masks    = { "causal", "causal_padding" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  alibi    = true,
}

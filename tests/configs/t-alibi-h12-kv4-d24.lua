-- SPDX-License-Identifier: MIT
-- Test config: ALiBi with GQA (3 query heads per kv head, one slope each) and 12 heads, not a power of two (BLOOM's
-- rule: the slopes of 8 heads, then 4 interleaved ones), with and without a causal mask.
return {
  name     = "t-alibi-h12-kv4-d24",
  source   = "tests/configs/t-alibi-h12-kv4-d24.lua (synthetic test shape: ALiBi, 12 heads, GQA 3)",
  heads = 12, kv_heads = 4, head_dim = 24,
  masks = { "none", "causal", "causal_padding", "cross" }, phases = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  alibi    = true,
}

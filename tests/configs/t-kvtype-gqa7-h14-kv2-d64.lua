-- SPDX-License-Identifier: MIT
-- Test config: a group of 7 (Qwen2.5-0.5B's 14 heads on 2 kv heads) on every cache type whose groups fit head_dim
-- 64, so the decode blocks made for groups of 7 and 8 (one block of 8 rows, an edge of 7 live rows; AVX2's int8
-- blocks of 8 rows x 1 key) run on 16- and 8-bit caches, token-major and head-major, against the reference.
return {
  name     = "t-kvtype-gqa7-h14-kv2-d64",
  source   = "tests/configs/t-kvtype-gqa7-h14-kv2-d64.lua (synthetic test shape: group 7 on every cache type)",
  heads    = 14,
  kv_heads = 2,
  head_dim = 64,
  masks    = { "causal" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "scalar" },
  kv_dtype = { "f32", "f16", "bf16", "int8", "int8_g32" },
}

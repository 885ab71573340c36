-- SPDX-License-Identifier: MIT
-- Test config: grouped-query attention, ratio 4 (32 heads, 8 kv heads), head_dim 128: Llama-3-8B's shape, whose
-- token rows (every kv head's K of a token) are 4 KiB in fp32, 2 KiB in f16 and 1 KiB in int8. Long rows give the
-- AVX2 decode of a group of 4 tiles of 12 keys (4 key blocks of 3), int8 tiles of 24; sequence lengths that are not
-- multiples of either end on a partial tile.
return {
  name     = "t-long-h32-kv8-d128",
  source   = "tests/configs/t-long-h32-kv8-d128.lua (synthetic test shape: grouped-query attention, ratio 4 (32 heads, 8 kv heads), head_dim 128)",
  heads    = 32,
  kv_heads = 8,
  head_dim = 128,
  masks    = { "causal" },
  phases   = { "decode" },
  isas     = { "avx512", "avx2", "scalar" },
  kv_dtype = { "f32", "f16", "int8" },
}

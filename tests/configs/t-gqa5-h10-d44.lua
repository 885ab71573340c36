-- SPDX-License-Identifier: MIT
-- Test config: grouped-query attention, ratio 5 (10 heads, 2 kv heads), head_dim 44. Decode's register blocks do
-- not divide 5 rows (AVX2: 1-row dot products, 4-row P·V blocks; NEON and scalar: 4 and 4), so a one-query step
-- ends on an edge block and steps of 2-8 queries on a zero-padded one; 44 is not a multiple of either vector width.
return {
  name     = "t-gqa5-h10-d44",
  source   = "tests/configs/t-gqa5-h10-d44.lua (synthetic test shape: grouped-query attention, ratio 5 (10 heads, 2 kv heads), head_dim 44)",
  heads    = 10,
  kv_heads = 2,
  head_dim = 44,
  masks    = { "causal", "padding" },
  phases   = { "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
}

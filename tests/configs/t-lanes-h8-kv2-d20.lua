-- SPDX-License-Identifier: MIT
-- Test config: grouped-query attention, ratio 4 (8 heads, 2 kv heads), head_dim 20. A decode step of 8 queries holds
-- 32 rows per kv head, so Q·Kᵀ runs with the rows in the lanes (panels of 32 rows on AVX-512, 16 on AVX2) and P·V
-- reads each head's V rows packed into the scratch; a step of 4 (16 rows) runs the dot products. 20 is not a
-- multiple of either vector width, so that copy and the P·V blocks end on a partial vector.
return {
  name     = "t-lanes-h8-kv2-d20",
  source   = "tests/configs/t-lanes-h8-kv2-d20.lua (synthetic test shape: grouped-query attention, ratio 4 (8 heads, 2 kv heads), head_dim 20)",
  heads    = 8,
  kv_heads = 2,
  head_dim = 20,
  masks    = { "causal", "padding" },
  phases   = { "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
}

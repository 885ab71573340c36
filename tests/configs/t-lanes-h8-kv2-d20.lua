-- SPDX-License-Identifier: MIT
-- Test config: grouped-query attention, ratio 4 (8 heads, 2 kv heads), head_dim 20. Decode steps of 4 and 8 queries
-- hold 16 and 32 rows per kv head, so Q·Kᵀ runs with the rows in the lanes and P·V reads each head's V rows packed
-- into the scratch; 20 is not a multiple of either vector width, so that copy and the P·V blocks end on a partial
-- vector.
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

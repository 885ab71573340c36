-- SPDX-License-Identifier: MIT
-- Bench-only shape: multi-head attention (kv_heads = heads) at Llama's head size, for the MHA decode case
-- (group 1: every query head streams its own K/V; the catalog's MHA models are d64).
return {
  name     = "bench-h32-kv32-d128",
  source   = "bench/configs/bench-h32-kv32-d128.lua (bench-only shape: MHA, h32 d128)",
  heads    = 32,
  kv_heads = 32,
  head_dim = 128,
  masks    = { "causal" },
  phases   = { "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
}

-- SPDX-License-Identifier: MIT
-- Bench-only shape: Qwen2.5-0.5B's attention (group 7, head_dim 64) with every storage type the bench's storage-type
-- table times, so its group-7 row runs specialized kernels for each type (the catalog's config lists fp32 only).
return {
  name     = "bench-h14-kv2-d64",
  source   = "bench/configs/bench-h14-kv2-d64.lua (bench-only shape: group 7, d64, every cache type)",
  heads    = 14,
  kv_heads = 2,
  head_dim = 64,
  masks    = { "causal" },
  phases   = { "decode" },
  isas     = { "avx512", "avx2", "scalar" },
  kv_dtype = { "f32", "f16", "bf16", "int8", "int8_g32" },
}

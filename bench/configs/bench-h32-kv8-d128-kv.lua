-- SPDX-License-Identifier: MIT
-- Bench-only shape: Llama 3 8B's attention with every storage type the bench's storage-type table times (the catalog's
-- config lists f32, f16, bf16 and int8), so each type's decode and prefill rows run specialized kernels; Llama's RoPE,
-- so they compute what the catalog's kernels do.
return {
  name     = "bench-h32-kv8-d128-kv",
  source   = "bench/configs/bench-h32-kv8-d128-kv.lua (bench-only shape: h32/kv8/d128, every cache type)",
  heads    = 32,
  kv_heads = 8,
  head_dim = 128,
  masks    = { "causal" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "scalar" },
  kv_dtype = { "f32", "f16", "bf16", "int8", "int8_g32" },
  rope     = { style = "half", theta = 500000, rotary_dim = 128 },
}

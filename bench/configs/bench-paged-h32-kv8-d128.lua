-- SPDX-License-Identifier: MIT
-- Benchmark-only shape: Llama-3-8B's attention over paged caches (pages of 16 and 64 rows) of every storage type,
-- next to the same kernels over contiguous caches. Built into build/bench/gen by bench/bench.mk, never committed.
return {
  name      = "bench-paged-h32-kv8-d128",
  heads     = 32,
  kv_heads  = 8,
  head_dim  = 128,
  masks     = { "causal" },
  phases    = { "prefill", "decode" },
  isas      = { "avx512", "avx2", "scalar" },
  kv_dtype  = { "f32", "f16", "bf16", "int8", "int8_g32" },
  page_size = { 16, 64 },
}

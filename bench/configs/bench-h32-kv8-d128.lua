-- SPDX-License-Identifier: MIT
-- Benchmark-only shape: Llama-3-8B's attention (32 query heads, 8 kv heads, head_dim 128) with the
-- bidirectional mask too, which the llama-3-8b model config rightly does not generate. Built into
-- build/bench/gen by bench/bench.mk, never committed.
return {
  name     = "bench-h32-kv8-d128",
  heads    = 32,
  kv_heads = 8,
  head_dim = 128,
  masks    = { "none", "causal" },
  phases   = { "prefill" },
  isas     = { "avx512", "avx2", "scalar" },
}

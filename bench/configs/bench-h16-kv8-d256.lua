-- SPDX-License-Identifier: MIT
-- Benchmark-only shape: Gemma-2-9B's (16 heads, 8 kv heads, head_dim 256), no features (bench.c's attention-features section). Built into build/bench/gen by
-- bench/bench.mk, never committed.
return { name = "bench-h16-kv8-d256", heads = 16, kv_heads = 8, head_dim = 256, masks = { "causal" },
         phases = { "prefill", "decode" }, isas = { "avx512", "avx2", "scalar" } }

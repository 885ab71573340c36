-- SPDX-License-Identifier: MIT
-- Benchmark-only shape: Gemma-2-9B's with sink logits (bench.c's attention-features section). Built into build/bench/gen by
-- bench/bench.mk, never committed.
return { name = "bench-sinks-h16-kv8-d256", heads = 16, kv_heads = 8, head_dim = 256, masks = { "causal" },
         phases = { "prefill", "decode" }, isas = { "avx512", "avx2", "scalar" }, sinks = true }

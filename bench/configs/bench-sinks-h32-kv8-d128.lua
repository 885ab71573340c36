-- SPDX-License-Identifier: MIT
-- Benchmark-only shape: Llama-3-8B's with sink logits (bench.c's attention-features section). Built into build/bench/gen by
-- bench/bench.mk, never committed.
return { name = "bench-sinks-h32-kv8-d128", heads = 32, kv_heads = 8, head_dim = 128, masks = { "causal" },
         phases = { "prefill", "decode" }, isas = { "avx512", "avx2", "scalar" }, sinks = true }

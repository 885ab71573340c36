-- SPDX-License-Identifier: MIT
-- Benchmark-only shape: Llama-3-8B's with a sliding window of 4096 keys (bench.c's attention-features section passes
-- 1024 per call for prefill). Built into build/bench/gen by bench/bench.mk, never committed.
return { name = "bench-window-h32-kv8-d128", heads = 32, kv_heads = 8, head_dim = 128, masks = { "causal" },
         phases = { "prefill", "decode" }, isas = { "avx512", "avx2", "scalar" }, window = 4096 }

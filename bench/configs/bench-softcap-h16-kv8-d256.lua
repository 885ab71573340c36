-- SPDX-License-Identifier: MIT
-- Benchmark-only shape: Gemma-2-9B's with its logit soft-cap (bench.c's attention-features section). Built into build/bench/gen by
-- bench/bench.mk, never committed.
return { name = "bench-softcap-h16-kv8-d256", heads = 16, kv_heads = 8, head_dim = 256, masks = { "causal" },
         phases = { "prefill" }, isas = { "avx512", "avx2", "scalar" }, softcap = 50 }

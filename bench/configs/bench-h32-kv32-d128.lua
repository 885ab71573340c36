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
  -- every storage type the bench's storage-type table times, so its MHA row runs specialized kernels
  kv_dtype = { "f32", "f16", "bf16", "int8", "int8_g32" },
  -- attngen tune: begin
  -- avx512: tuned on AMD EPYC (2 CPUs), 2026-11-24, attngen 0.2.0 --tune (24 s); speed vs the default plan: decode default kept (best candidate 1.00x)
  -- avx512: medians of the thread's CPU time in interleaved rounds, 1 thread: decode causal, q_len 1, kv_len 4096, K/V from memory (2 copies of 128.0 MiB cycled; LLC 32 MiB)
  -- attngen tune: end
}

-- SPDX-License-Identifier: MIT
-- Peers-bench-only shape: Llama-3-8B's attention (32 query heads, 8 kv heads, head_dim 128) without RoPE, causal decode
-- on the K/V storage types the peers' reduced-precision caches are compared with: f16 (OpenVINO's f16 cache, ONNX
-- Runtime's float16 GroupQueryAttention) and int8 with one fp32 scale per row (OpenVINO's u8 cache, its default). f32
-- is listed too (the same kernel as peers-h32-kv8-d128's): a table without it leaves some fp32 dot microkernels unused
-- (gcc -Wunused-function). page_size 32: pages of OpenVINO's PagedAttention block size, for the paged cases' attngen
-- side (the same page size and block table as ov-pa). Built into build/peers/models by make bench-peers
-- (attngen.build), never committed.
return {
  name      = "peers-h32-kv8-d128-kv",
  source    = "https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json",
  heads     = 32,
  kv_heads  = 8,
  head_dim  = 128,
  masks     = { "causal" },
  phases    = { "decode" },
  isas      = { "avx512", "avx2", "scalar" },
  kv_dtype  = { "f32", "f16", "int8" },
  page_size = { 32 },
}

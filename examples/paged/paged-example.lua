-- SPDX-License-Identifier: MIT
-- The model of examples/paged: GQA 4 (8 query heads, 2 kv heads of 64), no RoPE (the example's float64 check stays
-- short), and paged kernels for pages of 16 rows next to the contiguous ones.
return {
  name      = "paged-example",
  source    = "examples/paged/paged-example.lua (a small shape for the paged-cache example)",
  heads     = 8,
  kv_heads  = 2,
  head_dim  = 64,
  masks     = { "causal" },
  phases    = { "prefill", "decode" },
  isas      = { "avx512", "avx2", "neon", "scalar" },
  page_size = { 16 },
}

-- SPDX-License-Identifier: MIT
-- Test config: a tuned plan (the `tuned` field that `attngen --tune` writes), blocking far from every default:
-- odd register blocks, keys per tile not a multiple of the Q·Kᵀ block, rows padded on every ISA. GQA ratio 3. An f16
-- cache too, with decode blocks of its own (by_dtype) on AVX2 and NEON, and the scalar fp32 block's knobs not its own.
return {
  name     = "t-tuned-h6-d48",
  source   = "tests/configs/t-tuned-h6-d48.lua (synthetic test shape: 6 heads, 2 kv heads, head_dim 48, tuned blocking)",
  heads    = 6,
  kv_heads = 2,
  head_dim = 48,
  masks    = { "none", "causal", "padding", "causal_padding", "cross" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  kv_dtype = { "f32", "f16" },
  tuned = {
    avx2 = { prefill = { rv = 2, kb = 6, pr = 4, pvv = 3, rows = 40, keys = 32 }, decode = { rb = 1, kb = 8, pr = 4, pvv = 3, keys = 24,
             by_dtype = { f16 = { rb = 3, kb = 3, pr = 2, pvv = 5, keys = 40 } } } },
    neon = { prefill = { rv = 3, kb = 7, pr = 5, pvv = 4, rows = 40, keys = 40 }, decode = { rb = 3, kb = 5, pr = 3, pvv = 5, keys = 24,
             by_dtype = { f16 = { rb = 2, kb = 7, pr = 3, pvv = 3, keys = 16 } } } },
    scalar = { prefill = { rv = 3, kb = 3, pr = 5, pvv = 2, rows = 24, keys = 16 }, decode = { rb = 2, kb = 3, pr = 1, pvv = 5, keys = 8 } },
  },
}

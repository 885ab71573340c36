-- SPDX-License-Identifier: MIT
-- Test config: paged K/V caches (page_size 1 and 16) of every storage type family, GQA 4, RoPE half style; the
-- contiguous kernels of the same shape are the reference they must equal bit for bit.
return {
  name     = "t-paged-h8-kv2-d64",
  source   = "tests/configs/t-paged-h8-kv2-d64.lua (synthetic test shape: paged caches, pages of 1 and 16 rows)",
  heads = 8, kv_heads = 2, head_dim = 64,
  masks = { "causal", "causal_padding" }, phases = { "prefill", "decode" },
  isas = { "avx512", "avx2", "neon", "scalar" },
  kv_dtype = { "f32", "f16", "bf16", "int8", "int8_g32" },
  page_size = { 1, 16 },
  rope = { style = "half", theta = 10000 },
}

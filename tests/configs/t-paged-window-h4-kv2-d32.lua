-- SPDX-License-Identifier: MIT
-- Test config: a sliding window with sink tokens over paged caches (pages of 8 rows; window 20 is not a multiple of
-- it): the ring-buffer cache of a windowed layer must equal the full contiguous cache.
return {
  name     = "t-paged-window-h4-kv2-d32",
  source   = "tests/configs/t-paged-window-h4-kv2-d32.lua (synthetic test shape: window 20, 4 sink tokens, pages of 8 rows)",
  heads = 4, kv_heads = 2, head_dim = 32,
  masks = { "causal" }, phases = { "prefill", "decode" },
  isas = { "avx512", "avx2", "neon", "scalar" },
  kv_dtype = { "f32", "bf16", "int8" },
  page_size = { 8 },
  window = 20, sink_tokens = 4,
  rope = { style = "half", theta = 10000 },
}

-- SPDX-License-Identifier: MIT
-- Test config: two kinds of layers with their own attention features (Gemma 2's pattern at a small shape): "local"
-- has a sliding window of 17 keys (the test lengths 1 and 7 are below it, 33 and up above) and the top level's
-- logit soft-cap 5; "global" the soft-cap only. Each kind is its own table, so every case runs per kind against the
-- float64 reference with that table's values, the step scenarios included; the local kind's kernels are windowed,
-- the global kind's are not.
return {
  name     = "t-kinds-window-h4-kv2-d32",
  source   = "tests/configs/t-kinds-window-h4-kv2-d32.lua (synthetic test shape: per-kind window, soft-cap on both)",
  heads = 4, kv_heads = 2, head_dim = 32, masks = { "causal", "causal_padding" }, phases = { "prefill", "decode" },
  isas = { "avx512", "avx2", "neon", "scalar" }, rope = { style = "half", theta = 10000 }, softcap = 5,
  kinds    = {
    { name = "local", window = 17 },
    { name = "global" },
  },
  layers   = { "local", "global", "local", "global" },
}

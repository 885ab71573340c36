-- SPDX-License-Identifier: MIT
-- python/tests: a small GQA model with RoPE that the Python tests generate, compile and load (attngen.build).
return {
  name     = "py-gqa-h4-kv2-d32",
  source   = "python/tests/test_model.py",
  heads    = 4,
  kv_heads = 2,
  head_dim = 32,
  masks    = { "causal" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  kv_dtype = { "f32", "f16" },
  rope     = { style = "half", theta = 10000 },
}

-- SPDX-License-Identifier: MIT
-- python/tests: two kinds of layers that differ in their RoPE base, each its own table (attngen.build(kind=...)).
return {
  name     = "py-kinds-h4-kv1-d32",
  source   = "python/tests/test_model.py",
  heads    = 4,
  kv_heads = 1,
  head_dim = 32,
  masks    = { "causal" },
  phases   = { "prefill", "decode" },
  isas     = { "scalar" },
  kinds    = { { name = "local", rope = { style = "half", theta = 10000 } },
               { name = "global", rope = { style = "interleaved", theta = 1000000 } } },
}

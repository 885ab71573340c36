-- SPDX-License-Identifier: MIT
-- python/tests: three kinds of layers with their own attention features: "local" and "wide" windows of 5 and 9 keys
-- (the same kernels, values in each table), "global" none; the top level's soft-cap 3 on all of them.
return {
  name = "py-kinds-features-h4-kv1-d32", source = "python/tests/test_model.py",
  heads = 4, kv_heads = 1, head_dim = 32, masks = { "causal" }, phases = { "prefill", "decode" }, isas = { "scalar" },
  softcap = 3,
  kinds = { { name = "local", window = 5 }, { name = "wide", window = 9 }, { name = "global" } },
}

-- SPDX-License-Identifier: MIT
-- Test config: four kinds of layers, each its own table (attngen_table_t_kinds_h4_kv2_d48_<kind>). "local" takes the
-- top-level rope (theta 10000); "global" another theta, linear scaling and its own scale (Gemma 3's global layers);
-- "long" YaRN with a truncated ramp, mscale / mscale_all_dim (attention factor 0.9496 < 1) and partial rotary (32 of
-- 48 dims); "nope" no RoPE at all, so its kernels' code differs and they carry the kind's name. The other kinds'
-- kernels are shared: the frequencies are in each table's params.
return {
  name     = "t-kinds-h4-kv2-d48",
  source   = "tests/configs/t-kinds-h4-kv2-d48.lua (synthetic test shape: kinds of layers with their own RoPE)",
  heads    = 4,
  kv_heads = 2,
  head_dim = 48,
  masks    = { "causal" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  rope     = { style = "half", theta = 10000 },
  kinds    = {
    { name = "local" },
    { name = "global", rope = { style = "half", theta = 1000000, scaling = { type = "linear", factor = 8 } }, scale = 0.1 },
    { name = "long", rope = { style = "half", theta = 1000000, rotary_dim = 32,
                              scaling = { type = "yarn", factor = 8, original_max_position_embeddings = 2048,
                                          beta_fast = 16, beta_slow = 2, truncate = true, mscale = 0.707,
                                          mscale_all_dim = 1 } } },
    { name = "nope", rope = false },
  },
  layers   = { "local", "local", "global", "long", "nope", "local", "global" }, -- attngen_layers_t_kinds_h4_kv2_d48
}

-- SPDX-License-Identifier: MIT
-- Bench-only shape: Qwen2.5-0.5B's attention (group 7, head_dim 64) with every storage type the bench's storage-type
-- table times, so its group-7 row runs specialized kernels for each type, fp32 included (the catalog's config lists
-- fp32 only); Qwen's RoPE and tuned block, so fp32 runs the catalog kernel's code and every other type the code Qwen's
-- config would generate for it (the block's knobs are the fp32 cache's: the other types keep the vocabulary's).
return {
  name     = "bench-h14-kv2-d64",
  source   = "bench/configs/bench-h14-kv2-d64.lua (bench-only shape: group 7, d64, every cache type)",
  heads    = 14,
  kv_heads = 2,
  head_dim = 64,
  masks    = { "causal" },
  phases   = { "decode" },
  isas     = { "avx512", "avx2", "scalar" },
  kv_dtype = { "f32", "f16", "bf16", "int8", "int8_g32" },
  rope     = { style = "half", theta = 1000000, rotary_dim = 64 },
  tuned = { -- configs/qwen2-5-0-5b.lua's
    avx2 = { decode = { rb = 4, kb = 2, pr = 1, pvv = 8, keys = 8 } },
  },
}

-- SPDX-License-Identifier: MIT
-- Test config: RoPE (interleaved, no scaling) in a NEON-only table. On x86-64 every attngen_select of this table
-- falls back to the generic kernel, which must rotate exactly as the table says (its params travel with the
-- kernel); under qemu the NEON kernels run and must agree.
return {
  name     = "t-rope-neon-h4-d24",
  source   = "tests/configs/t-rope-neon-h4-d24.lua (synthetic test shape: RoPE in a NEON-only table)",
  heads    = 4,
  kv_heads = 2,
  head_dim = 24,
  masks    = { "causal", "causal_padding" },
  phases   = { "prefill", "decode" },
  isas     = { "neon" },
  rope     = { style = "interleaved", theta = 10000 },
}

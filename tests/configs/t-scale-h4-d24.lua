-- SPDX-License-Identifier: MIT
-- Test config: a config `scale` with only a NEON kernel. On x86-64 every attngen_select of this table falls
-- back to the generic kernel, which must still use the table's scale (0.5, not 1/sqrt(24)); under qemu the NEON
-- kernel runs and must agree.
return {
  name     = "t-scale-h4-d24",
  source   = "tests/configs/t-scale-h4-d24.lua (synthetic test shape: config scale with a NEON-only table)",
  heads    = 4,
  kv_heads = 2,
  head_dim = 24,
  masks    = { "none", "causal", "padding" },
  phases   = { "prefill", "decode" },
  isas     = { "neon" },
  scale    = 0.5,
}

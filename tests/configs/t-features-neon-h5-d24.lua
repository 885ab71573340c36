-- SPDX-License-Identifier: MIT
-- Test config: every attention feature in a NEON-only table. On x86-64 every attngen_select of this table falls
-- back to the generic kernel, which must apply the table's window, sink tokens, soft-cap and ALiBi slopes (its
-- params travel with the kernel); under qemu the NEON kernels run and must agree. 5 heads: ALiBi's odd rule.
return {
  name        = "t-features-neon-h5-d24",
  source      = "tests/configs/t-features-neon-h5-d24.lua (synthetic test shape: every feature in a NEON-only table)",
  heads = 5, kv_heads = 5, head_dim = 24,
  masks = { "causal", "causal_padding" }, phases = { "prefill", "decode" },
  isas        = { "neon" },
  window      = 40,
  sink_tokens = 2,
  softcap     = 8,
  sinks       = true,
  alibi       = { max_bias = 6 },
}

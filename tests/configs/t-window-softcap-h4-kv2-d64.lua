-- SPDX-License-Identifier: MIT
-- Test config: sliding window (33 keys: the test lengths 1, 7 and 33 are below or at it, 130 and up above) with a
-- logit soft-cap of 5 (low enough to bend unit-range scores), both causal masks, every phase and ISA.
return {
  name = "t-window-softcap-h4-kv2-d64",
  source = "tests/configs/t-window-softcap-h4-kv2-d64.lua (synthetic test shape: window 33 + softcap 5, GQA 2)",
  heads = 4, kv_heads = 2, head_dim = 64,
  masks = { "causal", "causal_padding" }, phases = { "prefill", "decode" },
  isas = { "avx512", "avx2", "neon", "scalar" }, window = 33, softcap = 5,
}

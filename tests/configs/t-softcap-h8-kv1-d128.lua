-- SPDX-License-Identifier: MIT
-- Test config: Gemma-2's logit soft-cap (50) alone, multi-query, head_dim 128, on masks with and without causality.
return {
  name     = "t-softcap-h8-kv1-d128",
  source   = "tests/configs/t-softcap-h8-kv1-d128.lua (synthetic test shape: softcap 50, MQA)",
  heads = 8, kv_heads = 1, head_dim = 128,
  masks = { "none", "causal_padding" }, phases = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "scalar" },
  softcap  = 50,
}

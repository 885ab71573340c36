-- SPDX-License-Identifier: MIT
-- Test config: both kinds of sink with a sliding window: 4 sink tokens (StreamingLLM) and a learned sink logit per
-- head (gpt-oss, passed at run time), window 20, head_dim 40 (not a multiple of the vector width).
return {
  name = "t-window-sinks-h6-kv2-d40",
  source = "tests/configs/t-window-sinks-h6-kv2-d40.lua (synthetic test shape: window 20, 4 sink tokens, sink logits)",
  heads = 6, kv_heads = 2, head_dim = 40,
  masks = { "causal", "causal_padding" }, phases = { "prefill", "decode" },
  isas = { "avx512", "avx2", "neon", "scalar" }, window = 20, sink_tokens = 4, sinks = true,
}

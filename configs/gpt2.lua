-- SPDX-License-Identifier: MIT
-- GPT-2 (124M): multi-head attention, 12 heads of 64.
-- From config.json:
--   "n_embd": 768, "n_head": 12, "n_layer": 12, "n_ctx": 1024, "n_positions": 1024
--   (head_dim = n_embd / n_head = 768 / 12 = 64)
-- No RoPE: GPT-2 adds learned absolute position embeddings ("n_positions": 1024, the wpe table) to the
-- token embeddings before the first layer; attention itself sees no positions.
return {
  name     = "gpt2",
  source   = "https://huggingface.co/openai-community/gpt2/blob/main/config.json",
  heads    = 12,
  kv_heads = 12,
  head_dim = 64,
  masks    = { "causal", "causal_padding" },
  phases   = { "prefill", "decode" },
  isas     = { "avx2", "neon", "scalar" },
}

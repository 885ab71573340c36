-- SPDX-License-Identifier: MIT
-- Whisper base, decoder self-attention: 8 heads of 64, causal.
-- From config.json:
--   "d_model": 512, "decoder_attention_heads": 8, "decoder_layers": 6,
--   "max_target_positions": 448  (head_dim = 512 / 8 = 64)
-- (openai/whisper's own dims for "base" agree: n_text_state=512, n_text_head=8, n_text_ctx=448.)
-- The decoder's cross-attention over the encoder output is configs/whisper-base-cross.lua.
-- No RoPE: Whisper's decoder adds learned absolute position embeddings ("max_target_positions": 448) to
-- the token embeddings; attention itself sees no positions.
return {
  name     = "whisper-base-decoder",
  source   = "https://huggingface.co/openai/whisper-base/blob/main/config.json",
  heads    = 8,
  kv_heads = 8,
  head_dim = 64,
  masks    = { "causal" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
}

-- SPDX-License-Identifier: MIT
-- Whisper base, decoder cross-attention over the encoder output: 8 heads of 64.
-- From config.json:
--   "d_model": 512, "decoder_attention_heads": 8, "encoder_attention_heads": 8,
--   "max_source_positions": 1500, "max_target_positions": 448  (head_dim = 512 / 8 = 64)
-- Queries are decoder tokens (q_len up to 448), keys/values are the encoder frames (kv_len = 1500 for
-- 30 s of audio, kv_lens[b] per sequence): mask "cross". Prefill runs the prompt tokens at once,
-- decode one new token per step against the same encoder K/V.
-- No RoPE: Whisper's encoder adds fixed sinusoidal position embeddings and its decoder learned absolute
-- ones ("max_target_positions": 448) to their inputs; attention itself sees no positions.
return {
  name     = "whisper-base-cross",
  source   = "https://huggingface.co/openai/whisper-base/blob/main/config.json",
  heads    = 8,
  kv_heads = 8,
  head_dim = 64,
  masks    = { "cross" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
}

-- SPDX-License-Identifier: MIT
-- BERT base (uncased): bidirectional encoder, 12 heads of 64.
-- From config.json:
--   "hidden_size": 768, "num_attention_heads": 12, "num_hidden_layers": 12,
--   "max_position_embeddings": 512  (head_dim = 768 / 12 = 64)
-- An encoder has no KV cache: prefill only. Batches of different lengths use the padding mask
-- (kv_lens[b] = real tokens of sequence b); "none" serves unpadded single sequences.
-- No RoPE: BERT adds learned absolute position embeddings ("position_embedding_type": "absolute",
-- "max_position_embeddings": 512) to the token embeddings; attention itself sees no positions.
return {
  name     = "bert-base",
  source   = "https://huggingface.co/google-bert/bert-base-uncased/blob/main/config.json",
  heads    = 12,
  kv_heads = 12,
  head_dim = 64,
  masks    = { "padding", "none" },
  phases   = { "prefill" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  -- attngen tune: begin
  -- avx2: tuned on AMD EPYC (2 CPUs), 2026-11-22, attngen 0.2.0 --tune (48 s); speed vs the default plan: prefill default kept (best candidate 1.02x)
  -- avx2: medians of the thread's CPU time in interleaved rounds, 1 thread: prefill none, q_len 512, kv_len 512
  -- attngen tune: end
}

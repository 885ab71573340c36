-- SPDX-License-Identifier: MIT
-- Meta Llama 3 70B: grouped-query attention, 64 query heads sharing 8 key/value heads.
-- From config.json:
--   "hidden_size": 8192, "num_attention_heads": 64, "num_key_value_heads": 8,
--   "max_position_embeddings": 8192  (no "head_dim" key: head_dim = 8192 / 64 = 128)
return {
  name     = "llama-3-70b",
  source   = "https://huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/config.json",
  heads    = 64,
  kv_heads = 8,
  head_dim = 128,
  masks    = { "causal", "causal_padding" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  -- RoPE, from the same config.json: "rope_theta": 500000.0, no "rope_scaling" (Llama 3, not 3.1: no llama3
  -- frequency scaling). HF's LlamaRotaryEmbedding rotates all head_dim dims with rotate_half: style "half".
  rope     = { style = "half", theta = 500000, rotary_dim = 128 },
  -- attngen tune: begin
  -- avx512: tuned on AMD EPYC (2 CPUs), 2026-11-24, attngen 0.2.0 --tune (43 s); speed vs the default plan: prefill default kept (best candidate 1.00x), decode default kept (best candidate 1.03x)
  -- avx512: medians of the thread's CPU time in interleaved rounds, 1 thread: prefill causal, q_len 512, kv_len 512; decode causal, q_len 1, kv_len 4096, K/V from memory (3 copies of 32.0 MiB cycled; LLC 32 MiB)
  -- attngen tune: end
}

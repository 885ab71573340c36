-- SPDX-License-Identifier: MIT
-- Meta Llama 3 8B: grouped-query attention, 32 query heads sharing 8 key/value heads.
-- From config.json:
--   "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
--   "max_position_embeddings": 8192  (no "head_dim" key: head_dim = 4096 / 32 = 128)
-- Causal decoder: prefill (also chunked) and decode against a KV cache; causal_padding for
-- batched prefill of right-padded prompts.
return {
  name     = "llama-3-8b",
  source   = "https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json",
  heads    = 32,
  kv_heads = 8,
  head_dim = 128,
  masks    = { "causal", "causal_padding" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  -- The K/V cache's storage types. The cache holds K (rotated) and V of every past token: 2 x 32 layers x 8 kv
  -- heads x 128 = 65536 elements per token, 256 KiB in fp32, 128 KiB in f16 or bf16, 66 KiB in int8 (one fp32
  -- scale per 128-element row): 2 GiB, 1 GiB or 528 MiB per sequence at the 8192-token context. Each decode step
  -- reads all of it, so a smaller type means fewer bytes read; the arithmetic stays fp32.
  kv_dtype = { "f32", "f16", "bf16", "int8" },
  -- RoPE, from the same config.json: "rope_theta": 500000.0, no "rope_scaling" (Llama 3, not 3.1: no llama3
  -- frequency scaling). HF's LlamaRotaryEmbedding rotates all head_dim dims with rotate_half: style "half".
  rope     = { style = "half", theta = 500000, rotary_dim = 128 },
  -- attngen tune: begin
  -- avx2: tuned on AMD EPYC (2 CPUs), 2026-11-22, attngen 0.2.0 --tune (46 s); speed vs the default plan: decode default kept (best candidate 1.00x; the block recorded before the decode softmax ran down the columns is now 1.03-1.08x slower than the default); prefill default kept (the tune measured rv=2 kb=6 at 1.05x, a separate interleaved check 0.95-1.04x at S=512-2048)
  -- avx2: medians of the thread's CPU time in interleaved rounds, 1 thread: prefill causal, q_len 512, kv_len 512; decode causal, q_len 1, kv_len 4096
  -- avx512: tuned on AMD EPYC (2 CPUs), 2026-11-24, attngen 0.2.0 --tune (52 s); speed vs the default plan: prefill default kept (best candidate 1.00x), decode default kept (best candidate 1.02x)
  -- avx512: medians of the thread's CPU time in interleaved rounds, 1 thread: prefill causal, q_len 512, kv_len 512; decode causal, q_len 1, kv_len 4096, K/V from memory (3 copies of 32.0 MiB cycled; LLC 32 MiB)
  -- attngen tune: end
}

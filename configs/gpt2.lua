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
  isas     = { "avx512", "avx2", "neon", "scalar" },
  -- attngen tune: begin
  -- avx2: tuned on AMD EPYC (2 CPUs), 2026-11-22, attngen 0.2.0 --tune (43 s); speed vs the default plan: prefill 1.06x, decode default kept (best candidate 1.00x)
  -- avx2: medians of the thread's CPU time in interleaved rounds, 1 thread: prefill causal, q_len 512, kv_len 512; decode causal, q_len 1, kv_len 4096
  -- avx512: tuned on AMD EPYC (2 CPUs), 2026-11-24, attngen 0.2.0 --tune (67 s); speed vs the default plan: prefill default kept (best candidate 1.01x), decode 1.09x
  -- avx512: medians of the thread's CPU time in interleaved rounds, 1 thread: prefill causal, q_len 512, kv_len 512; decode causal, q_len 1, kv_len 4096, K/V from memory (4 copies of 24.0 MiB cycled; LLC 32 MiB)
  tuned = {
    avx512 = { decode = { rb = 1, kb = 8, pr = 1, pvv = 8, keys = 16 } },
    avx2 = { prefill = { rv = 3, kb = 4, pr = 6, pvv = 2, rows = 48, keys = 128 } },
  },
  -- attngen tune: end
}

-- SPDX-License-Identifier: MIT
-- Qwen2.5 0.5B: grouped-query attention, 14 query heads sharing 2 key/value heads (ratio 7).
-- From config.json:
--   "hidden_size": 896, "num_attention_heads": 14, "num_key_value_heads": 2,
--   "use_sliding_window": false, "max_position_embeddings": 32768
--   (no "head_dim" key: head_dim = 896 / 14 = 64)
-- Named qwen2-5-0-5b because config names allow only [a-z0-9-].
return {
  name     = "qwen2-5-0-5b",
  source   = "https://huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json",
  heads    = 14,
  kv_heads = 2,
  head_dim = 64,
  masks    = { "causal", "causal_padding" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "neon", "scalar" },
  -- RoPE, from the same config.json: "rope_theta": 1000000.0, "rope_scaling": null. HF's Qwen2RotaryEmbedding:
  -- rotate_half over head_dim, style "half".
  rope     = { style = "half", theta = 1000000, rotary_dim = 64 },
  -- attngen tune: begin
  -- avx512: tuned on AMD EPYC (2 CPUs), 2026-11-24, attngen 0.2.0 --tune (52 s); speed vs the default plan: prefill 1.04x, decode 1.40x
  -- avx512: medians of the thread's CPU time in interleaved rounds, 1 thread: prefill causal, q_len 512, kv_len 512; decode causal, q_len 1, kv_len 4096, K/V from memory (17 copies of 4.0 MiB cycled; LLC 32 MiB)
  -- avx512 decode: the vocabulary's blocking (now 8 x 2 Q·Kᵀ, P·V 8 x 32, 8-key tiles) replaced the tune's 2 x 2 with
  -- 512-key tiles (its 4 x 4 and 4 x 64 then: 1.16-1.48x faster by type at kv_len 65536, Zen 4, 2026-11-26)
  -- avx2: tuned on AMD EPYC (2 CPUs), 2026-11-24, attngen 0.2.0 --tune (50 s); speed vs the default plan: prefill default kept (best candidate 1.02x), decode 1.47x
  -- avx2: medians of the thread's CPU time in interleaved rounds, 1 thread: prefill causal, q_len 512, kv_len 512; decode causal, q_len 1, kv_len 4096, K/V from memory (17 copies of 4.0 MiB cycled; LLC 32 MiB)
  tuned = {
    avx512 = { prefill = { rv = 2, kb = 8, pr = 8, pvv = 2, rows = 192, keys = 128 } },
    avx2 = { decode = { rb = 4, kb = 2, pr = 1, pvv = 8, keys = 8 } },
  },
  -- attngen tune: end
}

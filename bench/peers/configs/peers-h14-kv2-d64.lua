-- SPDX-License-Identifier: MIT
-- Peers-bench-only shape: Qwen2.5-0.5B's attention (group 7) without RoPE (the catalog table rotates Q; the peers compare attention
-- alone). Built into build/peers/models by make bench-peers (attngen.build), never committed.
return {
  name     = "peers-h14-kv2-d64",
  source   = "https://huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json",
  heads    = 14,
  kv_heads = 2,
  head_dim = 64,
  masks    = { "causal" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "scalar" },
}

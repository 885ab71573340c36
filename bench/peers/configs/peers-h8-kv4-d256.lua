-- SPDX-License-Identifier: MIT
-- Peers-bench-only shape: Gemma-2-2B's attention without RoPE (the catalog table rotates Q; the peers compare attention
-- alone). Built into build/peers/models by make bench-peers (attngen.build), never committed.
return {
  name     = "peers-h8-kv4-d256",
  source   = "https://huggingface.co/google/gemma-2-2b/blob/main/config.json",
  heads    = 8,
  kv_heads = 4,
  head_dim = 256,
  masks    = { "causal" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "scalar" },
}

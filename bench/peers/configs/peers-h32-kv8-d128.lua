-- SPDX-License-Identifier: MIT
-- Peers-bench-only shape: Llama-3-8B's attention (32 query heads, 8 kv heads, head_dim 128), every mask and phase
-- the cases use, WITHOUT RoPE: the catalog's llama-3-8b table rotates Q (its config has rope), the peers compare
-- attention alone. Built into build/peers/models by make bench-peers (attngen.build), never committed.
return {
  name     = "peers-h32-kv8-d128",
  source   = "https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json",
  heads    = 32,
  kv_heads = 8,
  head_dim = 128,
  masks    = { "none", "causal" },
  phases   = { "prefill", "decode" },
  isas     = { "avx512", "avx2", "scalar" },
}

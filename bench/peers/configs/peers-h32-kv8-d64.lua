-- SPDX-License-Identifier: MIT
-- Peers-bench-only shape: Llama-3.2-1B's attention (32 query heads, 8 kv heads, head_dim 64) with the
-- "none" mask, for the d64 no-mask prefill case (the catalog's llama-3-2-1b has causal masks only).
-- Built into build/peers/models by make bench-peers (attngen.build), never committed.
return {
  name     = "peers-h32-kv8-d64",
  source   = "https://huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json",
  heads    = 32,
  kv_heads = 8,
  head_dim = 64,
  masks    = { "none" },
  phases   = { "prefill" },
  isas     = { "avx512", "avx2", "scalar" },
}

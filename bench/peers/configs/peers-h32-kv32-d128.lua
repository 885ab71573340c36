-- SPDX-License-Identifier: MIT
-- Peers-bench-only shape: multi-head attention (32 query heads = 32 kv heads, head_dim 128), Llama-2-7B's
-- shape, for the MHA (group 1) decode case; no catalog model has it. Built into build/peers/models by
-- make bench-peers (attngen.build), never committed.
return {
  name     = "peers-h32-kv32-d128",
  source   = "https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json",
  heads    = 32,
  kv_heads = 32,
  head_dim = 128,
  masks    = { "causal" },
  phases   = { "decode" },
  isas     = { "avx512", "avx2", "scalar" },
}

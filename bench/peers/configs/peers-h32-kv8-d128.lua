-- Peers-bench-only shape: Llama-3-8B's attention (32 query heads, 8 kv heads, head_dim 128) with the
-- bidirectional ("none") mask, which the llama-3-8b model config rightly does not generate; the causal
-- prefill and decode kernels come from generated/llama-3-8b. Built into build/peers/gen by
-- bench/peers/peers.mk, never committed.
return {
  name     = "peers-h32-kv8-d128",
  source   = "https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json",
  heads    = 32,
  kv_heads = 8,
  head_dim = 128,
  masks    = { "none" },
  phases   = { "prefill" },
  isas     = { "avx2", "scalar" },
}

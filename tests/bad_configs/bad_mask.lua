-- expect: field 'masks': entry 2 is "sliding"; allowed: none, causal, padding, causal_padding, cross
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal", "sliding" }, phases = { "prefill" }, isas = { "scalar" } }

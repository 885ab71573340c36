-- expect: field 'kv_heads': missing
return { name = "x", heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" } }

-- expect: field 'kv_heads': heads (32) must be a multiple of kv_heads (5)
return { name = "x", heads = 32, kv_heads = 5, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" } }

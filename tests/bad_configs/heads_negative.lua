-- expect: field 'heads': must be an integer in 1..1024, got -4
return { name = "x", heads = -4, kv_heads = 1, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" } }

-- expect: field 'heads': must be an integer in 1..1024, got inf
return { name = "x", heads = 1/0, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" } }

-- expect: field 'head_dim': must be an integer in 1..512, got 64.5
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64.5, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" } }

-- expect: field 'head_dim': must be an integer in 1..512, got "128"
return { name = "x", heads = 8, kv_heads = 8, head_dim = "128", masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" } }

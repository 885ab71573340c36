-- expect: field 'head_dim': must be an integer, got "128"
return { name = "x", heads = 8, kv_heads = 8, head_dim = "128", masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" } }

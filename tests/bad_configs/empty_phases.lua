-- expect: field 'phases': must be a non-empty list of prefill, decode
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { }, isas = { "scalar" } }

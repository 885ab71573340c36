-- expect: field 'kvheads': unknown field
return { name = "x", heads = 8, kvheads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" } }

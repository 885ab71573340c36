-- expect: field 'rope.base': unknown field (known: style, theta, rotary_dim, scaling)
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, rope = { style = "half", base = 10000 } }

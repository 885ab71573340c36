-- expect: field 'kinds[2].name': "local" is the name of kinds[1] too
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, kinds = { { name = "local" }, { name = "local", scale = 0.1 } } }

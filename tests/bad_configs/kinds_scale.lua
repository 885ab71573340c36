-- expect: field 'kinds[1].scale': must be a positive normal float
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, kinds = { { name = "local", scale = -1 } } }

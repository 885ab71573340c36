-- expect: field 'kinds[1].window': must be an integer in 1..1073741824, got 0
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, kinds = { { name = "local", window = 0 }, { name = "global" } } }

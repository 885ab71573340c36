-- expect: field 'softcap': must be a positive finite number, got -50
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, softcap = -50 }

-- expect: field 'alibi': has unknown field bias (known: max_bias), got a table
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, alibi = { bias = 8 } }

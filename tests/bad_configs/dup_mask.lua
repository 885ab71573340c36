-- expect: field 'masks': "causal" is listed twice
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal", "causal" }, phases = { "prefill" }, isas = { "scalar" } }

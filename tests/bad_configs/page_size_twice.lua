-- expect: field 'page_size': 16 is listed twice
return { name = "x", heads = 8, kv_heads = 2, head_dim = 64, masks = { "causal" }, phases = { "decode" }, isas = { "scalar" }, page_size = { 16, 16 } }

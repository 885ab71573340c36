-- expect: field 'kv_dtype': int8_g64 needs head_dim (96) to be a multiple of 64
return { name = "x", heads = 8, kv_heads = 2, head_dim = 96, masks = { "causal" }, phases = { "decode" }, isas = { "scalar" }, kv_dtype = { "int8_g64" } }

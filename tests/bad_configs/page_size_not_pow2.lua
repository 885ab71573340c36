-- expect: field 'page_size': entry 2 must be a power of two in 1..4096, got 24
return { name = "x", heads = 8, kv_heads = 2, head_dim = 64, masks = { "causal" }, phases = { "decode" }, isas = { "scalar" }, page_size = { 16, 24 } }

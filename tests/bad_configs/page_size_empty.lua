-- expect: field 'page_size': must be a non-empty list of powers of two, got a table
return { name = "x", heads = 8, kv_heads = 2, head_dim = 64, masks = { "causal" }, phases = { "decode" }, isas = { "scalar" }, page_size = {} }

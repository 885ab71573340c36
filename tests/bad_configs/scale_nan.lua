-- expect: field 'scale': must be a positive normal float (1.17549435e-38 .. 3.40282347e+38), got nan
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, scale = 0/0 }

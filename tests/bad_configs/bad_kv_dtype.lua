-- expect: field 'kv_dtype': entry 2 is "fp8"; allowed: f32, f16, bf16, int8, int8_g64, int8_g32
return { name = "x", heads = 8, kv_heads = 2, head_dim = 64, masks = { "causal" }, phases = { "decode" }, isas = { "scalar" }, kv_dtype = { "f16", "fp8" } }

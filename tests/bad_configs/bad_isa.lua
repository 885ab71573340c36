-- expect: field 'isas': entry 1 is "sve"; allowed: avx512, avx2, neon, scalar
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "sve" } }

-- expect: field 'layers': needs `kinds`: it names the kind of each layer
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, layers = { "local" } }

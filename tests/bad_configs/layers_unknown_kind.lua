-- expect: field 'layers[3]': must name a kind (local, global), got "sliding"
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, kinds = { { name = "local" }, { name = "global", scale = 0.1 } }, layers = { "local", "global", "sliding" } }

-- expect: field 'name': must be lowercase letters, digits and '-' (1 to 64 of them, the first not '-'), got "Llama 3"
return { name = "Llama 3", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" } }

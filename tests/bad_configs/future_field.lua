-- expect: field 'lse': is not supported yet by this version of attngen
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, lse = true }

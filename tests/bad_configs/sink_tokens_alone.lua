-- expect: field 'sink_tokens': needs 'window' (it is part of that feature)
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, sink_tokens = 4 }

-- expect: field 'sliding_window': is spelled 'window' in attngen (same meaning)
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, sliding_window = 4096 }

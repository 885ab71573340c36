-- expect: field 'kinds[2].sink_tokens': needs 'window' (it is part of that feature)
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, kinds = { { name = "local", window = 64, sink_tokens = 4 }, { name = "global", sink_tokens = 4 } } }

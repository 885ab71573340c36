-- expect: field 'kinds[1].heads': unknown field of a kind (known: name, rope, window, sink_tokens, softcap, sinks, alibi, scale)
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, kinds = { { name = "local", heads = 4 } } }

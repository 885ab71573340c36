-- expect: field 'kinds': must be a non-empty list of { name = ..., rope, window, sink_tokens, softcap, sinks, alibi, scale }, got a table
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, kinds = {} }

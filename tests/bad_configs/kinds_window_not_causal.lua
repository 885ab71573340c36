-- expect: field 'kinds[1].window': needs masks with the causal feature (causal, causal_padding), and masks lists "none"
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "none", "causal" }, phases = { "prefill" }, isas = { "scalar" }, kinds = { { name = "local", window = 64 }, { name = "global" } } }

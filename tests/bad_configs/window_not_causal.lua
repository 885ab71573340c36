-- expect: field 'window': needs masks with the causal feature (causal, causal_padding), and masks lists "padding"
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal", "padding" }, phases = { "prefill" }, isas = { "scalar" }, window = 512 }

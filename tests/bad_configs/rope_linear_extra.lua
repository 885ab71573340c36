-- expect: field 'rope.scaling.low_freq_factor': unknown field (known: type, factor)
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, rope = { style = "half", theta = 10000, scaling = { type = "linear", factor = 2, low_freq_factor = 1 } } }

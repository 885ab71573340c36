-- expect: field 'rope.scaling.high_freq_factor': must be greater than low_freq_factor (1), got 1
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, rope = { style = "half", theta = 500000, scaling = { type = "llama3", factor = 8, low_freq_factor = 1, high_freq_factor = 1, original_max_position_embeddings = 8192 } } }

-- expect: field 'rope.scaling.original_max_position_embeddings': must be an integer, got 8192.5
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, rope = { style = "half", theta = 500000, scaling = { type = "llama3", factor = 8, low_freq_factor = 1, high_freq_factor = 4, original_max_position_embeddings = 8192.5 } } }

-- expect: field 'rope.scaling.factor': must be >= 1 (the context extension), got 0.5
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, rope = { style = "half", theta = 150000, scaling = { type = "yarn", factor = 0.5, original_max_position_embeddings = 4096 } } }

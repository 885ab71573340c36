-- expect: field 'rope.scaling.original_max_position_embeddings': missing (yarn scaling needs factor, original_max_position_embeddings)
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, rope = { style = "half", theta = 150000, scaling = { type = "yarn", factor = 32 } } }

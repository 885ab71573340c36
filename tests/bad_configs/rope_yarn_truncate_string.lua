-- expect: field 'rope.scaling.truncate': must be true or false, got "no"
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, rope = { style = "half", theta = 150000, scaling = { type = "yarn", factor = 32, truncate = "no", original_max_position_embeddings = 4096 } } }

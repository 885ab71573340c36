-- expect: field 'rope.scaling.beta_fast': must be >= beta_slow (32), got 1
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, rope = { style = "half", theta = 150000, scaling = { type = "yarn", factor = 32, beta_fast = 1, beta_slow = 32, original_max_position_embeddings = 4096 } } }

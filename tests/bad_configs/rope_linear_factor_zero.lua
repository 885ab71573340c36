-- expect: field 'rope.scaling.factor': must be a number > 0 and <= 1e+15, got 0
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, rope = { style = "half", theta = 10000, scaling = { type = "linear", factor = 0 } } }

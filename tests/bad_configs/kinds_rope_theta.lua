-- expect: field 'kinds[2].rope.theta': must be a finite number > 1 (the base of the frequencies), got 0.5
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, kinds = { { name = "local", rope = { style = "half", theta = 10000 } }, { name = "global", rope = { style = "half", theta = 0.5 } } } }

-- expect: field 'rope.rotary_dim': must be an even integer in 2..17 (head_dim) (it defaults to head_dim, which is odd: set it), got 17
return { name = "x", heads = 2, kv_heads = 2, head_dim = 17, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, rope = { style = "half", theta = 10000 } }

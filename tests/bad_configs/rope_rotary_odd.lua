-- expect: field 'rope.rotary_dim': must be an even integer in 2..64 (head_dim), got 63
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, rope = { style = "half", theta = 10000, rotary_dim = 63 } }

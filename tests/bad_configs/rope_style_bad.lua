-- expect: field 'rope.style': must be one of half, interleaved, got "neox"
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, rope = { style = "neox", theta = 10000 } }

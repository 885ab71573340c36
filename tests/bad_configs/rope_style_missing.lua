-- expect: field 'rope.style': missing (one of half, interleaved)
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, rope = { theta = 10000 } }

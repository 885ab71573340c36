-- expect: field 'rope.scaling.type': missing (one of linear, llama3, yarn)
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, rope = { style = "half", theta = 10000, scaling = { factor = 2 } } }

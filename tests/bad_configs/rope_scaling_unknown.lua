-- expect: field 'rope.scaling.type': unknown scaling type "ntk-by-parts" (supported: linear, llama3, yarn)
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, rope = { style = "half", theta = 10000, scaling = { type = "ntk-by-parts" } } }

-- expect: field 'rope.scaling.type': "yarn" is not supported yet by this version of attngen (supported: linear, llama3)
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, rope = { style = "half", theta = 10000, scaling = { type = "yarn", factor = 4 } } }

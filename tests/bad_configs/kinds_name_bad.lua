-- expect: field 'kinds[1].name': must be a lowercase C identifier (a letter, then letters, digits or '_'; at most 32), got "Sliding-Window"
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, kinds = { { name = "Sliding-Window" } } }

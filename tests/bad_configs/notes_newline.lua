-- expect: field 'notes': must be one line of printable text
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, notes = "two\nlines" }

-- expect: field 'source': must not contain '/*' or '*/'
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, source = "see */ int injected; /* here" }

-- expect: field 'sinks': must be true (the logits come at run time, attngen_args.sinks), got 4
return { name = "x", heads = 8, kv_heads = 8, head_dim = 64, masks = { "causal" }, phases = { "prefill" }, isas = { "scalar" }, sinks = 4 }

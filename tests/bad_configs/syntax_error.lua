-- expect: is not valid Lua: line 2:
return { name = "x", heads = 8 kv_heads = 8 }

-- SPDX-License-Identifier: MIT
-- The attention values of catalog configs as the generator computes them, one JSON object per config on stdout:
-- shape, each table's (kind's) scale, window, sink tokens, soft-cap, sinks, ALiBi slopes, RoPE inverse frequencies
-- and cos/sin factor, and each layer's kind. check_catalog.py compares them with transformers.
-- Usage: lua5.4 tests/golden/catalog_values.lua configs/<model>.lua ...
package.path = "gen/?.lua;" .. package.path
local config = require("config")
local attn_features = require("attn_features")
local rope_frequencies = require("rope_frequencies")

local function json(v)
  if type(v) == "table" then
    if #v > 0 or next(v) == nil then
      local t = {}
      for i, x in ipairs(v) do t[i] = json(x) end
      return "[" .. table.concat(t, ",") .. "]"
    end
    local keys, t = {}, {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do t[#t + 1] = string.format("%q:%s", k, json(v[k])) end
    return "{" .. table.concat(t, ",") .. "}"
  end
  if type(v) == "number" then return string.format("%.17g", v) end
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

-- One table's values: its features (attn), RoPE and scale.
local function table_values(c, attn, rope, options)
  local t = { scale = options.scale or 1 / math.sqrt(c.head_dim) }
  local w = attn and attn.window
  if w then t.window, t.sink_tokens = w.window, w.sink_tokens or 0 end
  if attn and attn.softcap then t.softcap = attn.softcap.softcap end
  if attn and attn.sinks then t.sinks = true end
  if attn and attn.alibi then t.alibi_slopes = attn_features.alibi_slopes(c.heads, attn_features.alibi_max_bias(attn.alibi.alibi)) end
  if rope then
    t.rope = { style = rope.style, theta = rope.theta, rotary_dim = rope.rotary_dim, scaling = rope.scaling,
               inv_freq = rope_frequencies.inverse(rope), cs_scale = rope_frequencies.cs_scale(rope) }
  end
  return t
end

for _, path in ipairs(arg) do
  local c = config.validate(config.load(path), path)
  local out = { name = c.name, heads = c.heads, kv_heads = c.kv_heads, head_dim = c.head_dim, kinds = {} }
  if c.kinds then
    for _, k in ipairs(c.kinds) do out.kinds[k.name] = table_values(c, k.attn, k.rope, k.options) end
    out.layers = c.layers
  else
    out.kinds[""] = table_values(c, c.attn, c.rope, c.options)
  end
  print(json(out))
end

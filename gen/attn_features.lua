-- SPDX-License-Identifier: MIT
-- The attention features of a config (gen/spec.lua's spec.attn_features): validation of their fields, and the
-- values a table carries (attngen_params.features), ALiBi's slopes computed once here in float64.
local spec = require("spec")
local errors = require("errors")

local M = {}
local show, fail = errors.show, errors.fail

-- Every config field the features own (window, sink_tokens, softcap, sinks, alibi).
function M.fields()
  local t = {}
  for _, a in ipairs(spec.attn_features) do
    for _, f in ipairs(a.fields) do t[#t + 1] = f.name end
  end
  return t
end

-- raw: the config table; masks: its validated masks. Returns { <feature> = { <field> = value } } (nil: none).
-- A field of a feature that is off (sink_tokens without window) is refused: it would do nothing. prefix (nil at the
-- top level, "kinds[2]." for a kind) starts the field names of the messages; origin (field -> flag, nil for none) names
-- the flag that set a field.
function M.validate(where, raw, masks, prefix, origin)
  prefix = prefix or ""
  for alias, name in pairs(spec.attn_field_aliases) do
    if raw[alias] ~= nil then fail(where, alias, "is spelled '%s' in attngen (same meaning)", name) end
  end
  local attn
  for _, a in ipairs(spec.attn_features) do
    local on = raw[a.fields[1].name] ~= nil
    for _, f in ipairs(a.fields) do
      local v = raw[f.name]
      if v ~= nil then
        local at = errors.at(where, origin, f.name)
        local err = f.check(v)
        if err then fail(at, prefix .. f.name, "%s, got %s", err, show(v)) end
        if not on then fail(at, prefix .. f.name, "needs '%s' (it is part of that feature)", a.fields[1].name) end
      end
    end
    if on then
      if a.needs_causal then
        for _, m in ipairs(masks) do
          if not spec.features_of(m).causal then
            fail(errors.at(where, origin, a.fields[1].name), prefix .. a.name, "needs masks with the causal feature (causal, causal_padding), and masks " ..
              "lists %q", m)
          end
        end
      end
      attn = attn or {}
      local vals = {}
      for _, f in ipairs(a.fields) do vals[f.name] = raw[f.name] end
      attn[a.name] = vals
    end
  end
  return attn
end

-- The features of a kind of layer (config `kinds`): the top level's fields (raw), each replaced by the kind's own
-- value (values, already checked field by field); `false` for a feature's first field turns the feature off in the
-- kind. Validated as a whole as M.validate does, messages naming kinds[i].<field>.
function M.of_kind(where, raw, values, masks, path)
  local merged = {}
  for _, a in ipairs(spec.attn_features) do
    local off = values[a.fields[1].name] == false
    for _, f in ipairs(a.fields) do
      local v = values[f.name]
      if v == nil and not off then v = raw[f.name] end
      if v ~= false then merged[f.name] = v end
    end
  end
  return M.validate(where, merged, masks, path .. ".")
end

-- A kind's value of one feature field (field: its spec entry): false for a feature's first field, else the field's
-- own rule. Returns the value or nil and the error.
function M.check_kind_value(name, field, v)
  for _, a in ipairs(spec.attn_features) do
    if a.fields[1].name == name and v == false then return false end
  end
  local err = field.check(v)
  if err then return nil, err end
  return v
end

-- ALiBi slopes of `heads` query heads, float64 (HF transformers' BLOOM build_alibi_tensor, with max_bias in place of
-- its 8): n = the largest power of two <= heads; slope_h = 2^(-max_bias (h + 1) / n) for h < n; the heads past n take
-- the odd powers of 2^(-max_bias / (2n)): 1, 3, 5, ...
function M.alibi_slopes(heads, max_bias)
  local n = 1
  while n * 2 <= heads do n = n * 2 end
  local slopes = {}
  for h = 1, n do slopes[h] = 2 ^ (-max_bias * h / n) end
  for e = 1, heads - n do slopes[n + e] = 2 ^ (-max_bias * (2 * e - 1) / (2 * n)) end
  return slopes
end

function M.alibi_max_bias(v) return type(v) == "table" and v.max_bias or 8 end

return M

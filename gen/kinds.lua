-- SPDX-License-Identifier: MIT
-- The config's `kinds`: the kinds of layers of a model whose layers differ (Gemma 2's local and global layers, say).
-- Each kind is a name and its own values of the per-kind fields (spec.kind_fields: rope and the options marked
-- per_kind); a per-kind field it leaves out takes the config's top-level value, so the top level holds what the
-- kinds share. Each kind becomes a table of its own (gen/enumerate.lua's tables).
local spec = require("spec")
local errors = require("errors")

local M = {}

local show, fail = errors.show, errors.fail

-- raw: the config's `kinds` (nil: none); c: the validated config (its rope and options are the defaults);
-- check(path, field, value): one per-kind field's value, validated and normalized, messages naming `path`.
-- Returns nil or the list of { name, rope, options, values }.
function M.validate(where, raw, c, check)
  if raw == nil then return nil end
  local fields = spec.kind_fields()
  local allowed = { "name" }
  for _, f in ipairs(fields) do allowed[#allowed + 1] = f end
  if type(raw) ~= "table" or #raw == 0 then
    fail(where, "kinds", "must be a non-empty list of { name = ..., %s }, got %s", table.concat(fields, ", "), show(raw))
  end
  local n = 0
  for _ in pairs(raw) do n = n + 1 end
  if n ~= #raw then fail(where, "kinds", "must be a list (no keys or holes)") end
  local out, seen = {}, {}
  for i, k in ipairs(raw) do
    local path = string.format("kinds[%d]", i)
    if type(k) ~= "table" then fail(where, path, "must be a table { name = ..., %s }, got %s", table.concat(fields, ", "), show(k)) end
    local keys = {}
    for key in pairs(k) do keys[#keys + 1] = key end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end) -- the same first error on every run
    for _, key in ipairs(keys) do
      local known = false
      for _, a in ipairs(allowed) do known = known or a == key end
      if not known then
        fail(where, path .. "." .. tostring(key), "unknown field of a kind (known: %s)", table.concat(allowed, ", "))
      end
    end
    -- lowercase, so that the header's upper-case macro names stay distinct
    if type(k.name) ~= "string" or not k.name:match("^[a-z][a-z0-9_]*$") or #k.name > 32 then
      fail(where, path .. ".name", "must be a lowercase C identifier (a letter, then letters, digits or '_'; at most " ..
        "32), got %s", show(k.name))
    end
    if seen[k.name] then fail(where, path .. ".name", "%s is the name of kinds[%d] too", show(k.name), seen[k.name]) end
    seen[k.name] = i
    local kind = { name = k.name, values = {}, options = {} }
    for name, v in pairs(c.options) do kind.options[name] = v end
    for _, f in ipairs(fields) do
      local v = k[f]
      if f == "rope" and v == false then
        kind.values.rope = false -- this kind has no RoPE, whatever the top level says
      elseif v ~= nil then
        kind.values[f] = check(path .. "." .. f, f, v)
      end
    end
    kind.rope = kind.values.rope
    if kind.rope == nil then kind.rope = c.rope end
    if kind.rope == false then kind.rope = nil end
    for _, o in ipairs(spec.options) do
      if kind.values[o.name] ~= nil then kind.options[o.name] = kind.values[o.name] end
    end
    out[i] = kind
  end
  return out
end

-- layers = { "local", "local", ..., "global" }: the kind of each layer, in order (transformers' `layer_types`), so
-- that the header can give each layer its table. Returns the list or nil.
local MAX_LAYERS = 4096
function M.layers(where, raw, kinds)
  if raw == nil then return nil end
  if not kinds then fail(where, "layers", "needs `kinds`: it names the kind of each layer") end
  local names, known = {}, {}
  for i, k in ipairs(kinds) do names[i], known[k.name] = k.name, true end
  if type(raw) ~= "table" or #raw == 0 or #raw > MAX_LAYERS then
    fail(where, "layers", "must be a list of 1 to %d kind names (%s), one per layer, got %s", MAX_LAYERS,
      table.concat(names, ", "), show(raw))
  end
  local n = 0
  for _ in pairs(raw) do n = n + 1 end
  if n ~= #raw then fail(where, "layers", "must be a list (no keys or holes)") end
  for i, x in ipairs(raw) do
    if not known[x] then
      fail(where, string.format("layers[%d]", i), "must name a kind (%s), got %s", table.concat(names, ", "), show(x))
    end
  end
  return raw
end

return M

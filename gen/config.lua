-- Config loading and validation. A user mistake raises a UserError naming the file, the field and the
-- reason; the CLI prints it without a traceback and exits non-zero before anything is written.
local M = {}

M.MASKS = { "none", "causal", "padding", "causal_padding", "cross" }
M.PHASES = { "prefill", "decode" }
M.ISAS = { "avx2", "neon", "scalar" }

-- Options that later versions will add; a config naming one gets a clear "not supported yet".
local FUTURE = { "kv_dtype", "sliding_window", "softcap", "alibi", "sinks", "rope", "lse" }

local UserError = {}
UserError.__index = UserError
UserError.__tostring = function(e) return e.msg end
M.UserError = UserError

local function fail(where, field, fmt, ...)
  local msg = string.format(fmt, ...)
  if field then msg = string.format("field '%s': %s", field, msg) end
  error(setmetatable({ msg = where .. ": " .. msg }, UserError), 0)
end
M.fail = fail

local function contains(list, x)
  for _, v in ipairs(list) do if v == x then return true end end
  return false
end

local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

local function check_int(where, cfg, field, lo, hi)
  local v = cfg[field]
  if v == nil then fail(where, field, "missing (an integer in %d..%d)", lo, hi) end
  if type(v) ~= "number" or v ~= math.floor(v) then fail(where, field, "must be an integer, got %s", show(v)) end
  if v < lo or v > hi then fail(where, field, "must be in %d..%d, got %s", lo, hi, show(v)) end
  return math.floor(v)
end

local function check_list(where, cfg, field, allowed)
  local v = cfg[field]
  if type(v) == "string" then v = { v } end
  if type(v) ~= "table" or #v == 0 then
    fail(where, field, "must be a non-empty list of %s, got %s", table.concat(allowed, ", "), show(v))
  end
  local seen, out = {}, {}
  for i, x in ipairs(v) do
    if not contains(allowed, x) then
      fail(where, field, "entry %d is %s; allowed: %s", i, show(x), table.concat(allowed, ", "))
    end
    if seen[x] then fail(where, field, "%s is listed twice", show(x)) end
    seen[x] = true
  end
  -- canonical order, so the output does not depend on how the list was written
  for _, x in ipairs(allowed) do if seen[x] then out[#out + 1] = x end end
  return out
end

-- Validates a raw table (from a file and/or flags) and returns the normalized config.
function M.validate(raw, where)
  local known = { name = 1, source = 1, heads = 1, kv_heads = 1, head_dim = 1, masks = 1, phases = 1, isas = 1,
                  scale = 1, notes = 1 }
  local keys = {}
  for k in pairs(raw) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  for _, k in ipairs(keys) do
    if contains(FUTURE, k) then fail(where, k, "is not supported yet by this version of attngen") end
    if not known[k] then fail(where, k, "unknown field (known: name, source, heads, kv_heads, head_dim, masks, phases, isas, scale, notes)") end
  end
  local c = {}
  c.name = raw.name
  if type(c.name) ~= "string" or not c.name:match("^[a-z0-9][a-z0-9%-]*$") or #c.name > 64 then
    fail(where, "name", "must be lowercase letters, digits and '-' (at most 64), got %s", show(raw.name))
  end
  c.cname = c.name:gsub("%-", "_")
  if raw.source ~= nil and type(raw.source) ~= "string" then fail(where, "source", "must be a string") end
  c.source = raw.source
  if raw.notes ~= nil and type(raw.notes) ~= "string" then fail(where, "notes", "must be a string") end
  c.heads = check_int(where, raw, "heads", 1, 1024)
  c.kv_heads = check_int(where, raw, "kv_heads", 1, 1024)
  if c.heads % c.kv_heads ~= 0 then
    fail(where, "kv_heads", "heads (%d) must be a multiple of kv_heads (%d)", c.heads, c.kv_heads)
  end
  c.head_dim = check_int(where, raw, "head_dim", 1, 512)
  c.masks = check_list(where, raw, "masks", M.MASKS)
  c.phases = check_list(where, raw, "phases", M.PHASES)
  c.isas = check_list(where, raw, "isas", M.ISAS)
  if raw.scale ~= nil then
    if type(raw.scale) ~= "number" or not (raw.scale > 0) or raw.scale == math.huge then
      fail(where, "scale", "must be a positive finite number, got %s", show(raw.scale))
    end
    c.scale = raw.scale
  end
  return c
end

-- Reads a config file: a Lua chunk returning a table, run with no access to the outside world.
function M.load(path)
  local f, err = loadfile(path, "t", {})
  if not f then
    local io_err = io.open(path, "r")
    if not io_err then fail(path, nil, "cannot open the file") end
    io_err:close()
    fail(path, nil, "is not valid Lua: %s", (err:gsub("^.-:(%d+):", "line %1:")))
  end
  local ok, t = pcall(f)
  if not ok then fail(path, nil, "failed while running: %s", tostring(t)) end
  if type(t) ~= "table" then fail(path, nil, "must 'return { ... }' a table, returned %s", type(t)) end
  return t
end

return M

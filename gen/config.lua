-- SPDX-License-Identifier: MIT
-- Step 1-2 of the pipeline: load a config file and validate it against the spec. A user mistake raises a
-- UserError (gen/errors.lua) naming the file (or flag), the field and the reason.
local spec = require("spec")
local errors = require("errors")
local plan = require("plan")
local rope_frequencies = require("rope_frequencies")
local register_budget = require("register_budget")
local attn_features = require("attn_features")
local kinds = require("kinds")

local M = {}

local show, fail = errors.show, errors.fail

local function contains(list, x)
  for _, v in ipairs(list) do if v == x then return true end end
  return false
end

-- `origin` maps a field to the flag that set it, so an error names what the user actually typed.
local function blame(where, origin, field) return errors.at(where, origin, field), field end

local function check_int(where, origin, cfg, field, lo, hi)
  local w, f = blame(where, origin, field)
  local v = cfg[field]
  if v == nil then fail(w, f, "missing (an integer in %d..%d)", lo, hi) end
  if type(v) ~= "number" or v ~= v or v ~= math.floor(v) or v < lo or v > hi then
    fail(w, f, "must be an integer in %d..%d, got %s", lo, hi, show(v))
  end
  return math.floor(v)
end

local function check_list(where, origin, cfg, field, allowed)
  local w, f = blame(where, origin, field)
  local v = cfg[field]
  if type(v) == "string" then v = { v } end
  if type(v) ~= "table" or #v == 0 then
    fail(w, f, "must be a non-empty list of %s, got %s", table.concat(allowed, ", "), show(v))
  end
  local seen, out, n = {}, {}, 0
  for _ in pairs(v) do n = n + 1 end
  if n ~= #v then fail(w, f, "must be a list (no keys or holes)") end
  for i, x in ipairs(v) do
    if not contains(allowed, x) then fail(w, f, "entry %d is %s; allowed: %s", i, show(x), table.concat(allowed, ", ")) end
    if seen[x] then fail(w, f, "%s is listed twice", show(x)) end
    seen[x] = true
  end
  -- canonical order, so the output does not depend on how the list was written
  for _, x in ipairs(allowed) do if seen[x] then out[#out + 1] = x end end
  return out
end

-- Paged caches' rows per page (absent: none): a list of powers of two, ascending in the output.
local function check_page_sizes(where, origin, raw)
  if raw.page_size == nil then return {} end
  local w, f = blame(where, origin, "page_size")
  local v = raw.page_size
  if type(v) == "number" then v = { v } end
  if type(v) ~= "table" or #v == 0 then fail(w, f, "must be a non-empty list of powers of two, got %s", show(v)) end
  local n = 0
  for _ in pairs(v) do n = n + 1 end
  if n ~= #v then fail(w, f, "must be a list (no keys or holes)") end
  local seen, out = {}, {}
  for i, x in ipairs(v) do
    local max = spec.limits.max_page_size
    local pow = 1
    while type(x) == "number" and pow < x and pow < max do pow = pow * 2 end
    if type(x) ~= "number" or x ~= math.floor(x) or x < 1 or x > max or pow ~= x then
      fail(w, f, "entry %d must be a power of two in 1..%d, got %s", i, max, show(x))
    end
    x = math.floor(x)
    if seen[x] then fail(w, f, "%d is listed twice", x) end
    seen[x] = true
    out[#out + 1] = x
  end
  table.sort(out)
  return out
end

-- Free text that the stamp echoes into a C comment: printable, one line, no comment terminator.
local function check_text(where, origin, raw, field)
  local w, f = blame(where, origin, field)
  local v = raw[field]
  if v == nil then return nil end
  if type(v) ~= "string" then fail(w, f, "must be a string, got %s", show(v)) end
  if #v > 400 then fail(w, f, "must be at most 400 characters long, got %d", #v) end
  if v:find("[%c]") then fail(w, f, "must be one line of printable text, got %s", show(v)) end
  if v:find("*/", 1, true) or v:find("/*", 1, true) then
    fail(w, f, "must not contain '/*' or '*/' (it is echoed into a C comment), got %s", show(v))
  end
  return v
end

local FIELDS = { "name", "source", "notes", "heads", "kv_heads", "head_dim", "masks", "phases", "isas", "kv_dtype", "page_size", "rope",
                 "tuned", "kinds", "layers" }

-- A finite number (no nan, no inf).
local function finite(v) return type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge end

-- The keys of a sub-table must be names from `allowed`; `path` names the table in messages ("rope").
local function check_keys(where, t, path, allowed)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do
    if type(k) ~= "string" then fail(where, path, "has a non-name key %s (fields are name = value)", show(k)) end
    if not contains(allowed, k) then
      fail(where, path .. "." .. k, "unknown field (known: %s)", table.concat(allowed, ", "))
    end
  end
end

-- The largest scaling parameter: far beyond any real model, and small enough that every integer up to it is exact.
local PARAM_MAX = 1e15

-- rope = { style, theta, rotary_dim, scaling } against gen/spec.lua's spec.rope. Returns the normalized table
-- (rotary_dim defaults to head_dim) or nil. Every message names the sub-field under `path`, e.g. field 'rope.theta'
-- or 'kinds[2].rope.theta'.
local function check_rope(where, v, head_dim, path)
  if v == nil then return nil end
  if type(v) ~= "table" then
    fail(where, path, "must be a table { style = ..., theta = ..., rotary_dim = ..., scaling = ... }, got %s", show(v))
  end
  check_keys(where, v, path, { "style", "theta", "rotary_dim", "scaling" })
  local styles = spec.names(spec.rope.styles)
  local r = {}
  if v.style == nil then fail(where, path .. ".style", "missing (one of %s)", table.concat(styles, ", ")) end
  if not spec.rope_style[v.style] then
    fail(where, path .. ".style", "must be one of %s, got %s", table.concat(styles, ", "), show(v.style))
  end
  r.style = v.style
  if v.theta == nil then fail(where, path .. ".theta", "missing (the base of the frequencies, e.g. 10000)") end
  if not finite(v.theta) or not (v.theta > 1) then
    fail(where, path .. ".theta", "must be a finite number > 1 (the base of the frequencies), got %s", show(v.theta))
  end
  r.theta = v.theta
  if head_dim < 2 then fail(where, path, "needs head_dim >= 2 (it rotates pairs of dims), head_dim is %d", head_dim) end
  r.rotary_dim = v.rotary_dim == nil and head_dim or v.rotary_dim
  if type(r.rotary_dim) ~= "number" or r.rotary_dim ~= math.floor(r.rotary_dim) or r.rotary_dim % 2 ~= 0 or
     r.rotary_dim < 2 or r.rotary_dim > head_dim then
    fail(where, path .. ".rotary_dim", "must be an even integer in 2..%d (head_dim)%s, got %s", head_dim,
      v.rotary_dim == nil and " (it defaults to head_dim, which is odd: set it)" or "", show(r.rotary_dim))
  end
  r.rotary_dim = math.floor(r.rotary_dim)
  local s = v.scaling
  if s ~= nil then
    local types = spec.names(spec.rope.scalings)
    if type(s) ~= "table" then
      fail(where, path .. ".scaling", "must be a table { type = %s, ... } or absent, got %s", table.concat(types, " | "),
        show(s))
    end
    if s.type == nil then fail(where, path .. ".scaling.type", "missing (one of %s)", table.concat(types, ", ")) end
    if contains(spec.rope.unsupported, s.type) then
      fail(where, path .. ".scaling.type", "%s is not supported yet by this version of attngen (supported: %s)",
        show(s.type), table.concat(types, ", "))
    end
    local kind = spec.rope_scaling[s.type]
    if not kind then
      fail(where, path .. ".scaling.type", "unknown scaling type %s (supported: %s)", show(s.type), table.concat(types, ", "))
    end
    local allowed, defaults = { "type" }, {}
    for _, p in ipairs(kind.params) do allowed[#allowed + 1] = p end
    for _, o in ipairs(kind.optional or {}) do allowed[#allowed + 1], defaults[o[1]] = o[1], o[2] end
    check_keys(where, s, path .. ".scaling", allowed)
    r.scaling = { type = s.type }
    for i = 2, #allowed do
      local name = allowed[i]
      local f, x = path .. ".scaling." .. name, s[name]
      if x == nil and defaults[name] == nil then
        fail(where, f, "missing (%s scaling needs %s)", s.type, table.concat(kind.params, ", "))
      end
      if x == nil then x = defaults[name] or nil end
      if x == nil then -- optional, no default: stays absent
      elseif spec.rope_param[name].bool then
        if type(x) ~= "boolean" then fail(where, f, "must be true or false, got %s", show(x)) end
      elseif spec.rope_param[name].int then
        if not finite(x) or x ~= math.floor(x) or x < 1 or x > PARAM_MAX then
          fail(where, f, "must be an integer in 1..%g, got %s", PARAM_MAX, show(x))
        end
      elseif not finite(x) or not (x > 0) or x > PARAM_MAX then
        fail(where, f, "must be a number > 0 and <= %g, got %s", PARAM_MAX, show(x))
      end
      r.scaling[name] = x
    end
    if kind.check then
      local field, msg = kind.check(r.scaling)
      if field then fail(where, path .. ".scaling." .. field, "%s, got %s", msg, show(r.scaling[field])) end
    end
  end
  -- the frequencies themselves must come out finite and positive (e.g. no theta so large they underflow)
  for i, f in ipairs(rope_frequencies.inverse(r)) do
    if not finite(f) or not (f > 0) then
      fail(where, path, "inverse frequency %d is %s: each must be a positive finite double (lower theta or the " ..
        "scaling factor)", i - 1, show(f))
    end
  end
  return r
end

-- tuned = { <isa> = { <phase> = { <knob> = n, ... } } } (written by `attngen --tune`) against spec.tunables: any
-- subset of ISAs, phases and knobs; each knob an integer in its range; the effective blocking (the vocabulary's
-- defaults for this shape, overlaid by the tuned knobs: gen/plan.lua's plan.blocking) within the ISA's register
-- budget. A decode block is timed on one storage type: its own knobs are the fp32 cache's, and
-- `by_dtype = { <type> = { <knob> = n, ... } }` holds another type's of the config's kv_dtype (a type without one
-- keeps the vocabulary's blocking for that type: converting each K/V vector moves the best block). Prefill reads
-- every type as fp32 tiles, so its knobs serve all. Returns the normalized table (nil when absent or empty);
-- messages name e.g. field 'tuned.avx2.decode.rb' or 'tuned.avx2.decode.by_dtype.int8.pr'.
local function check_tuned(where, raw, head_dim, group, kv_dtypes)
  local v = raw.tuned
  if v == nil then return nil end
  local isas, phases = spec.names(spec.isas), spec.names(spec.phases)
  if type(v) ~= "table" then
    fail(where, "tuned", "must be a table { <isa> = { <phase> = { <knob> = n, ... } } } (written by --tune), got %s", show(v))
  end
  check_keys(where, v, "tuned", isas)
  -- one block's knobs (`extra`: other fields it may hold), checked for `dtype`'s kernels; nil when it sets none
  local function check_knobs(isa, phase, kt, ppath, dtype, extra)
    local knobs = spec.names(spec.tunables[phase])
    if type(kt) ~= "table" then
      fail(where, ppath, "must be a table { %s = n, ... }, got %s", table.concat(knobs, " | "), show(kt))
    end
    local allowed = {}
    for _, n in ipairs(knobs) do allowed[#allowed + 1] = n end
    for _, n in ipairs(extra or {}) do allowed[#allowed + 1] = n end
    check_keys(where, kt, ppath, allowed)
    local norm = {}
    for _, knob in ipairs(spec.tunables[phase]) do
      local x, f = kt[knob.name], ppath .. "." .. knob.name
      if x ~= nil then
        if type(x) ~= "number" or x ~= x or x ~= math.floor(x) or x < knob.lo or x > knob.hi then
          fail(where, f, "must be an integer in %d..%d (%s), got %s", knob.lo, knob.hi, knob.doc, show(x))
        end
        if knob.multiple and x % knob.multiple ~= 0 then
          fail(where, f, "must be a multiple of %d in %d..%d, got %s", knob.multiple, knob.lo, knob.hi, show(x))
        end
        norm[knob.name] = math.floor(x)
      end
    end
    -- the register budget of the blocking the kernels will actually use
    local vocab = plan.isa(isa)
    if vocab.registers then
      local b = plan.blocking(vocab, phase, head_dim, group, norm, nil, dtype)
      local budget, need = register_budget.exceeded(vocab, phase, b)
      if budget then
        local blame_knob, vals = budget.knobs[1], {}
        for i = #budget.knobs, 1, -1 do if norm[budget.knobs[i]] then blame_knob = budget.knobs[i] end end
        for _, kn in ipairs(budget.knobs) do vals[#vals + 1] = string.format("%s %d%s", kn, b[kn], norm[kn] and "" or " (default)") end
        fail(where, ppath .. "." .. blame_knob, "the %s block needs %s = %d vector registers (%s); %s has %d",
          budget.what, budget.formula, need, table.concat(vals, ", "), isa, vocab.registers)
      end
    end
    return next(norm) and norm or nil
  end
  local out = nil
  for _, isa in ipairs(isas) do
    local t = v[isa]
    if t ~= nil then
      local path = "tuned." .. isa
      if type(t) ~= "table" then fail(where, path, "must be a table { %s = { ... } }, got %s", table.concat(phases, " | "), show(t)) end
      check_keys(where, t, path, phases)
      for _, phase in ipairs(phases) do
        local kt = t[phase]
        if kt ~= nil then
          local ppath = path .. "." .. phase
          local norm = check_knobs(isa, phase, kt, ppath, "f32", phase == "decode" and { "by_dtype" } or nil)
          if norm and phase == "decode" and not contains(kv_dtypes, "f32") then
            fail(where, ppath, "its own knobs are the fp32 cache's and the config's kv_dtype has no f32: put them " ..
              "in %s.by_dtype.%s", ppath, kv_dtypes[1])
          end
          local by = kt.by_dtype
          if by ~= nil then
            local bpath = ppath .. ".by_dtype"
            local others = {}
            for _, d in ipairs(kv_dtypes) do if d ~= "f32" then others[#others + 1] = d end end
            if type(by) ~= "table" then
              fail(where, bpath, "must be a table { <storage type> = { <knob> = n, ... } }, got %s", show(by))
            end
            if by.f32 ~= nil then
              fail(where, bpath .. ".f32", "the fp32 cache's knobs are the block's own fields (%s.rb, ...)", ppath)
            end
            if #others == 0 and next(by) ~= nil then
              fail(where, bpath, "the config's kv_dtype lists no storage type but f32")
            end
            check_keys(where, by, bpath, others)
            for _, d in ipairs(others) do
              if by[d] ~= nil then
                local dn = check_knobs(isa, phase, by[d], bpath .. "." .. d, d)
                if dn then
                  norm = norm or {}
                  norm.by_dtype = norm.by_dtype or {}
                  norm.by_dtype[d] = dn
                end
              end
            end
          end
          if norm then
            out = out or {}
            out[isa] = out[isa] or {}
            out[isa][phase] = norm
          end
        end
      end
    end
  end
  return out
end

-- An option's value, by the spec's own rule; `field` names it in the message.
local function check_option(where, field, o, v)
  local err = o.check(v)
  if err then fail(where, field, "%s, got %s", err, show(v)) end
  return v
end

-- Validates a raw table (from a file and/or flags) and returns the normalized config.
-- where: the file name (or "command line"); origin: field -> flag for fields set by flags.
-- raw.kv_dtype checked as a list of the spec's storage types, in spec order (also `attngen --runtime --kv-dtype`).
function M.kv_dtypes(raw, where, origin)
  return check_list(where, origin, raw, "kv_dtype", spec.names(spec.kv_dtypes))
end

function M.validate(raw, where, origin)
  local known = {}
  for _, k in ipairs(FIELDS) do known[k] = true end
  for _, o in ipairs(spec.options) do known[o.name] = true end
  for _, f in ipairs(attn_features.fields()) do known[f] = true end
  for a in pairs(spec.attn_field_aliases) do known[a] = true end
  local keys = {}
  for k in pairs(raw) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do
    if type(k) ~= "string" then fail(where, nil, "has a non-name key %s (fields are name = value)", show(k)) end
    if contains(spec.reserved, k) then fail(where, k, "is not supported yet by this version of attngen") end
    if not known[k] then
      local all = {}
      for _, f in ipairs(FIELDS) do all[#all + 1] = f end
      for _, o in ipairs(spec.options) do all[#all + 1] = o.name end
      for _, f in ipairs(attn_features.fields()) do all[#all + 1] = f end
      fail(where, k, "unknown field (known: %s)", table.concat(all, ", "))
    end
  end
  local c = {}
  do
    local w, f = blame(where, origin, "name")
    c.name = raw.name
    if type(c.name) ~= "string" or not c.name:match("^[a-z0-9][a-z0-9%-]*$") or #c.name > 64 then
      fail(w, f, "must be lowercase letters, digits and '-' (1 to 64 of them, the first not '-'), got %s", show(raw.name))
    end
  end
  c.cname = c.name:gsub("%-", "_")
  c.source = check_text(where, origin, raw, "source")
  c.notes = check_text(where, origin, raw, "notes")
  c.heads = check_int(where, origin, raw, "heads", 1, spec.limits.max_heads)
  c.kv_heads = check_int(where, origin, raw, "kv_heads", 1, spec.limits.max_heads)
  if c.heads % c.kv_heads ~= 0 then
    local w, f = blame(where, origin, "kv_heads")
    fail(w, f, "heads (%d) must be a multiple of kv_heads (%d)", c.heads, c.kv_heads)
  end
  c.head_dim = check_int(where, origin, raw, "head_dim", 1, spec.limits.max_head_dim)
  c.masks = check_list(where, origin, raw, "masks", spec.names(spec.masks))
  c.phases = check_list(where, origin, raw, "phases", spec.names(spec.phases))
  c.isas = check_list(where, origin, raw, "isas", spec.names(spec.isas))
  -- the cache's storage types (absent: fp32 only); a grouped int8 type needs head_dim in whole groups
  if raw.kv_dtype == nil then
    c.kv_dtypes = { "f32" }
  else
    c.kv_dtypes = M.kv_dtypes(raw, where, origin)
    for _, t in ipairs(c.kv_dtypes) do
      local g = spec.kv_dtype[t].group
      if type(g) == "number" and c.head_dim % g ~= 0 then
        local w, f = blame(where, origin, "kv_dtype")
        fail(w, f, "%s needs head_dim (%d) to be a multiple of %d", t, c.head_dim, g)
      end
    end
  end
  c.page_sizes = check_page_sizes(where, origin, raw)
  c.rope = check_rope(errors.at(where, origin, "rope"), raw.rope, c.head_dim, "rope")
  c.attn = attn_features.validate(where, raw, c.masks, nil, origin)
  c.tuned = check_tuned(where, raw, c.head_dim, math.floor(c.heads / c.kv_heads), c.kv_dtypes)
  -- per-kernel options: validated by the spec's own rule, absent = the option's default
  c.options = {}
  for _, o in ipairs(spec.options) do
    local v = raw[o.name]
    if v ~= nil then
      local w, f = blame(where, origin, o.name)
      c.options[o.name] = check_option(w, f, o, v)
    end
  end
  -- kinds of layers: each its own values of the per-kind fields, the top level's by default
  local feature_field = {}
  for _, f in ipairs(attn_features.fields()) do feature_field[f] = true end
  c.kinds = kinds.validate(where, raw.kinds, c, function(path, field, v)
    if field == "rope" then return check_rope(where, v, c.head_dim, path) end
    if feature_field[field] then
      local ok, err = attn_features.check_kind_value(field, spec.kind_entry(field), v)
      if err then fail(where, path, "%s, got %s", err, show(v)) end
      return ok
    end
    return check_option(where, path, spec.kind_entry(field), v)
  end)
  for i, kind in ipairs(c.kinds or {}) do -- each kind's features: the top level's, with the kind's own values
    kind.attn = attn_features.of_kind(where, raw, kind.values, c.masks, string.format("kinds[%d]", i))
  end
  c.layers = kinds.layers(where, raw.layers, c.kinds)
  return c
end

-- Reads a config file: a Lua chunk returning a table, run with no access to the outside world and with an
-- instruction budget, so `while true do end` ends with an error instead of hanging.
local BUDGET = 10000000 -- VM instructions; a real config needs a few hundred
local MAX_BYTES = 1024 * 1024 -- a config is a small table; this bounds what a device or a huge file can cost
function M.load(path)
  local mode = require("lfs").attributes(path, "mode")
  if mode == nil then fail(path, nil, "cannot open the file") end
  if mode ~= "file" then fail(path, nil, "is not a regular file (it is a %s)", mode) end
  local h = io.open(path, "rb")
  if not h then fail(path, nil, "cannot open the file") end
  local text = h:read(MAX_BYTES + 1)
  h:close()
  if not text then text = "" end
  if #text > MAX_BYTES then fail(path, nil, "is larger than %d bytes: a config is a small Lua table", MAX_BYTES) end
  -- a UTF-8 byte-order mark and a "#!" first line are skipped alike by both interpreters (the line is kept empty
  -- so that error line numbers still match the file)
  text = text:gsub("^\239\187\191", ""):gsub("^#[^\n]*", "")
  local f, err = load(text, "=" .. path, "t", {})
  if not f then
    -- only the message's first line: lua5.4 appends a traceback to "C stack overflow"
    local first = tostring(err):match("^[^\n]*")
    fail(path, nil, "is not valid Lua: %s", (first:gsub("^.-:(%d+):", "line %1:"):gsub("%c", " ")))
  end
  if jit then jit.off(f, true) end -- count hooks do not fire inside JIT-compiled loops
  local over = {}
  debug.sethook(function() error(over, 0) end, "", BUDGET)
  local ok, t = pcall(f)
  debug.sethook()
  if not ok then
    if t == over then fail(path, nil, "did not finish (more than %d Lua instructions): a config is a plain table", BUDGET) end
    fail(path, nil, "failed while running: %s", (tostring(t):gsub("%c", " ")))
  end
  if type(t) ~= "table" then fail(path, nil, "must 'return { ... }' a table, returned %s", type(t)) end
  return t
end

return M

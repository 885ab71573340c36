-- SPDX-License-Identifier: MIT
-- Step 5 of the pipeline: templates -> file texts, for kernels that are already enumerated and planned.
-- Nothing here decides a number: it prints what the plan chose. Returns { {path=, text=}, ... }; writing is
-- gen/write.lua's job.
local template = require("pl.template")
local cexpr = require("cexpr")
local spec = require("spec")
local kvtype = require("kvtype")
local version = require("version")
local rope_frequencies = require("rope_frequencies")
local attn_features = require("attn_features")
local user_error = require("errors").raise

local M = {}

local function read(path)
  local f = io.open(path, "rb")
  if not f then user_error("missing template %s", path) end
  local s = f:read("a")
  f:close()
  return s
end

-- A spec list in the order of its C enum values (`id`).
local function by_id(list)
  local t = {}
  for i, e in ipairs(list) do t[i] = e end
  table.sort(t, function(a, b) return a.id < b.id end)
  return t
end

local cache = {}
local function render(root, name, env)
  local path = root .. "/templates/" .. name
  cache[path] = cache[path] or read(path)
  env._escape = "@"          -- '#' would collide with the C preprocessor
  env._inline_escape = "$"
  env._chunk_name = name
  env.I, env.add, env.mul, env.div = cexpr.I, cexpr.add, cexpr.mul, cexpr.div
  env.ipairs, env.pairs, env.math, env.string, env.table, env.tostring = ipairs, pairs, math, string, table, tostring
  env.spec = spec
  env.by_id = by_id
  env.kvtype = kvtype
  local out, err = template.substitute(cache[path], env)
  if not out then error("template " .. name .. ": " .. tostring(err)) end
  -- no trailing blanks, one final newline: stable bytes whatever the template's line layout
  -- (no "\n*$" pattern: lua5.4 and luajit differ on empty matches at the end of a string)
  out = out:gsub("[ \t]+\n", "\n"):gsub("\n\n\n+", "\n\n")
  while out:sub(-1) == "\n" do out = out:sub(1, -2) end
  return out .. "\n"
end

-- A number as C and Lua both read it back exactly: integers as such, else the shortest %.Ng that round-trips
-- (lua5.4 and luajit format through the same C library, so the bytes agree).
local function num(v)
  if v == math.floor(v) and math.abs(v) < 2^53 then return string.format("%d", v) end
  for _, f in ipairs({ "%.15g", "%.16g" }) do
    local s = string.format(f, v)
    if tonumber(s) == v then return s end
  end
  return string.format("%.17g", v)
end
M.num = num

-- A scaling type's fields in spec order: the required ones, then the optional ones.
function M.scaling_fields(name)
  local kind, out = spec.rope_scaling[name], {}
  for _, p in ipairs(kind.params) do out[#out + 1] = p end
  for _, o in ipairs(kind.optional or {}) do out[#out + 1] = o[1] end
  return out
end

-- A rope scaling parameter as a C double: true and false as 1 and 0, absent as 0.
function M.c_param(v)
  if v == nil then return "0" end
  if type(v) == "boolean" then return v and "1" or "0" end
  return num(v)
end

-- One tuned block's knobs as Lua fields, in spec order.
local function knobs_text(phase, t)
  local ks = {}
  for _, knob in ipairs(spec.tunables[phase]) do
    if t[knob.name] then ks[#ks + 1] = string.format("%s = %d", knob.name, t[knob.name]) end
  end
  return ks
end

-- The `tuned` table as Lua source, one line per ISA, knobs and phases in spec order (other storage types' decode
-- knobs in by_dtype, in spec order): the stamp echoes it and `attngen --tune --write` records it in the config, so
-- both read the same.
function M.tuned_lines(tuned, indent)
  local lines = { indent .. "tuned = {" }
  for _, isa in ipairs(spec.isas) do
    local t = tuned[isa.name]
    if t then
      local ps = {}
      for _, phase in ipairs(spec.phases) do
        if t[phase.name] then
          local ks = knobs_text(phase.name, t[phase.name])
          local by = t[phase.name].by_dtype
          if by then -- other storage types' knobs, in spec order
            local bs = {}
            for _, dtype in ipairs(spec.kv_dtypes) do
              if by[dtype.name] then
                bs[#bs + 1] = string.format("%s = { %s }", dtype.name, table.concat(knobs_text(phase.name, by[dtype.name]), ", "))
              end
            end
            ks[#ks + 1] = string.format("by_dtype = { %s }", table.concat(bs, ", "))
          end
          ps[#ps + 1] = string.format("%s = { %s }", phase.name, table.concat(ks, ", "))
        end
      end
      lines[#lines + 1] = string.format("%s  %s = { %s },", indent, isa.name, table.concat(ps, ", "))
    end
  end
  lines[#lines + 1] = indent .. "},"
  return lines
end

-- A rope table as the stamp echoes it: "rope = { style, theta, rotary_dim" (unclosed) and the scaling's
-- "scaling = { ... }" or nil.
local function rope_echo(r)
  local head = string.format("rope = { style = %q, theta = %s, rotary_dim = %d", r.style, num(r.theta), r.rotary_dim)
  if not r.scaling then return head end
  local t = { string.format("type = %q", r.scaling.type) }
  for _, p in ipairs(M.scaling_fields(r.scaling.type)) do
    local v = r.scaling[p]
    if v ~= nil then t[#t + 1] = string.format("%s = %s", p, type(v) == "boolean" and tostring(v) or num(v)) end
  end
  return head, "scaling = { " .. table.concat(t, ", ") .. " }"
end

-- An attention feature's value as the stamp echoes it (ALiBi's { max_bias = b } table, numbers, booleans).
local function attn_value(v)
  if type(v) == "table" then return string.format("{ max_bias = %s }", num(v.max_bias or 8)) end
  if type(v) == "number" then return num(v) end
  return tostring(v)
end

-- Deterministic echo of the config for the stamp (fixed field order). Free text was validated as one
-- printable line without comment delimiters (gen/config.lua).
local function config_lines(c)
  local function list(t)
    local q = {}
    for i, v in ipairs(t) do q[i] = string.format("%q", v) end
    return "{ " .. table.concat(q, ", ") .. " }"
  end
  local lines = {
    string.format("name = %q, heads = %d, kv_heads = %d, head_dim = %d,", c.name, c.heads, c.kv_heads, c.head_dim),
    string.format("masks = %s, phases = %s,", list(c.masks), list(c.phases)),
    string.format("isas = %s,", list(c.isas)),
  }
  if not (#c.kv_dtypes == 1 and c.kv_dtypes[1] == "f32") then
    lines[#lines + 1] = string.format("kv_dtype = %s,", list(c.kv_dtypes))
  end
  if c.page_sizes and #c.page_sizes > 0 then
    lines[#lines + 1] = string.format("page_size = { %s },", table.concat(c.page_sizes, ", "))
  end
  for _, o in ipairs(spec.options) do
    if c.options[o.name] ~= nil then lines[#lines + 1] = string.format("%s = %.9g,", o.name, c.options[o.name]) end
  end
  if c.rope then
    local head, scaling = rope_echo(c.rope)
    if scaling then
      lines[#lines + 1] = head .. ","
      lines[#lines + 1] = "  " .. scaling .. " },"
    else
      lines[#lines + 1] = head .. " },"
    end
  end
  for _, a in ipairs(spec.attn_features) do
    for _, f in ipairs(c.attn and c.attn[a.name] and a.fields or {}) do
      local v = c.attn[a.name][f.name]
      if v ~= nil then lines[#lines + 1] = string.format("%s = %s,", f.name, attn_value(v)) end
    end
  end
  if c.kinds then -- each kind on one line, its own values only (the top level's are above)
    lines[#lines + 1] = "kinds = {"
    for _, kind in ipairs(c.kinds) do
      local t = { string.format("name = %q", kind.name) }
      for _, f in ipairs(spec.kind_fields()) do
        local v = kind.values[f]
        if f == "rope" and v == false then
          t[#t + 1] = "rope = false"
        elseif f == "rope" and v then
          local head, scaling = rope_echo(v)
          t[#t + 1] = head .. (scaling and (", " .. scaling) or "") .. " }"
        elseif type(v) == "number" then
          t[#t + 1] = string.format("%s = %.9g", f, v)
        elseif v ~= nil then
          t[#t + 1] = string.format("%s = %s", f, attn_value(v))
        end
      end
      lines[#lines + 1] = "  { " .. table.concat(t, ", ") .. " },"
    end
    lines[#lines + 1] = "},"
  end
  if c.layers then
    local q = {}
    for i, x in ipairs(c.layers) do q[i] = string.format("%q", x) end
    lines[#lines + 1] = "layers = { " .. table.concat(q, ", ") .. " },"
  end
  if c.tuned then
    for _, l in ipairs(M.tuned_lines(c.tuned, "")) do lines[#lines + 1] = l end
  end
  if c.source then lines[#lines + 1] = "source = " .. c.source end
  return lines
end

-- The kernel template asks for each mask feature through feature(name): true/false in a specialized kernel,
-- nil (decided at run time) in a generic one. A feature the kernel has but the template never asked about has
-- no implementation: that is a generation error, not a silently unmasked kernel.
local function render_kernel(root, isa, k)
  local asked = {}
  local function feature(name)
    if not spec.mask_feature[name] then error("template asks for unknown mask feature '" .. name .. "'") end
    asked[name] = true
    if not k.features then return nil end
    return k.features[name] == true
  end
  -- RoPE like a feature: true/false in a specialized kernel (the config has it or not), nil in a generic one
  -- (the bound kernel's params say). Either way the rotation reads kernel->params.rope at run time.
  local rope = nil
  if k.D then rope = k.rope ~= nil end
  -- options work the same way: option(name) is the config's value in a specialized kernel, nil (read from
  -- kernel->params at run time) in a generic one
  local asked_option = {}
  local function option(name)
    if not spec.option[name] then error("template asks for unknown option '" .. name .. "'") end
    asked_option[name] = true
    if not k.D then return nil end
    return k.options[name]
  end
  -- attention features too: attn(name) is true/false in a specialized kernel, nil in a generic one (the bound
  -- shape's features say); their values are read at run time either way
  local asked_attn = {}
  local function attn(name)
    if not spec.attn_feature[name] then error("template asks for unknown attention feature '" .. name .. "'") end
    asked_attn[name] = true
    if not k.D then return nil end
    return (k.attn and k.attn[name]) ~= nil
  end
  local text = render(root, "kernel.c.tpl", { isa = isa, kern = k, plan = k.plan, mk = k.plan.mk, feature = feature,
                                              rope = rope, option = option, attn = attn })
  for _, a in ipairs(spec.attn_features) do
    if (not k.D or (k.attn and k.attn[a.name])) and not asked_attn[a.name] then
      user_error("spec: attention feature '%s' is not implemented by templates/kernel.c.tpl", a.name)
    end
  end
  for _, f in ipairs(spec.mask_features) do
    if (not k.features or k.features[f.name]) and not asked[f.name] then
      user_error("spec: mask feature '%s' (mask '%s') is not implemented by templates/kernel.c.tpl", f.name, k.mask)
    end
  end
  for _, o in ipairs(spec.options) do
    if o.used_by ~= "runtime" and (not k.D or (k.options and k.options[o.name] ~= nil)) and not asked_option[o.name] then
      user_error("spec: option '%s' is not implemented by templates/kernel.c.tpl (nor marked used_by = \"runtime\")",
        o.name)
    end
  end
  return text
end

-- The function kernel k runs (k.code: for a prefill kernel of another storage type, the fp32 kernel's).
local function code_text(root, isa, k)
  local code = k
  if k.code ~= k.name then
    code = setmetatable({ name = k.code, kv_dtype = k.code_dtype, page_size = false }, { __index = k })
  end
  return render_kernel(root, isa, code)
end

-- The same for gen/share.lua, which compares the code of the kernels of a config's kinds.
function M.kernel_text(root, vocab, k) return code_text(root, vocab(k.isa), k) end

-- A C fragment of templates/isa/ without its own licence line (the generated file's stamp carries it once).
local function prelude_file(root, name, missing, ...)
  local path = root .. "/templates/isa/" .. name .. ".c"
  local h = io.open(path, "rb")
  if not h then user_error(missing, ...) end
  h:close()
  return (read(path):gsub("^/%* SPDX%-License%-Identifier: [^\n]*\n", ""))
end

-- One ISA's section: its prelude (exp and helpers), the microkernels the kernels need, the kernels. `shared` holds
-- the helpers several ISAs use that the file already has (under the same arch condition), so each comes once.
local function section(root, isa, kernels, shared)
  local parts, seen = {}, {}
  for _, k in ipairs(kernels) do
    local mk = k.plan.mk
    -- Q·Kᵀ (and decode's edge blocks), then each P·V microkernel of the plan (decode: one for the whole head_dim,
    -- and its edge blocks; prefill: the column panel and its tail), rendered from the same template with its own
    -- column count, live rows and form
    local list = { { mk.qk_name, mk.template, mk } }
    for _, e in ipairs(mk.qk_edges or {}) do
      list[#list + 1] = { e.name, mk.template, setmetatable({ qk_name = e.name, live = e.live }, { __index = mk }) }
    end
    if mk.qk_rowwise then -- decode: the same blocks in key order, for K rows contiguous per head
      local rw = { mk.qk_rowwise }
      for _, e in ipairs(mk.qk_rowwise.edges) do rw[#rw + 1] = e end
      for _, e in ipairs(rw) do
        local sub = { qk_name = e.name, live = e.live, rowwise = true, rb = mk.qk_rowwise.rb, kb = mk.qk_rowwise.kb,
                      prefetch_in_blocks = false }
        list[#list + 1] = { e.name, mk.template, setmetatable(sub, { __index = mk }) }
      end
    end
    if mk.qk_lanes then -- decode: a kv head's rows in the vector lanes (prefill's form)
      local l = mk.qk_lanes
      local sub = { qk_name = l.name, kb = l.kb, rv = l.rv, qts = l.qts, qs = l.qs, unroll = l.unroll, pf_rows = l.pf_rows }
      list[#list + 1] = { l.name, "qk_microkernel.c.tpl", setmetatable(sub, { __index = mk }) }
      for _, pvt in ipairs({ mk.pv_lanes, mk.pv_lanes.edge }) do -- and its P·V in that form
        list[#list + 1] = { pvt.name, "pvt_microkernel.c.tpl", pvt }
      end
    end
    for _, pv in ipairs(mk.pvs) do
      local sub = setmetatable({ pv_name = pv.name, D0 = mk.D, D = pv.D, unroll = pv.unroll, live = pv.live, pr = pv.pr,
        pvv = pv.pvv, prefetch = pv.prefetch }, { __index = mk })
      list[#list + 1] = { pv.name, "pv_microkernel.c.tpl", sub }
    end
    for _, which in ipairs(list) do
      if not seen[which[1]] then
        seen[which[1]] = true
        parts[#parts + 1] = render(root, which[2], { isa = isa, mk = which[3] })
      end
    end
  end
  -- each function once: kernels listed under another storage type that run the same code (prefill: the fp32
  -- kernel, gen/enumerate.lua's reads_as) share it, and it is emitted even when the config lists no fp32
  local emitted = {}
  for _, k in ipairs(kernels) do
    if not emitted[k.code] then
      emitted[k.code] = true
      parts[#parts + 1] = code_text(root, isa, k)
    end
  end
  local text = prelude_file(root, isa.name, "spec: isa '%s' has no prelude (templates/isa/%s.c)", isa.name, isa.name)
  local common = isa.spec.shared
  local key = common and (common .. " " .. (isa.spec.arch or ""))
  if common and not shared[key] then
    shared[key] = true
    text = prelude_file(root, common, "spec: isa '%s' names shared helpers '%s' that do not exist (templates/isa/%s.c)",
      isa.name, common, common) .. "\n" .. text
  end
  return { isa = isa, kernels = kernels, prelude = text, body = table.concat(parts, "\n") }
end

-- kernels: enumerated and planned (k.plan), grouped into one section per ISA in spec order.
local function sections(root, kernels, vocab)
  local out, shared = {}, {}
  for _, s in ipairs(spec.isas) do
    local ks = {}
    for _, k in ipairs(kernels) do if k.isa == s.name then ks[#ks + 1] = k end end
    if #ks > 0 then out[#out + 1] = section(root, vocab(s.name), ks, shared) end
  end
  return out
end

local function base_env(regen)
  return { version = version, regen = regen, abi = spec.abi, license = "SPDX-License-Identifier: MIT" }
end

-- Each table's kernels per section (ISA), in the sections' order, its RoPE frequencies and its ALiBi slopes (of
-- `heads` query heads).
local function table_parts(tables, secs, heads)
  for _, t in ipairs(tables) do
    t.by_isa = {}
    for _, sec in ipairs(secs) do
      local ks = {}
      for _, k in ipairs(t.kernels) do if k.isa == sec.isa.name then ks[#ks + 1] = k end end
      t.by_isa[#t.by_isa + 1] = { isa = sec.isa, kernels = ks }
    end
    if t.rope then t.inv_freq = rope_frequencies.inverse(t.rope) end
    if t.attn and t.attn.alibi then
      t.attn_max_bias = attn_features.alibi_max_bias(t.attn.alibi.alibi)
      t.alibi_slopes = attn_features.alibi_slopes(heads, t.attn_max_bias)
    end
  end
  return tables
end

-- A model's files: attngen_<cname>.h (X-macro kernel lists, table declarations) and .c (kernels, tables). tables:
-- gen/enumerate.lua's tables, planned and shared (gen/share.lua); each kernel's code is emitted once.
function M.model(root, c, tables, vocab, outdir, regen)
  local base = "attngen_" .. c.cname
  local env = base_env(regen)
  env.config_lines, env.c = config_lines(c), c
  env.file = { h = base .. ".h", c = base .. ".c" }
  env.guard = "ATTNGEN_" .. c.cname:upper() .. "_H"
  local all = {}
  for _, t in ipairs(tables) do
    for _, k in ipairs(t.kernels) do all[#all + 1] = k end
  end
  env.sections = sections(root, all, vocab)
  env.tables = table_parts(tables, env.sections, c.heads)
  env.num, env.c_param, env.cs_scale = num, M.c_param, rope_frequencies.cs_scale
  env.isas = {}
  for _, s in ipairs(env.sections) do env.isas[#env.isas + 1] = s.isa end
  return {
    { path = outdir .. "/" .. base .. ".h", text = render(root, "model.h.tpl", env) },
    { path = outdir .. "/" .. base .. ".c", text = render(root, "source.c.tpl", env) },
  }
end

-- The generated part of the runtime: attngen_spec.h (enums and lists from gen/spec.lua, the same for any types) and
-- attngen_generic.c, stamped `regen`: the generic `kernels` (head_dim, group and mask read at run time) of the
-- storage types `dtypes`.
function M.runtime(root, kernels, vocab, outdir, regen, dtypes)
  local env = base_env(regen)
  env.config_lines = { "generic kernels: head_dim, heads / kv_heads and mask are run-time values",
                       "storage types: " .. table.concat(dtypes, ", ") }
  env.file = { h = "attngen.h", c = "attngen_generic.c" }
  env.sections = sections(root, kernels, vocab)
  env.tables = table_parts({ { table_name = "attngen_table_generic", model = "generic", kernels = kernels,
                               options = {} } }, env.sections)
  env.num, env.c_param, env.cs_scale = num, M.c_param, rope_frequencies.cs_scale
  local senv = base_env("attngen --runtime -o DIR") -- the same header for any storage types
  local vmaj, vmin, vpat = version:match("^(%d+)%.(%d+)%.(%d+)$")
  senv.vmaj, senv.vmin, senv.vpat = vmaj, vmin, vpat
  return {
    { path = outdir .. "/attngen_spec.h", text = render(root, "spec.h.tpl", senv) },
    { path = outdir .. "/attngen_generic.c", text = render(root, "source.c.tpl", env) },
  }
end

-- The storage types for the Python package (python/attngen/_spec.py links to it), written with the runtime's part.
function M.python_spec(root, outdir)
  return { path = outdir .. "/attngen_spec.py", text = render(root, "spec.py.tpl", base_env("attngen --runtime -o DIR")) }
end

-- A registry of several models' tables (tests, benchmarks): one header, no per-model code in the program.
function M.registry(root, name, configs, outdir, regen)
  local env = base_env(regen)
  env.name, env.NAME, env.configs = name, name:upper(), configs
  return { { path = outdir .. "/attngen_registry_" .. name .. ".h", text = render(root, "registry.h.tpl", env) } }
end

return M

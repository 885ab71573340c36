-- Renders the templates for a validated config (or for the generic kernels) and writes the files
-- atomically: everything is rendered in memory first, then each file goes to a temporary and is renamed.
local template = require("pl.template")
local cexpr = require("cexpr")
local plan = require("plan")
local version = require("version")

local M = {}

local ISA = {
  avx2 = require("isa.avx2"),
  neon = require("isa.neon"),
  scalar = require("isa.scalar"),
}
M.ISA = ISA

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local cache = {}
local function render(root, name, env)
  local path = root .. "/templates/" .. name
  cache[path] = cache[path] or read(path)
  env._escape = "@"          -- '#' would collide with the C preprocessor
  env._inline_escape = "$"
  env._chunk_name = name
  env.I, env.add, env.mul = cexpr.I, cexpr.add, cexpr.mul
  env.ipairs, env.math, env.string, env.table, env.tostring = ipairs, math, string, table, tostring
  local out, err = template.substitute(cache[path], env)
  if not out then error("template " .. name .. ": " .. tostring(err)) end
  -- no trailing blanks, one final newline: stable bytes whatever the template's line layout
  -- (no "\n*$" pattern: lua5.4 and luajit differ on empty matches at the end of a string)
  out = out:gsub("[ \t]+\n", "\n"):gsub("\n\n\n+", "\n\n")
  while out:sub(-1) == "\n" do out = out:sub(1, -2) end
  return out .. "\n"
end

-- Deterministic echo of the config for the stamp (fixed field order).
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
  if c.scale then lines[#lines + 1] = string.format("scale = %.9g,", c.scale) end
  if c.source then lines[#lines + 1] = "source = " .. c.source end
  return lines
end

local function kernel_name(c, mask, phase, isa)
  return string.format("attn_h%d_kv%d_d%d_%s_%s__%s", c.heads, c.kv_heads, c.head_dim, mask, phase, isa)
end

-- One ISA's section: its prelude (exp and helpers), the microkernels the kernels need, the kernels.
local function section(root, isa, kernels)
  local parts, seen = {}, {}
  for _, k in ipairs(kernels) do
    for _, which in ipairs({ { k.mk.qk_name, k.mk.template }, { k.mk.pv_name, "pv_microkernel.c.tpl" } }) do
      if not seen[which[1]] then
        seen[which[1]] = true
        parts[#parts + 1] = render(root, which[2], { isa = isa, mk = k.mk })
      end
    end
  end
  for _, k in ipairs(kernels) do
    parts[#parts + 1] = render(root, "kernel.c.tpl", { isa = isa, kern = k, plan = k.plan, mk = k.mk })
  end
  return { isa = isa, kernels = kernels, prelude = read(root .. "/templates/isa/" .. isa.name .. ".c"),
           body = table.concat(parts, "\n") }
end

-- Returns { {path=, text=}, ... } for a model config.
function M.model(root, c, outdir, regen)
  local kernels, sections, isas = {}, {}, {}
  for _, isa_name in ipairs(c.isas) do
    local isa = ISA[isa_name]
    isas[#isas + 1] = isa
    local ks = {}
    for _, phase in ipairs(c.phases) do
      for _, mask in ipairs(c.masks) do
        local p = plan.for_kernel(isa, phase, c.head_dim, math.floor(c.heads / c.kv_heads))
        local k = {
          name = kernel_name(c, mask, phase, isa_name), heads = c.heads, kv_heads = c.kv_heads,
          D = c.head_dim, G = math.floor(c.heads / c.kv_heads), mask = mask, phase = phase, isa = isa,
          causal = (mask == "causal" or mask == "causal_padding"),
          padded = (mask == "padding" or mask == "causal_padding" or mask == "cross"),
          plan = p, mk = plan.microkernel(isa, p, c.head_dim),
          scale = c.scale,
        }
        ks[#ks + 1] = k
        kernels[#kernels + 1] = k
      end
    end
    sections[#sections + 1] = section(root, isa, ks)
  end
  local base = "attngen_" .. c.cname
  local env = {
    version = version, regen = regen, config_lines = config_lines(c), model = c.name,
    file = { h = base .. ".h", c = base .. ".c" },
    guard = "ATTNGEN_" .. c.cname:upper() .. "_H",
    list_macro = "ATTNGEN_" .. c.cname:upper() .. "_KERNELS",
    table_name = "attngen_table_" .. c.cname,
    kernels = kernels, isas = isas, sections = sections,
  }
  return {
    { path = outdir .. "/" .. base .. ".h", text = render(root, "model.h.tpl", env) },
    { path = outdir .. "/" .. base .. ".c", text = render(root, "source.c.tpl", env) },
  }
end

-- The generic kernels (head_dim, group and mask read at run time), for runtime/attngen_generic.c.
function M.generic(root, outdir, regen)
  local sections = {}
  for _, isa_name in ipairs({ "avx2", "neon", "scalar" }) do
    local isa = ISA[isa_name]
    local ks = {}
    for _, phase in ipairs({ "prefill", "decode" }) do
      local p = plan.for_kernel(isa, phase, nil)
      ks[#ks + 1] = {
        name = string.format("attn_generic_%s__%s", phase, isa_name), heads = 0, kv_heads = 0, D = nil,
        G = nil, mask = "none", phase = phase, isa = isa, causal = nil, padded = nil,
        plan = p, mk = plan.microkernel(isa, p, nil),
      }
    end
    sections[#sections + 1] = section(root, isa, ks)
  end
  local env = {
    version = version, regen = regen, model = "generic",
    config_lines = { "generic kernels: head_dim, heads / kv_heads and mask are run-time values" },
    file = { h = "attngen.h", c = "attngen_generic.c" },
    table_name = "attngen_table_generic", sections = sections,
  }
  return { { path = outdir .. "/attngen_generic.c", text = render(root, "source.c.tpl", env) } }
end

-- Write all files or none: temporaries first, renames last.
function M.write_all(files)
  local tmps = {}
  for i, f in ipairs(files) do
    local tmp = f.path .. ".tmp"
    local h, err = io.open(tmp, "wb")
    if not h then
      for _, t in ipairs(tmps) do os.remove(t) end
      return nil, "cannot write " .. tmp .. ": " .. tostring(err)
    end
    h:write(f.text)
    h:close()
    tmps[i] = tmp
  end
  for i, f in ipairs(files) do
    local ok, err = os.rename(tmps[i], f.path)
    if not ok then return nil, "cannot rename " .. tmps[i] .. ": " .. tostring(err) end
  end
  return true
end

return M

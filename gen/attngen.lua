#!/usr/bin/env lua5.4
-- attngen: generate specialized scaled-dot-product attention kernels for one model's shape.
-- Runs under lua5.4 and luajit with byte-identical output.
local script_dir = (arg and arg[0] or ""):match("^(.*)[/\\]") or "."
local root = script_dir .. "/.."
package.path = script_dir .. "/?.lua;" .. package.path

local argparse = require("argparse")
local config = require("config")
local render = require("render")
local version = require("version")

local function csv(s)
  local t = {}
  for x in s:gmatch("[^,%s]+") do t[#t + 1] = x end
  return t
end

local parser = argparse("attngen", "Generate specialized fp32 attention kernels (AVX2, NEON, scalar C) for one model shape.")
  :epilog("Example: lua5.4 gen/attngen.lua configs/llama-3-8b.lua -o generated/llama-3-8b\n" ..
          "         lua5.4 gen/attngen.lua --heads 32 --kv-heads 8 --head-dim 128 --mask causal -o out\n" ..
          "Flags override the config file's fields. Version " .. version .. ".")
parser:argument("config", "Model config: a Lua file returning a table (see docs/design.md)."):args("?")
parser:option("-o --output", "Directory to write attngen_<name>.c/.h into (created if missing).")
parser:option("--name", "Model name (lowercase, digits, '-').")
parser:option("--heads", "Query heads.")
parser:option("--kv-heads", "Key/value heads (heads must be a multiple).")
parser:option("--head-dim", "Head dimension, 1..512.")
parser:option("--mask", "Masks, comma-separated: none,causal,padding,causal_padding,cross.")
parser:option("--phase", "Phases, comma-separated: prefill,decode.")
parser:option("--isa", "ISAs, comma-separated: avx2,neon,scalar.")
parser:option("--scale", "Softmax scale (default 1/sqrt(head_dim)).")
parser:flag("--generic", "Write the generic kernels (runtime/attngen_generic.c) instead of a model.")
parser:flag("--stdout", "Print the generated files instead of writing them.")
parser:flag("--version", "Print the generator version and exit.")

local args = parser:parse()
if args.version then print("attngen " .. version) os.exit(0) end

local function die(msg)
  io.stderr:write("attngen: error: " .. msg .. "\n")
  os.exit(2)
end

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function run()
  if not args.output and not args.stdout then
    config.fail("command line", "-o", "an output directory is required")
  end
  local files
  if args.generic then
    files = render.generic(root, args.output or ".", "lua5.4 gen/attngen.lua --generic -o runtime")
  else
    local raw, where = {}, "command line"
    if args.config then
      raw = config.load(args.config)
      where = args.config
    end
    local function num(flag, v)
      local n = tonumber(v)
      if not n then config.fail("command line", flag, "must be a number, got %q", v) end
      return n
    end
    if args.name then raw.name = args.name end
    if args.heads then raw.heads = num("--heads", args.heads) end
    if args.kv_heads then raw.kv_heads = num("--kv-heads", args.kv_heads) end
    if args.head_dim then raw.head_dim = num("--head-dim", args.head_dim) end
    if args.mask then raw.masks = csv(args.mask) end
    if args.phase then raw.phases = csv(args.phase) end
    if args.isa then raw.isas = csv(args.isa) end
    if args.scale then raw.scale = num("--scale", args.scale) end
    -- defaults for a flags-only run
    if not args.config then
      raw.name = raw.name or string.format("h%s-kv%s-d%s", tostring(raw.heads), tostring(raw.kv_heads),
                                           tostring(raw.head_dim))
      raw.phases = raw.phases or { "prefill", "decode" }
      raw.isas = raw.isas or { "avx2", "neon", "scalar" }
    end
    local c = config.validate(raw, where)
    -- the stamp names the config by its file name only, so it does not depend on where files are written
    local regen = args.config and ("lua5.4 gen/attngen.lua configs/" .. args.config:match("[^/\\]*$") .. " -o DIR")
      or string.format("lua5.4 gen/attngen.lua --name %s --heads %d --kv-heads %d --head-dim %d --mask %s --phase %s --isa %s -o DIR",
        c.name, c.heads, c.kv_heads, c.head_dim, table.concat(c.masks, ","), table.concat(c.phases, ","), table.concat(c.isas, ","))
    files = render.model(root, c, args.output or ".", regen)
  end
  if args.stdout then
    for _, f in ipairs(files) do io.write(f.text) end
    return
  end
  local out = args.output
  if not os.rename(out, out) then
    -- os.execute gives true (lua5.4) or 0 (luajit) on success
    local status = os.execute("mkdir -p " .. shell_quote(out))
    if status ~= true and status ~= 0 then die("cannot create directory " .. out) end
  end
  local ok, err = render.write_all(files)
  if not ok then die(err) end
end

local ok, err = xpcall(run, function(e)
  if getmetatable(e) == config.UserError then return e end
  return debug.traceback(tostring(e), 2) -- a bug in attngen itself: keep the traceback
end)
if not ok then
  if getmetatable(err) == config.UserError then die(err.msg) end
  io.stderr:write("attngen: internal error (please report): " .. tostring(err) .. "\n")
  os.exit(3)
end

#!/usr/bin/env lua5.4
-- SPDX-License-Identifier: MIT
-- attngen: generate specialized scaled-dot-product attention kernels for one model's shape.
-- The pipeline, one module per step:  config (load, validate) -> enumerate -> plan -> render -> write.
-- Runs under lua5.4 and luajit with byte-identical output.
local script_dir = (arg and arg[0] or ""):match("^(.*)[/\\]") or "."
local root = script_dir .. "/.."
package.path = script_dir .. "/?.lua;" .. package.path

local argparse = require("argparse")
local spec = require("spec")
local errors = require("errors")
local config = require("config")
local attn_features = require("attn_features")
local enumerate = require("enumerate")
local plan = require("plan")
local render = require("render")
local share = require("share")
local write = require("write")
local version = require("version")
local flag_value = require("flag_value")

local function csv(s)
  local t = {}
  for x in s:gmatch("[^,%s]+") do t[#t + 1] = x end
  return t
end

local function die(msg)
  io.stderr:write("attngen: error: " .. (tostring(msg):gsub("%c", " ")) .. "\n")
  os.exit(2)
end

local names = function(list) return table.concat(spec.names(list), ",") end
-- Where the documentation is: README.md at the top of a source tree, or <prefix>/share/doc/attngen when installed
-- (the generator then runs from <prefix>/share/attngen/gen).
local function docs_path()
  local lfs = require("lfs")
  local top = script_dir == "gen" and "." or script_dir:match("^(.*)/gen$") or root
  if lfs.attributes(top .. "/README.md", "mode") == "file" then return top == "." and "README.md" or top .. "/README.md" end
  local installed = (top:match("^(.*)/share/attngen$") or "?") .. "/share/doc/attngen/README.md"
  if lfs.attributes(installed, "mode") == "file" then return installed end
  return "attngen's README.md"
end

local parser = argparse("attngen", "Generate specialized attention kernels (" .. names(spec.isas) ..
    "; fp32 arithmetic, K/V caches in " .. names(spec.kv_dtypes) .. ") for one model shape.")
  :epilog("Example: attngen configs/llama-3-8b.lua -o generated/llama-3-8b\n" ..
          "         attngen --heads 32 --kv-heads 8 --head-dim 128 --mask causal -o out\n" ..
          "         attngen configs/llama-3-8b.lua --list\n" ..
          "         attngen configs/llama-3-8b.lua --vendor -o third_party/attngen\n" ..
          "         attngen --heads 32 --kv-heads 8 --head-dim 128 --mask causal --window 4096 --softcap 50 -o out\n" ..
          "Flags override the config file's fields; a table-valued one takes field=value pairs (--alibi max_bias=8).\n" ..
          "Errors: one line 'attngen: error: ...', exit status 2.\n" ..
          "Documentation: " .. docs_path())
parser:argument("config", "Model config: a Lua file returning a table (see README.md, Config); with --registry, several."):args("*")
parser:option("-o --output", "Directory to write attngen_<name>.c/.h into (created if missing).")
parser:option("--name", "Model name (lowercase, digits, '-').")
parser:option("--heads", "Query heads.")
parser:option("--kv-heads", "Key/value heads (heads must be a multiple).")
parser:option("--head-dim", "Head dimension, 1.." .. spec.limits.max_head_dim .. ".")
parser:option("--mask", "Masks, comma-separated: " .. names(spec.masks) .. ".")
parser:option("--phase", "Phases, comma-separated: " .. names(spec.phases) .. ".")
parser:option("--isa", "ISAs, comma-separated: " .. names(spec.isas) .. ".")
parser:option("--kv-dtype", "K/V cache storage types, comma-separated: " .. names(spec.kv_dtypes) .. " (default f32).")
for _, o in ipairs(spec.options) do parser:option("--" .. o.name:gsub("_", "-"), o.doc .. ".") end
-- Every other field a kind of layer may set (rope, the attention features' fields) is a flag of the same name too,
-- read as gen/flag_value.lua says and validated as the config field is.
local function flag_of(field) return "--" .. field:gsub("_", "-") end
local kind_flags = {}
for _, f in ipairs(spec.kind_fields()) do
  if not spec.option[f] then
    kind_flags[#kind_flags + 1] = f
    local doc = f == "rope" and "rotary position embedding as field=value pairs: style=half,theta=500000 " ..
      "(optional rotary_dim=, scaling.type=linear|llama3|yarn, scaling.factor=, ...)" or spec.kind_entry(f).doc
    parser:option(flag_of(f), string.format("Field '%s': %s.", f, doc))
  end
end
parser:flag("--runtime", "Write the generated part of the runtime (attngen_spec.h, attngen_generic.c) instead of a model.")
parser:option("--registry", "Write attngen_registry_<NAME>.h: includes the configs' headers and lists their tables " ..
  "(NAME_TABLES(X) and a NULL-terminated array), for test and bench programs.")
parser:flag("--vendor", "Also write the whole runtime (its .c and .h files) next to the model's files: everything a " ..
  "project compiles with a C99 compiler alone, flat in one directory.")
parser:flag("--list", "List the kernels the config produces (name, ISA, phase, mask, cache type, scratch bytes) and write " ..
  "nothing.")
parser:flag("--stdout", "Print the generated files instead of writing them.")
parser:flag("--version", "Print the generator version and exit.")
parser:flag("--tune", "Time candidate plans (blocking, tiles) of the config's kernels on this machine's best ISA and " ..
  "print the fastest as a `tuned` block (tools/tune/tune.lua); writes no kernels.")
parser:option("--tune-seconds", "With --tune: the timing budget in seconds (default 40).")
parser:flag("--write", "With --tune: record the block in the config file (between '-- attngen tune:' markers).")

-- The flags whose value is a number: a negative one ("--scale -1") is their value, not an unknown option.
local numeric = { ["--heads"] = true, ["--kv-heads"] = true, ["--head-dim"] = true, ["--tune-seconds"] = true }
for _, o in ipairs(spec.options) do numeric["--" .. o.name:gsub("_", "-")] = true end
for _, f in ipairs(kind_flags) do numeric[flag_of(f)] = true end
local function joined_negatives(argv)
  local out, i = {}, 1
  while i <= #argv do
    local a, nxt = argv[i], argv[i + 1]
    if a == "--" then
      for j = i, #argv do out[#out + 1] = argv[j] end
      break
    end
    if numeric[a] and nxt and nxt:match("^%-[%d.]") and tonumber(nxt) then
      out[#out + 1], i = a .. "=" .. nxt, i + 2
    else
      out[#out + 1], i = a, i + 1
    end
  end
  return out
end

-- No arguments at all: the usage, as for any command-line tool, and a failure status.
if #arg == 0 then
  io.stderr:write(parser:get_help(), "\n")
  os.exit(2)
end
-- argparse would print its usage and exit 1; every user error here is one line and exit status 2
local parsed, args = parser:pparse(joined_negatives(arg))
if not parsed then die(args) end
local configs = args.config
if not args.registry then
  if #configs > 1 then die("one config file at a time (several only with --registry)") end
  args.config = configs[1]
end
if args.version then print("attngen " .. version .. " (table ABI " .. spec.abi .. ")") os.exit(0) end

-- Reads the config file and the flags; `origin` remembers which fields came from which flag.
local function gather()
  local raw, where, origin = {}, "command line", {}
  if args.config then
    raw = config.load(args.config)
    where = args.config
  end
  local function num(flag, field, v)
    local n = tonumber(v)
    if not n then errors.fail("command line", string.format("flag '%s' (field '%s')", flag, field), "must be a number, got %s", errors.show(v)) end
    raw[field], origin[field] = n, flag
  end
  local function set(flag, field, v) raw[field], origin[field] = v, flag end
  if args.name then set("--name", "name", args.name) end
  if args.heads then num("--heads", "heads", args.heads) end
  if args.kv_heads then num("--kv-heads", "kv_heads", args.kv_heads) end
  if args.head_dim then num("--head-dim", "head_dim", args.head_dim) end
  if args.mask then set("--mask", "masks", csv(args.mask)) end
  if args.phase then set("--phase", "phases", csv(args.phase)) end
  if args.isa then set("--isa", "isas", csv(args.isa)) end
  if args.kv_dtype then set("--kv-dtype", "kv_dtype", csv(args.kv_dtype)) end
  for _, o in ipairs(spec.options) do
    local v = args[o.name]
    if v then num("--" .. o.name:gsub("_", "-"), o.name, v) end
  end
  for _, f in ipairs(kind_flags) do
    if args[f] then
      origin[f] = flag_of(f)
      raw[f] = flag_value.parse(errors.at(where, origin, f), f, args[f])
    end
  end
  if not args.config then -- defaults for a flags-only run
    local function n(v) return errors.show(v) end -- 8.0 prints as 8 under both interpreters
    raw.name = raw.name or string.format("h%s-kv%s-d%s", n(raw.heads), n(raw.kv_heads),
                                         n(raw.head_dim))
    raw.phases = raw.phases or spec.names(spec.phases)
    raw.isas = raw.isas or spec.names(spec.isas)
  end
  return raw, where, origin
end

-- The config path as the stamp's command line shows it: as given, shell-quoted when it is not a plain path, and
-- never holding a C comment delimiter or a control character (the stamp is a one-line C comment).
local function shown_path(path)
  if path:match("^[%w/._+,:=@%-]+$") then return path end
  local q = path:gsub("%c", "?"):gsub("'", "'\\''"):gsub("%*/", "*''/"):gsub("/%*", "/''*")
  return "'" .. q .. "'"
end

-- A validated config's top-level value of a kind field that has a flag (nil: not set). ALiBi's table always shows
-- its max_bias, as the stamp's config echo does.
local function top_level_value(c, field)
  if field == "rope" then return c.rope end
  for _, a in ipairs(spec.attn_features) do
    local vals = c.attn and c.attn[a.name]
    if vals and vals[field] ~= nil then
      if field == "alibi" and type(vals[field]) == "table" then return { max_bias = attn_features.alibi_max_bias(vals[field]) } end
      return vals[field]
    end
  end
end

-- The fields of a table-valued flag in the order the config echo writes them (prefix: "" or "scaling.").
local function key_order(prefix, t)
  if prefix == "scaling." then
    local keys = { "type" }
    for _, p in ipairs(render.scaling_fields(t.type)) do keys[#keys + 1] = p end
    return keys
  end
  if t.style then return { "style", "theta", "rotary_dim", "scaling" } end
  return { "max_bias" }
end

-- The command that regenerates a file, for its stamp: the config path as given, and DIR for the output
-- directory, so the stamp does not depend on where files are written.
local function regen_command(c)
  if args.config then return "attngen " .. shown_path(args.config) .. " -o DIR" end
  local opts = {}
  for _, o in ipairs(spec.options) do
    if c.options[o.name] then opts[#opts + 1] = string.format(" --%s %.9g", o.name, c.options[o.name]) end
  end
  if not (#c.kv_dtypes == 1 and c.kv_dtypes[1] == "f32") then
    opts[#opts + 1] = " --kv-dtype " .. table.concat(c.kv_dtypes, ",")
  end
  for _, f in ipairs(kind_flags) do
    local v = top_level_value(c, f)
    if v ~= nil then opts[#opts + 1] = string.format(" %s %s", flag_of(f), flag_value.text(v, render.num, key_order)) end
  end
  return string.format("attngen --name %s --heads %d --kv-heads %d --head-dim %d --mask %s --phase %s --isa %s%s -o DIR",
    c.name, c.heads, c.kv_heads, c.head_dim, table.concat(c.masks, ","), table.concat(c.phases, ","),
    table.concat(c.isas, ","), table.concat(opts))
end

local function planned(kernels)
  for _, k in ipairs(kernels) do k.plan = plan.for_kernel(k) end
  return kernels
end

-- The generated part of the runtime, its generic kernels reading `dtypes` (enumerate.generic_dtypes), stamped with
-- the command that writes it.
local function runtime_files(dtypes)
  local some = #dtypes < #spec.kv_dtypes and " --kv-dtype " .. table.concat(dtypes, ",") or ""
  return render.runtime(root, planned(enumerate.generic(dtypes)), plan.isa, args.output or ".",
    "attngen --runtime" .. some .. " -o DIR", dtypes)
end

local function run()
  local broken = spec.self_check() -- an incomplete spec entry is named here, not met as a traceback later
  if broken then errors.raise("%s", broken) end
  if args.tune then -- the tuning tool compiles and runs C: it lives outside the generator's pipeline
    package.path = root .. "/tools/tune/?.lua;" .. package.path
    return require("tune").main(args, root)
  end
  if args.write or args.tune_seconds then
    errors.fail("command line", args.write and "--write" or "--tune-seconds", "only with --tune")
  end
  if not args.output and not args.stdout and not args.list then
    errors.fail("command line", "-o", "an output directory is required")
  end
  local files
  if args.vendor and (args.registry or args.runtime or args.list) then
    errors.fail("command line", "--vendor", "writes one model with the runtime: not with %s",
      args.registry and "--registry" or args.runtime and "--runtime" or "--list")
  end
  if args.registry then
    if not args.registry:match("^[a-z][a-z0-9_]*$") then
      errors.fail("command line", "--registry", "must be a lowercase C identifier (a letter, then letters, digits or " ..
        "'_'), got %s", errors.show(args.registry))
    end
    local cs = {}
    for _, path in ipairs(configs) do cs[#cs + 1] = config.validate(config.load(path), path) end
    files = render.registry(root, args.registry, cs, args.output or ".", "attngen --registry " .. args.registry .. " CONFIGS -o DIR")
  elseif args.runtime then
    if args.config then
      errors.fail("command line", "--runtime", "writes the generic kernels, of no config: name their storage types " ..
        "with --kv-dtype (%s)", args.config)
    end
    local listed = args.kv_dtype and config.kv_dtypes({ kv_dtype = csv(args.kv_dtype) }, "command line",
      { kv_dtype = "--kv-dtype" })
    files = runtime_files(enumerate.generic_dtypes(listed))
    files[#files + 1] = render.python_spec(root, args.output or ".")
  else
    local c = config.validate(gather())
    local tables = enumerate.tables(c)
    for _, t in ipairs(tables) do planned(t.kernels) end
    share.resolve(tables, function(k) return render.kernel_text(root, plan.isa, k) end)
    if args.list then
      local listed = {}
      print(string.format("%-53s %-7s %-8s %-15s %-9s %14s", "kernel", "isa", "phase", "mask", "kv_dtype", "scratch bytes"))
      for _, t in ipairs(tables) do
        for _, k in ipairs(t.kernels) do
          if not listed[k.name] then -- a kernel shared by several kinds' tables, once
            listed[k.name] = true
            print(string.format("%-53s %-7s %-8s %-15s %-9s %14d", k.name, k.isa, k.phase, k.mask, k.kv_dtype,
              4 * k.plan.scratch.total))
          end
        end
      end
      return
    end
    files = render.model(root, c, tables, plan.isa, args.output or ".", regen_command(c))
    if args.vendor then
      -- the runtime's generic kernels for this model's storage types only
      local err
      files, err = require("vendor").with_runtime(root, args.output or ".", files, runtime_files(enumerate.generic_dtypes(c.kv_dtypes)))
      if not files then die(err) end
    end
  end
  if args.stdout then
    for _, f in ipairs(files) do io.write(f.text) end
    return
  end
  if args.output == "" then errors.fail("command line", "-o", "the output directory must not be empty") end
  local ok, err = write.mkdir_p(args.output)
  if not ok then die(err) end
  ok, err = write.all(files)
  if not ok then die(err) end
end

local ok, err = xpcall(run, function(e)
  if errors.is(e) then return e end
  return debug.traceback(tostring(e), 2) -- a bug in attngen itself: keep the traceback
end)
if not ok then
  if errors.is(err) then die(err.msg) end
  io.stderr:write("attngen: internal error (please report): " .. tostring(err) .. "\n")
  os.exit(3)
end

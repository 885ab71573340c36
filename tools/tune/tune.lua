-- SPDX-License-Identifier: MIT
-- `attngen CONFIG --tune [--isa ISA] [--tune-seconds N] [--write]`: times candidate plans (register blocking of the
-- microkernels, keys per tile, rows per item) of ONE config on this machine and records the fastest in the config
-- as its `tuned` field, so that generation itself stays deterministic and the result can be committed.
--
-- Per unit of the config (prefill; decode once per storage type of its kv_dtype, since converting each K/V vector
-- moves the best block: a decode block tuned on fp32 is recorded as the fp32 cache's, another type's in the block's
-- by_dtype): candidates around the plan's default for the config's shape and type (gen/plan.lua's
-- plan.blocking; one knob group varied at a time, within spec.tunables and the ISA's register budget), each
-- generated as its own model ("tune-<unit>-<i>", one mask: causal when the config has it) into a temporary
-- directory, compiled in parallel with `cc -O2` and linked into ONE harness (tools/tune/tune_harness.c) that checks
-- each candidate's output against the default plan's and times them in interleaved rounds (medians of the thread's CPU
-- time). Screening, then a confirmation round of the default, the best two and the combination of the best variant
-- of each improving group. A candidate wins only if it is at least `min_gain` faster than the default by the
-- confirmation's median, faster in each half of its rounds and by the minimum; within `tie` of the fastest, the
-- candidate changing fewer knobs is preferred. Every plan number stays gen/plan.lua's: this module picks knob values.
local spec = require("spec")
local errors = require("errors")
local config = require("config")
local enumerate = require("enumerate")
local register_budget = require("register_budget")
local plan = require("plan")
local render = require("render")
local write = require("write")
local version = require("version")

local M = {}

M.min_gain = 1.03        -- a tuned plan must be at least 3% faster than the default to be recorded
M.tie = 0.015            -- candidates within 1.5% of the fastest: the one changing fewest knobs is chosen
M.default_seconds = 40   -- timing budget of the whole tune (all phases, screening + confirmation)
M.prefill_len = 512      -- prefill: q_len = kv_len = 512
M.decode_kv_len = 4096   -- decode: q_len 1 against 4096 keys ...
M.decode_cold_factor = 2 -- ... read from memory: copies of K/V cycled, together >= this many times the LLC
M.decode_cold_max = 1024 -- at most this many MiB of copies
M.BEGIN, M.END = "-- attngen tune: begin", "-- attngen tune: end"

local function fail(field, fmt, ...) errors.fail("command line", field, fmt, ...) end

-- ------------------------------------------------------------------ shell

local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- Runs a shell command; returns its exit status and its output (stdout and stderr). LuaJIT's popen does not
-- report the status, so the command echoes it.
local function sh(cmd)
  local h = io.popen("(" .. cmd .. ") 2>&1; echo \"attngen-status:$?\"")
  local out = h:read("a")
  h:close()
  local status = tonumber(out:match("attngen%-status:(%d+)%s*$")) or 255
  return status, (out:gsub("attngen%-status:%d+%s*$", ""))
end

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function printable(s) return (tostring(s):gsub("[^%w%s%.,:;()@/+_%-]", ""):gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")) end

-- ------------------------------------------------------------------ the machine

-- The best ISA this machine runs (spec order), every ISA it runs (`runs`: what --tune --isa may time) and its
-- CPU's name, from /proc/cpuinfo.
function M.machine()
  local m = { isa = "scalar", cpu = nil, cpus = 1, runs = { scalar = true } } -- runs: every ISA it can time
  local text = read_file("/proc/cpuinfo")
  if text then
    text = "\n" .. text
    m.cpu = text:match("\nmodel name%s*:%s*([^\n]+)")
    local flags = " " .. (text:match("\nflags%s*:%s*([^\n]+)") or "") .. " "
    local features = " " .. (text:match("\nFeatures%s*:%s*([^\n]+)") or "") .. " "
    local has = function(f) return flags:find(" " .. f .. " ", 1, true) ~= nil end
    if has("avx2") and has("fma") then m.isa = "avx2"; m.runs.avx2 = true end
    if m.isa == "avx2" and has("avx512f") then m.isa = "avx512"; m.runs.avx512 = true end
    if features:find(" asimd ", 1, true) then m.isa = "neon"; m.runs.neon = true end
  end
  local st, n = sh("getconf _NPROCESSORS_ONLN")
  m.cpus = st == 0 and tonumber(n:match("%d+")) or 1
  if not m.cpu then
    local _, arch = sh("uname -m")
    m.cpu = "unknown " .. printable(arch) .. " CPU"
  end
  m.cpu = printable(m.cpu)
  -- the last-level cache, read at run time (machines of one kind differ: 32 MiB, 260 MiB): decode candidates
  -- are timed on K/V that is not in it
  m.llc = 0
  for i = 0, 7 do
    local size = read_file(string.format("/sys/devices/system/cpu/cpu0/cache/index%d/size", i))
    local n, unit = (size or ""):match("^(%d+)([KMG]?)")
    if n then
      local bytes = tonumber(n) * (({ K = 1024, M = 1024 ^ 2, G = 1024 ^ 3 })[unit] or 1)
      if bytes > m.llc then m.llc = bytes end
    end
  end
  if m.llc == 0 then m.llc = 32 * 1024 ^ 2 end -- unknown: assume 32 MiB
  return m
end

-- Decode is timed as a decoder runs it: each layer's K/V cache has left the caches (the other layers' passed
-- through them) by the time its next step reads it. So the harness cycles through copies of K/V that together
-- exceed the last-level cache. In the cache the blockings rank differently: rb=4 kb=2 vs 2x4 (then the default) was
-- 1.05x at head_dim 64 group 4 in L3 but 0.96-0.98x beyond it (group 7: 1.07x and 1.13x).
function M.decode_copies(machine, c, dtype)
  local group = spec.kv_group(dtype or "f32", c.head_dim)
  local scales = group and c.head_dim / group or 0 -- fp32 scales per row
  local bytes = 2 * M.decode_kv_len * c.kv_heads * (c.head_dim * spec.kv_dtype[dtype or "f32"].bytes + 4 * scales)
  local want = math.ceil(M.decode_cold_factor * machine.llc / bytes) + 1
  local cap = math.max(1, math.floor(M.decode_cold_max * 1024 ^ 2 / bytes))
  return math.min(want, cap), bytes
end

-- ------------------------------------------------------------------ candidates

local function knob_names(phase) return spec.names(spec.tunables[phase]) end

local function key_of(phase, b)
  local t = {}
  for _, n in ipairs(knob_names(phase)) do t[#t + 1] = n .. "=" .. tostring(b[n]) end
  return table.concat(t, " ")
end

-- within spec.tunables' ranges and the ISA's register budget (gen/config.lua checks the same on the config)
local function feasible(vocab, phase, b)
  for _, knob in ipairs(spec.tunables[phase]) do
    local x = b[knob.name]
    if x < knob.lo or x > knob.hi or (knob.multiple and x % knob.multiple ~= 0) then return false end
  end
  return register_budget.exceeded(vocab, phase, b) == nil
end

local function overlay(base, t)
  local b = {}
  for k, v in pairs(base) do b[k] = v end
  for k, v in pairs(t) do b[k] = v end
  return b
end

-- The screening grid of one phase: the default, then one knob group varied at a time around it. Returns a list of
-- { knobs = full blocking, group = "default" | "qk" | "pv" | "keys" | "rows" | "current" }.
-- dtype: the storage type of the cache the candidates read (decode; the default blocking is the vocabulary's for it).
function M.grid(vocab, phase, D, G, current, kvh, dtype)
  local W, R = vocab.width, vocab.registers or 32
  local d = plan.blocking(vocab, phase, D, G, nil, kvh, dtype)
  local out, seen = {}, {}
  local function add(group, t)
    local b = overlay(d, t)
    local key = key_of(phase, b)
    if seen[key] or (group ~= "default" and not feasible(vocab, phase, b)) then return end
    seen[key] = true
    out[#out + 1] = { knobs = b, group = group }
  end
  add("default", {})
  local cols = math.floor((D + W - 1) / W) -- vectors of head_dim
  if phase == "prefill" then
    -- Q·Kᵀ: one row vector fewer or more, each with as many keys as the registers hold (and one fewer if odd)
    for rv = d.rv - 1, d.rv + 1 do
      if rv >= 1 then
        local kb = math.min(16, math.floor((R - rv) / rv))
        if kb >= 2 then add("qk", { rv = rv, kb = kb }) end
        if kb >= 5 and kb % 2 == 1 then add("qk", { rv = rv, kb = kb - 1 }) end
      end
    end
    -- P·V: column vectors around the default, as many rows as fit that divide the Q·Kᵀ row block (no padding)
    for pvv = d.pvv - 1, d.pvv + 2 do
      if pvv >= 1 and pvv <= cols then
        local pr = math.min(16, math.floor((R - pvv) / pvv))
        while pr > 1 and (d.rv * W) % pr ~= 0 do pr = pr - 1 end
        if pr >= 1 then add("pv", { pr = pr, pvv = pvv }) end
      end
    end
    for _, keys in ipairs({ math.floor(d.keys / 2), d.keys * 2 }) do
      if keys >= 32 and keys <= 256 then add("keys", { keys = keys }) end
    end
    for _, rows in ipairs({ math.floor(d.rows / 2), d.rows * 2 }) do add("rows", { rows = rows }) end
  else
    -- a step has G query rows per kv head: blocks of more rows than that would only compute padding
    local rows = math.max(1, G)
    for _, rb in ipairs({ 1, 2, 4 }) do
      for _, kb in ipairs({ 2, 4, 8 }) do
        if rb <= rows and rb * kb >= 4 then add("qk", { rb = rb, kb = kb }) end
      end
    end
    for _, pv in ipairs({ { 1, 8 }, { 1, 12 }, { 2, 4 }, { 2, 6 }, { 4, 2 }, { 4, 3 } }) do
      if pv[1] <= rows and pv[2] <= cols then add("pv", { pr = pv[1], pvv = pv[2] }) end
    end
    -- up to 512 keys: short token rows (Qwen2.5-0.5B's kv2/d64, 512 bytes) read faster beyond the cache in long
    -- tiles on AVX-512 (512 keys 1.10-1.16x over 128 at kv_len 131072, Zen 4)
    for _, keys in ipairs({ 8, 16, 32, 64, 128, 256, 512 }) do add("keys", { keys = keys }) end
  end
  if current then add("current", current) end
  return out, d
end

-- What a candidate changes, for the table: "rv=2 kb=7", or "default".
local function label(phase, b, d)
  local t = {}
  for _, n in ipairs(knob_names(phase)) do
    if b[n] ~= d[n] then t[#t + 1] = n .. "=" .. b[n] end
  end
  return #t == 0 and "default" or table.concat(t, " ")
end

-- ------------------------------------------------------------------ build and run

-- The knobs of a tuned block as the config records them for `dtype`: the block's own (fp32) or its by_dtype entry.
local function tuned_block(dtype, knobs)
  if dtype == "f32" then return knobs end
  return { by_dtype = { [dtype] = knobs } }
end

-- The validated config of candidate i of a unit: the model's shape and options, one ISA, phase, mask and storage
-- type, its knobs as `tuned`.
local function candidate_config(c, isa, u, mask, cand, i)
  local raw = { name = string.format("tune-%s-%d", u.name:gsub("_", "-"), i), heads = c.heads, kv_heads = c.kv_heads,
                head_dim = c.head_dim, masks = { mask }, phases = { u.phase }, isas = { isa }, rope = c.rope,
                kv_dtype = { u.dtype } }
  for k, v in pairs(c.options) do raw[k] = v end
  if cand.group ~= "default" then raw.tuned = { [isa] = { [u.phase] = tuned_block(u.dtype, cand.knobs) } } end
  return config.validate(raw, "tune candidate " .. raw.name)
end

local function generate(root, dir, cc)
  local tables = enumerate.tables(cc)
  for _, k in ipairs(tables[1].kernels) do k.plan = plan.for_kernel(k) end
  local ok, err = write.all(render.model(root, cc, tables, plan.isa, dir, "attngen --tune (candidate)"))
  if not ok then fail("--tune", "%s", err) end
  return "attngen_" .. cc.cname
end

local Build = {}
Build.__index = Build

local function new_build(root, machine, c, isa, masks)
  local st, dir = sh("mktemp -d \"${TMPDIR:-/tmp}/attngen-tune.XXXXXX\"")
  dir = dir:match("^%s*(.-)%s*$")
  if st ~= 0 or dir == "" then fail("--tune", "cannot create a temporary directory: %s", printable(dir)) end
  local b = setmetatable({ root = root, dir = dir, machine = machine, c = c, isa = isa, masks = masks,
                           cc = os.getenv("CC") or "cc", sources = {}, compiled = {}, units = {}, unit_of = {},
                           tables = {} }, Build)
  -- the runtime's generated part, fresh from this generator (its ABI matches the candidates' tables), its generic
  -- kernels for the config's storage types
  local dtypes = enumerate.generic_dtypes(c.kv_dtypes)
  local gk = enumerate.generic(dtypes)
  for _, k in ipairs(gk) do k.plan = plan.for_kernel(k) end
  local ok, err = write.mkdir_p(dir .. "/runtime")
  if ok then ok, err = write.all(render.runtime(root, gk, plan.isa, dir .. "/runtime", "attngen --runtime -o DIR", dtypes)) end
  if not ok then fail("--tune", "%s", err) end
  local rst, abs = sh("cd " .. quote(root) .. " && pwd") -- the harness is built from inside the temporary directory
  if rst == 0 then root = abs:match("^%s*(.-)%s*$") end
  b.root = root
  local rt = root .. "/runtime"
  local inc = "-I" .. quote(dir .. "/runtime") .. " -I" .. quote(rt) .. " -I" .. quote(dir)
  local f = assert(io.open(dir .. "/cc1.sh", "wb"))
  f:write("#!/bin/sh\n# compiles one source of the tune harness: cc1.sh SOURCE.c OBJECT.o\n",
    "exec ", quote(b.cc), " -O2 ", inc, " -c \"$1\" -o \"$2\"\n")
  f:close()
  -- the hand-written runtime: every C file in runtime/ (an installed tree keeps the generic kernels there too; the
  -- harness compiles the ones generated above instead)
  local lst, names = sh("cd " .. quote(rt) .. " && ls *.c")
  if lst ~= 0 then fail("--tune", "cannot list the runtime's sources in %s: %s", rt, printable(names)) end
  for name in names:gmatch("[^\n]+") do
    if name ~= "attngen_generic.c" then
      b.sources[#b.sources + 1] = { src = quote(rt .. "/" .. name), obj = "rt_" .. name:gsub("%.c$", ".o") }
    end
  end
  b.sources[#b.sources + 1] = { src = "runtime/attngen_generic.c", obj = "rt_generic.o" }
  b.sources[#b.sources + 1] = { src = quote(root .. "/tools/tune/tune_harness.c"), obj = "tune_harness.o", harness = true }
  return b
end

-- A unit of the tune: a phase timed on one storage type's cache, its candidates' tables in one list. Prefill reads
-- fp32 tiles whatever the cache holds (one unit); decode has a unit per storage type of the config.
function Build:unit(phase, dtype)
  local name = phase .. (dtype ~= "f32" and "_" .. dtype or "")
  if not self.unit_of[name] then
    -- the report names decode's type when the config has several (or not fp32)
    local typed = phase == "decode" and (dtype ~= "f32" or #self.c.kv_dtypes > 1)
    local u = { name = name, phase = phase, dtype = dtype, label = phase .. (typed and " " .. dtype or "") }
    self.tables[name] = {}
    self.units[#self.units + 1] = u
    self.unit_of[name] = u
  end
  return self.unit_of[name]
end

-- Adds a candidate of unit u (generates its files); returns its index in the unit's table list.
function Build:add(u, cand)
  local list = self.tables[u.name]
  local i = #list
  local cc = candidate_config(self.c, self.isa, u, self.masks[u.phase], cand, i)
  local base = generate(self.root, self.dir, cc)
  list[#list + 1] = "attngen_table_" .. cc.cname
  self.sources[#self.sources + 1] = { src = base .. ".c", obj = base .. ".o" }
  cand.index = i
  return i
end

local MASK_ENUM = function(m) return "ATTNGEN_MASK_" .. m:upper() end

-- Writes tune_cands.h, compiles what is new (in parallel: one cc per source, as many at once as CPUs) and links.
function Build:compile()
  local c = self.c
  local h = {
    "/* written by tools/tune/tune.lua for tools/tune/tune_harness.c */",
    string.format("#define TUNE_ISA ATTNGEN_ISA_%s", self.isa:upper()),
    string.format("#define TUNE_HEADS %d", c.heads), string.format("#define TUNE_KV_HEADS %d", c.kv_heads),
    string.format("#define TUNE_HEAD_DIM %d", c.head_dim),
    string.format("#define TUNE_PREFILL_MASK %s", MASK_ENUM(self.masks.prefill or "none")),
    string.format("#define TUNE_PREFILL_Q %d", M.prefill_len), string.format("#define TUNE_PREFILL_KV %d", M.prefill_len),
    string.format("#define TUNE_DECODE_MASK %s", MASK_ENUM(self.masks.decode or "none")),
    string.format("#define TUNE_DECODE_Q 1"), string.format("#define TUNE_DECODE_KV %d", M.decode_kv_len),
  }
  -- every unit's tables in one list; per unit its name, phase, storage type, first table, count, K/V copies
  local xs, us, first = {}, {}, 0
  for _, u in ipairs(self.units) do
    for _, t in ipairs(self.tables[u.name]) do xs[#xs + 1] = "X(" .. t .. ")" end
    us[#us + 1] = string.format("{ \"%s\", ATTNGEN_PHASE_%s, ATTNGEN_KV_%s, %d, %d, %d }", u.name, u.phase:upper(),
      u.dtype:upper(), first, #self.tables[u.name], u.phase == "decode" and M.decode_copies(self.machine, c, u.dtype) or 1)
    first = first + #self.tables[u.name]
  end
  h[#h + 1] = "#define TUNE_TABLES(X) " .. table.concat(xs, " ")
  h[#h + 1] = "#define TUNE_UNITS " .. table.concat(us, ", ")
  local f = assert(io.open(self.dir .. "/tune_cands.h", "wb"))
  f:write(table.concat(h, "\n"), "\n")
  f:close()
  local todo = {}
  for _, s in ipairs(self.sources) do
    if s.harness or not self.compiled[s.obj] then todo[#todo + 1] = s.src .. " " .. s.obj end
  end
  f = assert(io.open(self.dir .. "/todo.txt", "wb"))
  f:write(table.concat(todo, "\n"), "\n")
  f:close()
  local st, out = sh("cd " .. quote(self.dir) .. " && xargs -P " .. math.max(1, self.machine.cpus) ..
    " -L 1 sh cc1.sh < todo.txt")
  if st ~= 0 then
    fail("--tune", "compiling the candidates failed (%s; files kept in %s): %s", self.cc, self.dir,
      printable(out):sub(1, 300))
  end
  for _, s in ipairs(self.sources) do self.compiled[s.obj] = true end
  local objs = {}
  for _, s in ipairs(self.sources) do objs[#objs + 1] = s.obj end
  st, out = sh("cd " .. quote(self.dir) .. " && " .. quote(self.cc) .. " -O2 -o tune_harness " ..
    table.concat(objs, " ") .. " -lm -lpthread")
  if st ~= 0 then
    fail("--tune", "linking the tune harness failed (files kept in %s): %s", self.dir, printable(out):sub(1, 300))
  end
end

-- Times candidates of unit u (index 0, the default, first); returns { info = {reps, rounds, seconds}, [index] = result }.
function Build:time(u, indices, seconds)
  local args = {}
  for i, x in ipairs(indices) do args[i] = tostring(x) end
  local st, out = sh("cd " .. quote(self.dir) .. " && ./tune_harness " .. u.name .. " " ..
    string.format("%.3f", seconds) .. " " .. table.concat(args, " "))
  if st ~= 0 then fail("--tune", "the tune harness failed (files kept in %s): %s", self.dir, printable(out):sub(1, 300)) end
  local res = { info = {} }
  for line in out:gmatch("[^\n]+") do
    local reps, rounds, secs = line:match("^I (%d+) (%d+) ([%d.]+)$")
    if reps then res.info = { reps = tonumber(reps), rounds = tonumber(rounds), seconds = tonumber(secs) } end
    local idx, what, rest = line:match("^R (%d+) (%a+) ?(.*)$")
    if idx then
      local r = { status = what }
      if what == "ok" then
        local v = {}
        for x in rest:gmatch("%S+") do v[#v + 1] = tonumber(x) end
        r.med, r.h1, r.h2, r.q1, r.q3, r.min, r.wall, r.diff = v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]
      elseif what == "bad" then
        r.note = "output differs from the default plan's by " .. rest:gsub(" ", " (tolerance ") .. ")"
      else
        r.note = rest
      end
      res[tonumber(idx)] = r
    end
  end
  if not res[0] or res[0].status ~= "ok" then
    fail("--tune", "the default plan did not run: %s", res[0] and res[0].note or printable(out):sub(1, 300))
  end
  return res
end

function Build:cleanup()
  if self.cleaned then return end
  self.cleaned = true
  if os.getenv("ATTNGEN_TUNE_KEEP") then
    io.stderr:write("attngen tune: files kept in " .. self.dir .. "\n")
    return
  end
  sh("rm -rf " .. quote(self.dir))
end

-- ------------------------------------------------------------------ report

local function print_table(out, title, cands, res, d, phase)
  local base = res[0].med
  out:write(title, "\n")
  out:write(string.format("  %3s  %-36s %9s %9s %9s  %s\n", "#", "candidate (knobs changed)", "ms", "min ms", "wall ms",
    "speed vs default: median (halves), min"))
  local rows = {}
  for _, cand in ipairs(cands) do rows[#rows + 1] = cand end
  table.sort(rows, function(a, b)
    local ra, rb = res[a.index], res[b.index]
    local ta = ra and ra.med or math.huge
    local tb = rb and rb.med or math.huge
    if ta ~= tb then return ta < tb end
    return a.index < b.index
  end)
  for _, cand in ipairs(rows) do
    local r = res[cand.index]
    local name = label(phase, cand.knobs, d)
    if r and r.status == "ok" then
      out:write(string.format("  %3d  %-36s %9.3f %9.3f %9.3f  %.3fx (%.3fx, %.3fx), %.3fx\n", cand.index, name,
        1e3 * r.med, 1e3 * r.min, 1e3 * r.wall, base / r.med, res[0].h1 / r.h1, res[0].h2 / r.h2, res[0].min / r.min))
    else
      out:write(string.format("  %3d  %-36s %9s  discarded: %s\n", cand.index, name, "-", r and r.note or "no result"))
    end
  end
end

local function noise(res)
  local r = res[0]
  return 100 * (r.q3 - r.q1) / r.med
end

-- ------------------------------------------------------------------ one phase

-- current: the config's tuned knobs for the unit (nil: none), a candidate of its own
local function tune_unit(b, u, current)
  local c = b.c
  local cands, d = M.grid(plan.isa(b.isa), u.phase, c.head_dim, math.floor(c.heads / c.kv_heads), current, c.kv_heads,
    u.dtype)
  for _, cand in ipairs(cands) do b:add(u, cand) end
  return cands, d
end

local function shape_text(b, u)
  if u.phase == "prefill" then
    return string.format("%s, q_len %d, kv_len %d", b.masks.prefill, M.prefill_len, M.prefill_len)
  end
  local copies, bytes = M.decode_copies(b.machine, b.c, u.dtype)
  return string.format("%s, q_len 1, kv_len %d, %sK/V from memory (%d copies of %.1f MiB cycled; LLC %.0f MiB)",
    b.masks.decode, M.decode_kv_len, u.dtype ~= "f32" and u.dtype .. " " or "", copies, bytes / 1024 ^ 2,
    b.machine.llc / 1024 ^ 2)
end

-- ------------------------------------------------------------------ the config file


-- the code part of one line (a `--` comment outside quotes removed)
local function code_of(line)
  local q = nil
  local i = 1
  while i <= #line do
    local ch = line:sub(i, i)
    if q then
      if ch == "\\" then i = i + 1 elseif ch == q then q = nil end
    elseif ch == "\"" or ch == "'" then q = ch
    elseif line:sub(i, i + 1) == "--" then return line:sub(1, i - 1) end
    i = i + 1
  end
  return line
end

-- Loads a config text the way config.load does (no environment) and validates it.
local function check_text(text, path)
  local f = load(text, "=" .. path, "t", {})
  if not f then return nil end
  local ok, t = pcall(f)
  if not ok or type(t) ~= "table" then return nil end
  local vok, c = pcall(config.validate, t, path)
  if not vok then return nil, c end
  return c
end

-- the tuned table as a string, to compare what a config says with what was meant
local function key_of_tuned(t)
  if not t then return "" end
  local parts = {}
  for _, isa in ipairs(spec.isas) do
    for _, phase in ipairs(spec.phases) do
      local k = t[isa.name] and t[isa.name][phase.name]
      if k then
        for _, dtype in ipairs(spec.kv_dtypes) do
          -- each type's knobs once: a prefill block (and fp32's decode knobs) is the block itself
          local kd = plan.tuned_for(k, phase.name, dtype.name)
          if kd and (dtype.name == "f32" or kd ~= k) then
            local ks = {}
            for _, n in ipairs(knob_names(phase.name)) do ks[#ks + 1] = n .. "=" .. tostring(kd[n]) end
            parts[#parts + 1] = isa.name .. "." .. phase.name .. "." .. dtype.name .. ":" .. table.concat(ks, " ")
          end
        end
      end
    end
  end
  return table.concat(parts, ";")
end

-- The config text with the block between the markers replaced, or inserted before the table's final brace.
-- `comments`: this ISA's comment lines; `tuned`: the whole tuned table to record (nil: none).
function M.splice(text, path, isa, comments, tuned)
  local lines = {}
  for line in (text:sub(-1) == "\n" and text or text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  local b, e
  for i, line in ipairs(lines) do
    local s = line:match("^%s*(.-)%s*$")
    if s == M.BEGIN then
      if b then fail("--write", "%s has two '%s' lines", path, M.BEGIN) end
      b = i
    elseif s == M.END then
      if e then fail("--write", "%s has two '%s' lines", path, M.END) end
      e = i
    end
  end
  if (b == nil) ~= (e == nil) or (b and e < b) then
    fail("--write", "%s: the markers '%s' and '%s' must both be there, in that order", path, M.BEGIN, M.END)
  end
  local indent = text:match("\n([ \t]+)[%a_][%w_]*%s*=") or "  "
  local kept = {}
  if b then
    indent = lines[b]:match("^(%s*)")
    for i = b + 1, e - 1 do
      local who = lines[i]:match("^%s*%-%- (%w+): ")
      if who and who ~= isa and spec.isa[who] then kept[#kept + 1] = indent .. lines[i]:match("^%s*(.*)$") end
    end
  end
  local block = { indent .. M.BEGIN }
  for _, l in ipairs(kept) do block[#block + 1] = l end
  for _, l in ipairs(comments) do block[#block + 1] = indent .. "-- " .. isa .. ": " .. l end
  if tuned and next(tuned) then
    for _, l in ipairs(render.tuned_lines(tuned, indent)) do block[#block + 1] = l end
  end
  block[#block + 1] = indent .. M.END
  local variants = {}
  if b then
    local t = {}
    for i = 1, b - 1 do t[#t + 1] = lines[i] end
    for _, l in ipairs(block) do t[#t + 1] = l end
    for i = e + 1, #lines do t[#t + 1] = lines[i] end
    variants[1] = table.concat(t, "\n") .. "\n"
  else
    -- the table's final closing brace: the last '}' with only blanks and comments after it
    local pos = text:match(".*()}")
    local rest = pos and text:sub(pos + 1):gsub("%-%-[^\n]*", ""):match("^%s*$")
    if not pos or not rest then fail("--write", "%s: cannot find the closing brace of the returned table", path) end
    local head = text:sub(1, pos - 1):gsub("[ \t]*$", "")
    local tail = text:sub(pos)
    local nl = head:sub(-1) == "\n" and "" or "\n"
    local body = table.concat(block, "\n") .. "\n"
    variants[1] = head .. nl .. body .. tail
    -- the last field may lack its separator: add one after its code (before any comment on its line)
    local before, last = head:match("^(.-)([^\n]*)\n?$")
    if last then
      local code = code_of(last):gsub("%s*$", "")
      if #code > 0 then
        local sep_line = code .. "," .. last:sub(#code + 1)
        variants[2] = before .. sep_line .. (head:sub(-1) == "\n" and "\n" or "") .. nl .. body .. tail
      end
    end
  end
  for _, v in ipairs(variants) do
    local c, err = check_text(v, path)
    if c then
      -- the recorded values must be what the config now says (no second `tuned` field shadowing them)
      local want = tuned and next(tuned) and tuned or nil
      if key_of_tuned(c.tuned) == key_of_tuned(want) then return v, c end
    elseif err then
      fail("--write", "%s would not validate after the edit: %s", path, tostring(err))
    end
  end
  fail("--write", "%s: cannot insert the tuned block so that the config still loads (edit it by hand: %s)", path,
    "put the block before the table's closing brace")
end

-- ------------------------------------------------------------------ main

-- args: the CLI's parsed arguments (gen/attngen.lua); root: the tree with gen/, templates/, runtime/, tools/tune/.
function M.main(args, root)
  local out = io.stdout
  for _, f in ipairs({ { "output", "-o" }, { "list", "--list" }, { "stdout", "--stdout" }, { "runtime", "--runtime" },
                       { "registry", "--registry" }, { "name", "--name" }, { "heads", "--heads" },
                       { "kv_heads", "--kv-heads" }, { "head_dim", "--head-dim" }, { "mask", "--mask" },
                       { "phase", "--phase" } }) do
    if args[f[1]] then fail("--tune", "takes the shape from the config file and writes no kernels: drop %s", f[2]) end
  end
  for _, o in ipairs(spec.options) do
    if args[o.name] then fail("--tune", "takes the shape from the config file: drop --%s", o.name:gsub("_", "-")) end
  end
  local path = args.config
  if not path then fail("--tune", "needs a config file (attngen CONFIG --tune)") end
  local seconds = M.default_seconds
  if args.tune_seconds then
    seconds = tonumber(args.tune_seconds)
    if not seconds or seconds ~= seconds or seconds <= 0 or seconds > 3600 then
      fail("flag '--tune-seconds'", "must be a number of seconds in (0, 3600], got %s", errors.show(args.tune_seconds))
    end
  end
  local c = config.validate(config.load(path), path)
  local machine = M.machine()
  local isa = machine.isa
  if args.isa then
    local want = {}
    for x in args.isa:gmatch("[^,%s]+") do want[#want + 1] = x end
    if #want ~= 1 or not spec.isa[want[1]] then
      fail("flag '--isa'", "--tune times one ISA (%s), got %s", table.concat(spec.names(spec.isas), ", "),
        errors.show(args.isa))
    end
    if not machine.runs[want[1]] then
      fail("flag '--isa'", "this machine's best ISA is %s and it cannot run %s (%s kernels must be tuned on a " ..
        "machine that has it)", isa, want[1], want[1])
    end
    isa = want[1]
  end
  local has = false
  for _, x in ipairs(c.isas) do if x == isa then has = true end end
  if not has then
    fail("--tune", "%s generates no %s kernels (isas = %s): nothing to tune on this machine", path, isa,
      table.concat(c.isas, ", "))
  end
  if args.write and c.tuned and not (read_file(path) or ""):find(M.BEGIN, 1, true) then
    fail("--write", "%s has a 'tuned' field outside the '%s' / '%s' markers: remove it (or put it between them)",
      path, M.BEGIN, M.END)
  end
  -- the mask each phase is timed with: causal when the config has it
  local mask = c.masks[1]
  for _, m in ipairs({ "causal", "none" }) do
    local found = false
    for _, x in ipairs(c.masks) do if x == m then found = true end end
    if found then mask = m break end
  end
  local masks = {}
  for _, p in ipairs(c.phases) do masks[p] = mask end

  local b = new_build(root, machine, c, isa, masks)
  local ok, err = xpcall(function() return M.measure(b, args, path, c, isa, machine, seconds, out) end, function(e)
    if errors.is(e) then return e end
    return debug.traceback(tostring(e), 2) -- a bug: keep the traceback for the CLI's internal-error report
  end)
  -- a failed build or run keeps its files (the message names the directory); anything else cleans up
  if not (not ok and errors.is(err) and err.msg:find("files kept in", 1, true)) then b:cleanup() end
  if not ok then error(err, 0) end
end

-- Generates, builds and times the candidates, then prints (or, with --write, records) the block.
function M.measure(b, args, path, c, isa, machine, seconds, out)
  local t_start = os.time()
  io.stderr:write(string.format("attngen tune: %s on %s (%s, %d CPUs): generating candidates in %s\n", c.name, isa,
    machine.cpu, machine.cpus, b.dir))
  local phases = {} -- one entry per unit: prefill, decode per storage type
  for _, phase in ipairs(c.phases) do
    for _, dtype in ipairs(phase == "decode" and c.kv_dtypes or { "f32" }) do
      local u = b:unit(phase, dtype)
      -- the config's knobs for this unit, as a candidate of their own (its knob fields only)
      local block = plan.tuned_for(c.tuned and c.tuned[isa] and c.tuned[isa][phase], phase, dtype)
      local current
      for _, n in ipairs(knob_names(phase)) do
        if block and block[n] then current = current or {}; current[n] = block[n] end
      end
      local cands, d = tune_unit(b, u, current)
      local screened = {}
      for i, cand in ipairs(cands) do screened[i] = cand end
      phases[#phases + 1] = { u = u, phase = phase, cands = cands, screened = screened, d = d }
    end
  end
  local n = 0
  for _, u in ipairs(b.units) do n = n + #b.tables[u.name] end
  io.stderr:write(string.format("attngen tune: compiling %d candidates with %s -O2 (%d at a time)\n", n, b.cc, machine.cpus))
  b:compile()
  local per_phase = seconds / #phases
  out:write(string.format("attngen tune: %s, %s kernels on %s (%d CPUs); 1 thread, interleaved rounds, the thread's " ..
    "CPU time per call (wall-clock time for reference)\n",
    c.name, isa, machine.cpu, machine.cpus))
  -- screening: every candidate of a phase
  for _, ph in ipairs(phases) do
    local idx = {}
    for _, cand in ipairs(ph.cands) do idx[#idx + 1] = cand.index end
    io.stderr:write(string.format("attngen tune: timing %d %s candidates (%.0f s)\n", #idx, ph.u.label, per_phase / 2))
    ph.screen = b:time(ph.u, idx, per_phase / 2)
  end
  -- confirmation: the default, the best two, and the best variant of each improving group combined
  local new = false
  for _, ph in ipairs(phases) do
    local res, d = ph.screen, ph.d
    local base = res[0].med
    local ranked = {}
    for _, cand in ipairs(ph.cands) do
      local r = res[cand.index]
      if cand.index ~= 0 and r and r.status == "ok" then ranked[#ranked + 1] = cand end
    end
    table.sort(ranked, function(x, y) return res[x.index].med < res[y.index].med end)
    ph.confirm = { ph.cands[1] }
    local seen = { [key_of(ph.phase, d)] = true }
    local function push(cand)
      local k = key_of(ph.phase, cand.knobs)
      if not seen[k] then seen[k] = true ph.confirm[#ph.confirm + 1] = cand end
    end
    for i = 1, math.min(2, #ranked) do
      if res[ranked[i].index].med < base then push(ranked[i]) end
    end
    -- best improving variant per group (more than 1% faster), combined
    local best = {}
    for _, cand in ipairs(ranked) do
      local g = cand.group
      if g ~= "current" and not best[g] and res[cand.index].med < 0.99 * base then best[g] = cand end
    end
    local groups = {}
    for g, cand in pairs(best) do groups[#groups + 1] = { g = g, cand = cand } end
    table.sort(groups, function(x, y) return res[x.cand.index].med < res[y.cand.index].med end)
    local function combine(k)
      local knobs = {}
      for k2, v in pairs(d) do knobs[k2] = v end
      for i = 1, k do
        for _, n in ipairs(knob_names(ph.phase)) do
          if groups[i].cand.knobs[n] ~= d[n] then knobs[n] = groups[i].cand.knobs[n] end
        end
      end
      return { knobs = knobs, group = "combined" }
    end
    for k = #groups, 2, -1 do
      if k == #groups or k == 2 then
        local cand = combine(k)
        if feasible(plan.isa(isa), ph.phase, cand.knobs) and not seen[key_of(ph.phase, cand.knobs)] then
          b:add(ph.u, cand)
          ph.cands[#ph.cands + 1] = cand
          push(cand)
          new = true
        end
      end
    end
  end
  if new then
    io.stderr:write("attngen tune: compiling the combined candidates\n")
    b:compile()
  end
  local recorded, comments, best_note = {}, {}, {}
  for _, ph in ipairs(phases) do
    local res1 = ph.screen
    out:write("\n")
    print_table(out, string.format("%s (%s), screening: %d candidates, %d rounds in %.1f s, %d call(s) per sample; " ..
      "noise: the default's interquartile range is %.1f%% of its median", ph.u.label, shape_text(b, ph.u),
      #ph.screened, res1.info.rounds or 0, res1.info.seconds or 0, res1.info.reps or 1,
      noise(res1)), ph.screened, res1, ph.d, ph.phase)
    local verdict
    if #ph.confirm < 2 then
      verdict = string.format("no candidate was faster than the default plan: it stays")
      ph.gain = 1
    else
      local idx = {}
      for _, cand in ipairs(ph.confirm) do idx[#idx + 1] = cand.index end
      io.stderr:write(string.format("attngen tune: confirming %d %s candidates (%.0f s)\n", #idx, ph.u.label, per_phase / 2))
      local res2 = b:time(ph.u, idx, per_phase / 2)
      print_table(out, string.format("%s, confirmation: %d candidates, %d rounds in %.1f s; noise: %.1f%%", ph.u.label,
        #idx, res2.info.rounds or 0, res2.info.seconds or 0, noise(res2)), ph.confirm, res2, ph.d, ph.phase)
      local best
      for i = 2, #ph.confirm do
        local r = res2[ph.confirm[i].index]
        if r and r.status == "ok" and (not best or r.med < res2[best.index].med) then best = ph.confirm[i] end
      end
      -- within `tie` of the fastest, the plan that changes fewer knobs (a difference that small is noise here)
      local function changed(cand)
        local n = 0
        for _, k in ipairs(knob_names(ph.phase)) do if cand.knobs[k] ~= ph.d[k] then n = n + 1 end end
        return n
      end
      if best then
        local limit = res2[best.index].med * (1 + M.tie)
        for i = 2, #ph.confirm do
          local cand, r = ph.confirm[i], res2[ph.confirm[i].index]
          if r and r.status == "ok" and r.med <= limit and changed(cand) < changed(best) then best = cand end
        end
      end
      if best then
        local r, r0 = res2[best.index], res2[0]
        local gain, g1, g2, gmin = r0.med / r.med, r0.h1 / r.h1, r0.h2 / r.h2, r0.min / r.min
        ph.gain = gain
        if gain >= M.min_gain and g1 > 1 and g2 > 1 and gmin > 1 then
          ph.recorded = true
          recorded[ph.phase] = recorded[ph.phase] or {}
          if ph.u.dtype == "f32" then -- the block's own knobs (by_dtype, if any, kept)
            for _, k in ipairs(knob_names(ph.phase)) do recorded[ph.phase][k] = best.knobs[k] end
          else
            recorded[ph.phase].by_dtype = recorded[ph.phase].by_dtype or {}
            recorded[ph.phase].by_dtype[ph.u.dtype] = best.knobs
          end
          ph.winner = best
          verdict = string.format("%s is %.3fx the default plan (%.3fx, %.3fx in each half of the rounds, %.3fx by " ..
            "the minimum): recorded", label(ph.phase, best.knobs, ph.d), gain, g1, g2, gmin)
        else
          verdict = string.format("best %s is %.3fx the default (halves %.3fx, %.3fx, minimum %.3fx): below %.2fx or " ..
            "not consistent, the default plan stays", label(ph.phase, best.knobs, ph.d), gain, g1, g2, gmin, M.min_gain)
        end
      else
        verdict = "no confirmed candidate: the default plan stays"
        ph.gain = 1
      end
    end
    out:write(ph.u.label, ": ", verdict, "\n")
    best_note[#best_note + 1] = string.format("%s %s", ph.u.label, ph.recorded and
      string.format("%.2fx", ph.gain) or string.format("default kept (best candidate %.2fx)", ph.gain or 1))
  end
  -- the block: this machine, the date, the gains
  comments[1] = string.format("tuned on %s (%d CPUs), %s, attngen %s --tune (%d s); speed vs the default plan: %s",
    machine.cpu, machine.cpus, os.date("%Y-%m-%d"), version, os.time() - t_start, table.concat(best_note, ", "))
  local sizes = {}
  for _, ph in ipairs(phases) do sizes[#sizes + 1] = ph.u.label .. " " .. shape_text(b, ph.u) end
  comments[2] = "medians of the thread's CPU time in interleaved rounds, 1 thread: " .. table.concat(sizes, "; ")
  local tuned = {}
  for k, v in pairs(c.tuned or {}) do if k ~= isa then tuned[k] = v end end
  if next(recorded) then tuned[isa] = recorded end
  local text = read_file(path)
  if not text then fail("--write", "cannot read %s", path) end
  local new_text = M.splice(text, path, isa, comments, tuned)
  if args.write then
    local ok, err = write.all({ { path = path, text = new_text } })
    if not ok then fail("--write", "%s", err) end
    out:write(string.format("\nattngen tune: wrote the block into %s; regenerate its kernels (make generate)\n", path))
  else
    out:write("\nattngen tune: the block for ", path, " (--write puts it there):\n")
    local b0, e0
    local i = 0
    local lines = {}
    for line in new_text:gmatch("([^\n]*)\n") do
      i = i + 1
      lines[i] = line
      local s = line:match("^%s*(.-)%s*$")
      if s == M.BEGIN then b0 = i elseif s == M.END then e0 = i end
    end
    for j = b0, e0 do out:write(lines[j], "\n") end
  end
end

return M

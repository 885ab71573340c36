-- SPDX-License-Identifier: MIT
-- Step 6 of the pipeline: write every file or none. Each text goes to a temporary next to its target; only
-- when all temporaries are written are they renamed into place, and a rename that fails puts back what was
-- there before. Targets that are not regular files (a directory, say) are refused before anything is written.
local lfs = require("lfs")

local M = {}

-- Creates `dir` and its parents (like mkdir -p) without a shell, so a failure is one clear line.
function M.mkdir_p(dir)
  local path = dir:sub(1, 1) == "/" and "/" or ""
  for part in dir:gmatch("[^/]+") do
    path = path .. part
    local mode = lfs.attributes(path, "mode")
    if mode == nil then
      local ok, err = lfs.mkdir(path)
      if not ok and lfs.attributes(path, "mode") ~= "directory" then
        return nil, string.format("cannot create directory %s: %s", path, tostring(err))
      end
    elseif mode ~= "directory" then
      return nil, string.format("cannot create directory %s: %s is not a directory", dir, path)
    end
    path = path .. "/"
  end
  return true
end

-- Temporary names differ between concurrent runs (luajit does not seed math.random itself).
local seeded = false
local function suffix()
  if not seeded then
    math.randomseed(math.floor(os.time() + os.clock() * 1e6 + (tonumber(tostring({}):match("0x(%x+)") or "0", 16) or 0) % 1e6))
    seeded = true
  end
  return string.format(".attngen-%d", math.random(0, 0x7fffffff))
end

function M.all(files)
  for _, f in ipairs(files) do
    local mode = lfs.attributes(f.path, "mode")
    if mode and mode ~= "file" then return nil, string.format("cannot write %s: it is a %s", f.path, mode) end
  end
  local tag = suffix()
  local tmps, backups, placed = {}, {}, {}
  local function cleanup()
    for _, t in ipairs(tmps) do os.remove(t) end
  end
  for i, f in ipairs(files) do
    local tmp = f.path .. tag .. ".tmp"
    local h, err = io.open(tmp, "wb")
    if not h then cleanup() return nil, "cannot write " .. f.path .. ": " .. tostring(err) end
    local ok, werr = h:write(f.text)
    local cok, cerr = h:close()
    tmps[i] = tmp
    if not ok or not cok then cleanup() return nil, "cannot write " .. f.path .. ": " .. tostring(werr or cerr) end
  end
  -- commit: move each existing target aside, put the new file in place; undo everything on any failure
  local function rollback()
    for i = #placed, 1, -1 do os.remove(files[placed[i]].path) end
    for i, b in pairs(backups) do os.rename(b, files[i].path) end
    cleanup()
  end
  for i, f in ipairs(files) do
    if lfs.attributes(f.path, "mode") then
      local b = f.path .. tag .. ".old"
      local ok, err = os.rename(f.path, b)
      if not ok then rollback() return nil, "cannot replace " .. f.path .. ": " .. tostring(err) end
      backups[i] = b
    end
    local ok, err = os.rename(tmps[i], f.path)
    if not ok then rollback() return nil, "cannot write " .. f.path .. ": " .. tostring(err) end
    placed[#placed + 1] = i
  end
  for _, b in pairs(backups) do os.remove(b) end
  return true
end

return M

-- SPDX-License-Identifier: MIT
-- attngen --vendor: the runtime's files, to be written flat beside a model's generated files, so that a project
-- builds everything with a C99 compiler alone. The runtime is every .c and .h file of runtime/ and
-- generated/runtime/ in a source tree, or of share/attngen/runtime/ in an install (where make install puts both),
-- with the generated files rendered for the model (its generic kernels read only its storage types) in their place.
local lfs = require("lfs")

local M = {}

-- Where the runtime lies, relative to the generator's root (the source tree, or share/attngen).
local DIRS = { "runtime", "generated/runtime" }

-- name -> directory of every runtime file, and the names in order; or nil and why.
local function find(root)
  local from, names = {}, {}
  for _, d in ipairs(DIRS) do
    local dir = root .. "/" .. d
    if lfs.attributes(dir, "mode") == "directory" then
      for name in lfs.dir(dir) do
        if name:match("^[%w_-]+%.[ch]$") and lfs.attributes(dir .. "/" .. name, "mode") == "file" then
          if from[name] then return nil, string.format("the runtime has two %s (in %s and %s)", name, from[name], dir) end
          from[name], names[#names + 1] = dir, name
        end
      end
    end
  end
  if not from["attngen.h"] then return nil, "cannot find the runtime: no attngen.h in " .. root .. "/runtime" end
  table.sort(names)
  return from, names
end

-- The runtime's files as { path = outdir/name, text } after `model_files` (the model's), or nil and why.
-- `generated`: files rendered for this model (its generic kernels) that stand for the runtime's files of the same name.
function M.with_runtime(root, outdir, model_files, generated)
  local own = {}
  for _, f in ipairs(generated or {}) do own[f.path:match("[^/]*$")] = f.text end
  local from, names = find(root)
  if not from then return nil, names end
  local files = {}
  for _, f in ipairs(model_files) do
    local name = f.path:match("[^/]*$")
    if from[name] then
      return nil, string.format("--vendor: the model's %s has the name of a runtime file: rename the model", name)
    end
    files[#files + 1] = f
  end
  for _, name in ipairs(names) do
    if own[name] then
      files[#files + 1] = { path = outdir .. "/" .. name, text = own[name] }
    else
      local path = from[name] .. "/" .. name
      local h, err = io.open(path, "rb")
      if not h then return nil, "cannot read " .. tostring(err) end
      files[#files + 1] = { path = outdir .. "/" .. name, text = h:read("a") }
      h:close()
    end
  end
  return files
end

return M

-- SPDX-License-Identifier: MIT
-- Kernels shared among the tables of a config's kinds of layers (gen/enumerate.lua's tables): a kernel whose code
-- is the same in two kinds (the values that differ, such as the RoPE frequencies, are in each table's params) is
-- emitted once and listed by both tables. A kernel whose code differs from an earlier kind's kernel of the same name
-- (a kind without RoPE, say) takes the kind's name into its own (spec.kernel_name's variant).
local spec = require("spec")
local enumerate = require("enumerate")

local M = {}

-- text_of(k): the code of kernel k as rendered (gen/render.lua's kernel_text), the function named k.code.
function M.resolve(tables, text_of)
  if #tables < 2 then return end
  local seen = {} -- code name -> { [text] = the variant that emits it, or false for the plain name }
  for _, t in ipairs(tables) do
    for _, k in ipairs(t.kernels) do
      local text = text_of(k)
      local codes = seen[k.code] or {}
      seen[k.code] = codes
      local variant = codes[text]
      if variant == nil then
        variant = next(codes) ~= nil and t.kind -- the first code of a name keeps the plain name
        codes[text] = variant
      end
      if variant then
        k.variant = variant
        k.name = spec.kernel_name(k)
        enumerate.reads_as(k)
      end
    end
  end
end

return M

-- SPDX-License-Identifier: MIT
-- Step 3 of the pipeline: the kernels a validated config asks for, one per (ISA, phase, mask), each with its
-- key (the specialized parameters) and its name. Generic kernels have D, G and features nil: "read at run time".
-- `rope` is the config's rope table (nil: the model has no RoPE); generic kernels read it at run time.
-- `tuned` is the config's tuned.<isa>.<phase> (gen/plan.lua uses it instead of the vocabulary's blocking).
local spec = require("spec")

local M = {}

function M.model(c)
  local kernels = {}
  for _, isa in ipairs(c.isas) do
    for _, phase in ipairs(c.phases) do
      for _, mask in ipairs(c.masks) do
        local k = { isa = isa, phase = phase, mask = mask, heads = c.heads, kv_heads = c.kv_heads,
                    D = c.head_dim, G = math.floor(c.heads / c.kv_heads),
                    features = spec.features_of(mask), options = c.options, rope = c.rope, kv_dtype = "f32",
                    tuned = c.tuned and c.tuned[isa] and c.tuned[isa][phase] } -- the config's plan knobs, if any
        k.name = spec.kernel_name(k)
        kernels[#kernels + 1] = k
      end
    end
  end
  return kernels
end

-- One generic kernel per (ISA, phase) of the spec: head_dim, group, mask features and options at run time.
function M.generic()
  local kernels = {}
  for _, isa in ipairs(spec.isas) do
    for _, phase in ipairs(spec.phases) do
      local k = { isa = isa.name, phase = phase.name, mask = "none", heads = 0, kv_heads = 0, kv_dtype = "f32" }
      k.name = spec.kernel_name(k)
      kernels[#kernels + 1] = k
    end
  end
  return kernels
end

return M

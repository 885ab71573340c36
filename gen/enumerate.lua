-- SPDX-License-Identifier: MIT
-- Step 3 of the pipeline: the kernels a validated config asks for, one per (ISA, phase, mask), each with its
-- key (the specialized parameters) and its name. Generic kernels have D, G and features nil: "read at run time".
-- `rope` is the config's rope table (nil: the model has no RoPE); generic kernels read it at run time.
-- `tuned` is the config's tuned.<isa>.<phase> (gen/plan.lua uses it instead of the vocabulary's blocking).
local spec = require("spec")

local M = {}

-- The tables a config produces, each { kind, table_name, list_macro, model, rope, options, attn, kernels }: one per
-- kind of layer (attngen_table_<cname>_<kind>, its own rope, options and attention features), or, for a config
-- without kinds, the model's one table (attngen_table_<cname>). Kernels of different kinds whose code is the same are shared (gen/share.lua).
function M.tables(c)
  local CNAME = c.cname:upper()
  if not c.kinds then
    return { { table_name = "attngen_table_" .. c.cname, list_macro = "ATTNGEN_" .. CNAME .. "_KERNELS", model = c.name,
               rope = c.rope, options = c.options, attn = c.attn, kernels = M.model(c),
               paged = #c.page_sizes > 0 } }
  end
  local out = {}
  for i, kind in ipairs(c.kinds) do
    local view = {} -- the config with the kind's values (a kind's rope may be nil where the top level's is not)
    for key, v in pairs(c) do view[key] = v end
    view.rope, view.options, view.attn = kind.rope, kind.options, kind.attn
    local ks = M.model(view)
    for _, k in ipairs(ks) do k.kind = kind.name end
    out[i] = { kind = kind.name, table_name = "attngen_table_" .. c.cname .. "_" .. kind.name,
               list_macro = "ATTNGEN_" .. CNAME .. "_" .. kind.name:upper() .. "_KERNELS",
               model = c.name .. "/" .. kind.name, rope = kind.rope, options = kind.options, attn = kind.attn,
               kernels = ks, paged = #c.page_sizes > 0 }
  end
  return out
end

function M.model(c)
  local kernels = {}
  local paged_table = #(c.page_sizes or {}) > 0 -- its table has paged kernels too (gen/plan.lua)
  for _, isa in ipairs(c.isas) do
    for _, phase in ipairs(c.phases) do
      for _, mask in ipairs(c.masks) do
        for _, dtype in ipairs(c.kv_dtypes) do
          local k = { isa = isa, phase = phase, mask = mask, heads = c.heads, kv_heads = c.kv_heads,
                      D = c.head_dim, G = math.floor(c.heads / c.kv_heads),
                      features = spec.features_of(mask), attn = c.attn, options = c.options, rope = c.rope, kv_dtype = dtype,
                      tuned = c.tuned and c.tuned[isa] and c.tuned[isa][phase], -- the config's plan knobs, if any
                      paged_table = paged_table }
          k.name = spec.kernel_name(k)
          M.reads_as(k)
          kernels[#kernels + 1] = k
          for _, ps in ipairs(c.page_sizes or {}) do -- the same kernel over a paged cache
            local pk = {}
            for key, v in pairs(k) do pk[key] = v end
            pk.page_size = ps
            pk.name = spec.kernel_name(pk)
            M.reads_as(pk)
            kernels[#kernels + 1] = pk
          end
        end
      end
    end
  end
  return kernels
end

-- A prefill kernel reads K/V from the runtime's repack, which converts any storage type to fp32 once per call
-- (every query tile then reads the rows many times): its code is the fp32 kernel's, listed under its own name.
-- k.code names the function that runs (the fp32 kernel's name for prefill), k.code_dtype the type it reads.
-- A paged prefill kernel reads the repack too, which gathers the pages: it runs the contiguous fp32 kernel's code.
function M.reads_as(k)
  if k.phase == "prefill" and (k.kv_dtype ~= "f32" or k.page_size) then
    local f32 = setmetatable({ kv_dtype = "f32", page_size = false }, { __index = k })
    k.code, k.code_dtype = spec.kernel_name(f32), "f32"
  else
    k.code, k.code_dtype = k.name, k.kv_dtype
  end
end

-- The storage types a build's generic kernels read: `dtypes` (names; nil: every type of the spec), with f32 always,
-- whose prefill code every type's prefill runs (M.reads_as) and which a cache has when it names no type. Spec order.
function M.generic_dtypes(dtypes)
  local want = { f32 = true }
  for _, t in ipairs(dtypes or spec.names(spec.kv_dtypes)) do want[t] = true end
  local out = {}
  for _, dtype in ipairs(spec.kv_dtypes) do
    if want[dtype.name] then out[#out + 1] = dtype.name end
  end
  return out
end

-- One generic kernel per (ISA, phase, storage type): head_dim, group, mask features and options at run time.
-- `dtypes`: the storage types (M.generic_dtypes). Prefill kernels of every type share the fp32 code (M.reads_as).
function M.generic(dtypes)
  local kernels = {}
  for _, isa in ipairs(spec.isas) do
    for _, phase in ipairs(spec.phases) do
      for _, dtype in ipairs(dtypes) do
        local k = { isa = isa.name, phase = phase.name, mask = "none", heads = 0, kv_heads = 0, kv_dtype = dtype }
        k.name = spec.kernel_name(k)
        M.reads_as(k)
        kernels[#kernels + 1] = k
      end
    end
  end
  return kernels
end

return M

-- SPDX-License-Identifier: MIT
-- The cache's storage type as templates use it: for one (ISA vocabulary, storage type, head_dim) the C element type,
-- the attngen_args fields a decode kernel reads, and the two words that turn stored elements into fp32: `load` (a
-- vector, by the ISA's kv_load word for the type) and `elem` (one element, by the portable conversion of
-- runtime/attngen_convert.h, for the head_dim tails). int8 types with a scale per group of columns multiply by it as
-- they load; with one scale per row (`row_scale`) the vector load is the bare integers and the microkernels apply the
-- scale once per dot product (Q·Kᵀ) or per coefficient (P·V), a multiply per key rather than per vector. The
-- algorithm never names a type.
local spec = require("spec")
local E = require("cexpr")
local errors = require("errors")

local M = {}

-- The portable conversion of one stored element (an rvalue of the element type) to float: an encoding's
-- attngen_<field>_bits_to_float (runtime/attngen_convert.h); fp32 elements are floats.
local function to_float(field, x)
  if field == "f32" then return x end
  return "attngen_" .. field .. "_bits_to_float(" .. x .. ")"
end

-- isa: a vocabulary (gen/plan.lua's plan.isa); dtype: a spec.kv_dtypes name (nil: f32); D: head_dim (nil: generic,
-- the C variable d).
function M.words(isa, dtype, D)
  local t = spec.kv_dtype[dtype or "f32"]
  local field = t.field or "f32"
  local w = { name = t.name, ctype = t.ctype, bytes = t.bytes, f32 = t.name == "f32", scaled = t.group ~= nil }
  -- the cache's K and V fields of attngen_args as pointers to `ctype` (the 16-bit struct types as their bits)
  local cast = w.f32 and "" or ("(const " .. t.ctype .. " *)")
  w.k_ptr = cast .. "a->" .. (t.field and ("k_" .. t.field) or "k")
  w.v_ptr = cast .. "a->" .. (t.field and ("v_" .. t.field) or "v")
  -- elements per scale: a constant, or head_dim at run time for a per-row scale in a generic kernel
  if w.scaled then w.group = spec.kv_group(t.name, D) or "d" end
  w.row_scale = w.scaled and (w.group == D or w.group == "d")
  local vload = isa.kv_load and isa.kv_load[field]
  if not vload then
    errors.raise("spec: gen/isa/%s.lua has no kv_load word for storage type '%s'", isa.name, t.name)
  end
  -- the scale of column c (a number or a C expression) of the row whose scales start at `sp`
  local function scale_at(sp, c)
    local g = w.group
    if type(c) == "number" and type(g) == "number" then return string.format("%s[%d]", sp, math.floor(c / g)) end
    if w.row_scale then return sp .. "[0]" end -- one scale per row: every column's
    return string.format("%s[(%s) / %s]", sp, E.I(c), E.I(g))
  end
  -- a vector of W floats from row pointer `p` at column `c` (scales of that row at `sp`); with one scale per row,
  -- before it (the caller applies `row_scale_of`)
  function w.load(p, c, sp)
    local v = vload(E.add(p, c))
    if w.scaled and not w.row_scale then v = isa.mul(v, isa.set1(scale_at(sp, c))) end
    return v
  end
  -- the scale of the row whose scales start at `sp`, when one scale serves the whole row
  function w.row_scale_of(sp) return scale_at(sp, 0) end
  -- one float, scaled: element `i` (a C expression) of row pointer `p`, column `c` (for the scale); with one scale
  -- per row and no `sp`, the bare value (the caller applied the row's scale to the other factor)
  function w.elem(p, i, c, sp)
    local x = to_float(field, string.format("%s[%s]", p, E.I(i)))
    assert(sp or not w.scaled or w.row_scale, "a scale per group needs the row's scales")
    if w.scaled and sp then x = string.format("%s * %s", x, scale_at(sp, c)) end
    return x
  end
  return w
end

-- The function attribute of code on `isa` that reads `dtype` (e.g. AVX2 + F16C for f16), "" when none.
function M.attr(isa, dtype)
  local a = (isa.attr_kv and isa.attr_kv[dtype or "f32"]) or isa.attr
  return a and (a .. " ") or ""
end

-- The generated-code suffix of a microkernel that reads the type ("" for fp32, whose names are unchanged).
function M.suffix(dtype)
  if not dtype or dtype == "f32" then return "" end
  return "_" .. dtype
end

return M

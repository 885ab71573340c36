-- SPDX-License-Identifier: MIT
-- Tiny helpers that print C expressions from Lua values, folding constants so unrolled code reads
-- "qt + 3 * qs + 16" rather than "qt + (3) * (qs) + (0 + 16)". Numbers always print as integers, so
-- lua5.4 (integer/float subtypes) and luajit (doubles) give byte-identical output.
local M = {}

function M.I(n)
  if type(n) == "number" then return string.format("%d", n) end
  return tostring(n)
end

-- product of two terms (numbers or C expressions)
function M.mul(a, b)
  if type(a) == "number" and type(b) == "number" then return a * b end
  if a == 0 or b == 0 then return 0 end
  if a == 1 then return b end
  if b == 1 then return a end
  local function wrap(x)
    x = M.I(x)
    if x:find("[ +%-]") then return "(" .. x .. ")" end
    return x
  end
  return wrap(a) .. " * " .. wrap(b)
end

-- sum of terms: C expressions in order, then one folded constant; 0 terms are dropped
function M.add(...)
  local parts, const = {}, 0
  for i = 1, select("#", ...) do
    local t = select(i, ...)
    if type(t) == "number" then const = const + t else parts[#parts + 1] = t end
  end
  if #parts == 0 then return const end
  if const ~= 0 then parts[#parts + 1] = M.I(const) end
  return table.concat(parts, " + ")
end

-- The plan's arithmetic works on numbers (specialized kernels: the result is a constant) or on C names
-- (generic kernels: the result is the C expression that computes it at run time), so every work-cut formula
-- is written once, in gen/plan.lua.
local function wrap(x)
  x = M.I(x)
  if x:find("[ +%-*/?]") then return "(" .. x .. ")" end
  return x
end

-- integer quotient (both operands non-negative)
function M.div(a, b)
  if type(a) == "number" and type(b) == "number" then return math.floor(a / b) end
  return wrap(a) .. " / " .. wrap(b)
end

-- x rounded up to a multiple of m
function M.round_up(x, m)
  if type(x) == "number" and type(m) == "number" then return math.floor((x + m - 1) / m) * m end
  return "attngen_round_up(" .. M.I(x) .. ", " .. M.I(m) .. ")"
end

-- a >= b ? x : y
function M.ge(a, b, x, y)
  if type(a) == "number" and type(b) == "number" then
    if a >= b then return x else return y end
  end
  return "(" .. wrap(a) .. " >= " .. wrap(b) .. " ? " .. M.I(x) .. " : " .. M.I(y) .. ")"
end

return M

-- SPDX-License-Identifier: MIT
-- Portable C vocabulary: a "vector" is one float. Plain C99 + libm; the compiler may vectorize it.
return {
  width = 1,
  vtype = "float",
  attr = nil,
  -- no SIMD registers to block for: head_dim runs in loops with constant bounds (compact, and the compiler
  -- may vectorize them), not fully unrolled
  unroll_head_dim = false,
  prefill = { rv = 4, kb = 4, rows = 64, keys = 64, v_tile_bytes = 32768, pr = 4, pvv = 4 },
  -- split-KV for decode with fewer than `below_batch` sequences: up to `max` KV chunks of >= min_keys keys,
  -- aligned to `align`, so both threads share one sequence's stream (the cut never depends on the thread count)
  decode = { split = { max = 8, min_keys = 512, align = 256, below_batch = 8 },
    keys = 64,
    by_group = { { min_g = 4, rb = 4, kb = 4, pr = 4, pvv = 4 },
                 { min_g = 1, rb = 1, kb = 8, pr = 1, pvv = 8 } },
    generic = { rb = 2, kb = 4, pr = 2, pvv = 4 } },
  zero = function() return "0.0f" end,
  set1 = function(x) return "(" .. x .. ")" end,
  load = function(p) return "(*(" .. p .. "))" end,
  store = function(p, v) return "*(" .. p .. ") = " .. v .. ";" end,
  bcast = function(p) return "(*(" .. p .. "))" end,
  fma = function(acc, a, b) return acc .. " + " .. a .. " * " .. b end,
  mul = function(a, b) return "(" .. a .. " * " .. b .. ")" end,
  add = function(a, b) return "(" .. a .. " + " .. b .. ")" end,
  sub = function(a, b) return "(" .. a .. " - " .. b .. ")" end,
  max = function(a, b) return "attngen_maxf(" .. a .. ", " .. b .. ")" end,
  hsum = function(v) return v end,
  hmax = function(v) return v end,
  hsum4_store = function(p, a, b, c, d)
    return string.format("(%s)[0] = %s; (%s)[1] = %s; (%s)[2] = %s; (%s)[3] = %s;", p, a, p, b, p, c, p, d)
  end,
  mask_lanes = function(v, j0, lim) return "(" .. j0 .. " < " .. lim .. " ? " .. v .. " : -INFINITY)" end,
  exp = function(x) return "attngen_exp_scalar(" .. x .. ")" end,
  tanh = function(x) return "attngen_tanh_scalar(" .. x .. ")" end,
  mask_keys = function(v, j, lim) return "((float)(" .. j .. ") < " .. lim .. " ? " .. v .. " : -INFINITY)" end,
  select_zero_if_neginf = function(v) return "(" .. v .. " == -INFINITY ? 0.0f : " .. v .. ")" end,
  -- the cache's storage types (gen/kvtype.lua): an encoding's portable conversion, attngen_<field>_bits_to_float
  -- (runtime/attngen_convert.h), so a new encoding needs no word here
  kv_load = setmetatable({
    f32 = function(p) return "(*(" .. p .. "))" end,
  }, { __index = function(_, field)
    return function(p) return "attngen_" .. field .. "_bits_to_float(*(" .. p .. "))" end
  end }),
}

-- SPDX-License-Identifier: MIT
-- RoPE inverse frequencies of a validated rope table (gen/config.lua): theta^(-2i / rotary_dim) for the
-- rotary_dim / 2 pairs, then the config's scaling (gen/spec.lua's spec.rope.scalings names them). Float64, computed
-- once by the generator and emitted as data; lua5.4 and luajit give the same bits.
local errors = require("errors")

local M = {}

-- Per scaling type: the unscaled inverse frequencies (a list of float64) to the scaled ones.
local scale = {
  -- position interpolation: every inverse frequency divided by factor
  linear = function(inv, s)
    local out = {}
    for i, f in ipairs(inv) do out[i] = f / s.factor end
    return out
  end,
  -- transformers' _compute_llama3_parameters, in float64
  llama3 = function(inv, s)
    local old = s.original_max_position_embeddings
    local low_wavelen, high_wavelen = old / s.low_freq_factor, old / s.high_freq_factor
    local out = {}
    for i, f in ipairs(inv) do
      local wavelen = 2 * math.pi / f
      if wavelen < high_wavelen then
        out[i] = f
      elseif wavelen > low_wavelen then
        out[i] = f / s.factor
      else
        local smooth = (old / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor)
        out[i] = (1 - smooth) * f / s.factor + smooth * f
      end
    end
    return out
  end,
}

-- r: { theta, rotary_dim, scaling = nil | { type, <params> } }. Returns the rotary_dim / 2 inverse frequencies.
function M.inverse(r)
  local inv = {}
  for i = 0, r.rotary_dim / 2 - 1 do inv[i + 1] = 1 / r.theta ^ (2 * i / r.rotary_dim) end
  if r.scaling then
    local apply = scale[r.scaling.type]
    if not apply then
      errors.raise("spec: rope scaling '%s' has no formula in gen/rope_frequencies.lua", tostring(r.scaling.type))
    end
    inv = apply(inv, r.scaling)
  end
  return inv
end

return M

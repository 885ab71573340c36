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
  -- transformers' _compute_yarn_parameters, in float64 (it computes the frequencies in float32): between the dims
  -- low and high that turn beta_fast and beta_slow times over the original context, a linear ramp from the kept
  -- frequency to the one divided by factor
  yarn = function(inv, s, r)
    local dim, base, old = r.rotary_dim, r.theta, s.original_max_position_embeddings
    local function correction_dim(rotations) return dim * math.log(old / (rotations * 2 * math.pi)) / (2 * math.log(base)) end
    local low, high = correction_dim(s.beta_fast), correction_dim(s.beta_slow)
    if s.truncate then low, high = math.floor(low), math.ceil(high) end
    low, high = math.max(low, 0), math.min(high, dim - 1)
    if low == high then high = high + 0.001 end -- transformers' guard against a zero-width ramp
    local out = {}
    for i, f in ipairs(inv) do
      local ramp = math.min(math.max((i - 1 - low) / (high - low), 0), 1)
      local extrapolation = 1 - ramp
      out[i] = f / s.factor * (1 - extrapolation) + f * extrapolation
    end
    return out
  end,
}

-- YaRN's mscale: 1 up to factor 1, then 0.1 * m * ln(factor) + 1.
local function yarn_mscale(factor, m)
  if factor <= 1 then return 1 end
  return 0.1 * m * math.log(factor) + 1
end

-- r: { theta, rotary_dim, scaling = nil | { type, <params> } }. Returns the rotary_dim / 2 inverse frequencies.
function M.inverse(r)
  local inv = {}
  for i = 0, r.rotary_dim / 2 - 1 do inv[i + 1] = 1 / r.theta ^ (2 * i / r.rotary_dim) end
  if r.scaling then
    local apply = scale[r.scaling.type]
    if not apply then
      errors.raise("spec: rope scaling '%s' has no formula in gen/rope_frequencies.lua", tostring(r.scaling.type))
    end
    inv = apply(inv, r.scaling, r)
  end
  return inv
end

-- The factor of every cos and sin (so of rotated q and k alike): YaRN's attention factor as transformers returns it
-- (the config's attention_factor, else mscale(factor, mscale) / mscale(factor, mscale_all_dim) when both are
-- given, else mscale(factor, 1)); 1 for every other scaling.
function M.cs_scale(r)
  local s = r.scaling
  if not s or s.type ~= "yarn" then return 1 end
  if s.attention_factor then return s.attention_factor end
  if s.mscale and s.mscale_all_dim then
    return yarn_mscale(s.factor, s.mscale) / yarn_mscale(s.factor, s.mscale_all_dim)
  end
  return yarn_mscale(s.factor, 1)
end

return M

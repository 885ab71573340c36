-- SPDX-License-Identifier: MIT
-- AdvSIMD vocabulary (aarch64): always present on aarch64, so no runtime check beyond the architecture.
return {
  width = 4,
  vtype = "float32x4_t",
  attr = nil,
  registers = 32, -- v0..v31: the register budget of a tuned blocking (gen/register_budget.lua)
  -- unroll = 1: Q·Kᵀ rolls over head_dim one step per iteration; fully unrolled, gcc spilled ~1,500 times per
  -- call (llvm-mca, make bench-neon-model: 55-64% of the FMA bound unrolled, ~99% rolled)
  -- P·V 8 rows x 8 columns per panel (gen/plan.lua): llvm-mca 93-94% of the FMA bound on N1/V1/V2; gcc spilled
  -- 4-6 accumulators of an 8x12 or 6x16 panel (73-85%)
  prefill = { rv = 4, kb = 5, rows = 96, keys = 64, v_tile_bytes = 32768, pr = 8, pvv = 2, unroll = 1 }, -- 20 + 16 of 32 q registers
  -- split-KV for decode with fewer than `below_batch` sequences: up to `max` KV chunks of >= min_keys keys,
  -- aligned to `align`, so both threads share one sequence's stream (the cut never depends on the thread count)
  decode = { split = { max = 8, min_keys = 512, align = 256, below_batch = 8 },
    keys = 64,
    -- columns: the softmax down S's columns, a lane per row (see gen/isa/avx2.lua)
    by_group = { { min_g = 4, rb = 4, kb = 4, pr = 4, pvv = 4, columns = true },   -- 16 + 16 q accumulators
                 { min_g = 2, rb = 2, kb = 8, pr = 2, pvv = 8 },  -- 16 accumulators: V1 needs 16 in flight
                 { min_g = 1, rb = 1, kb = 12, pr = 1, pvv = 12 } },
    generic = { rb = 2, kb = 4, pr = 2, pvv = 6 } },
  zero = function() return "vdupq_n_f32(0.0f)" end,
  set1 = function(x) return "vdupq_n_f32(" .. x .. ")" end,
  load = function(p) return "vld1q_f32(" .. p .. ")" end,
  store = function(p, v) return "vst1q_f32(" .. p .. ", " .. v .. ");" end,
  bcast = function(p) return "vld1q_dup_f32(" .. p .. ")" end,
  fma = function(acc, a, b) return "vfmaq_f32(" .. acc .. ", " .. a .. ", " .. b .. ")" end,
  mul = function(a, b) return "vmulq_f32(" .. a .. ", " .. b .. ")" end,
  add = function(a, b) return "vaddq_f32(" .. a .. ", " .. b .. ")" end,
  sub = function(a, b) return "vsubq_f32(" .. a .. ", " .. b .. ")" end,
  max = function(a, b) return "vmaxq_f32(" .. a .. ", " .. b .. ")" end,
  hsum = function(v) return "vaddvq_f32(" .. v .. ")" end,
  hmax = function(v) return "vmaxvq_f32(" .. v .. ")" end,
  hsum4_store = function(p, a, b, c, d)
    return string.format("vst1q_f32(%s, vpaddq_f32(vpaddq_f32(%s, %s), vpaddq_f32(%s, %s)));", p, a, b, c, d)
  end,
  -- dst[c * ds + i] = src[i][k0 + c] * s for i, c < 4: four rows of Q into the transposed tile at once
  transpose_scaled = function(src, k0, s, dst, ds)
    return string.format("attngen_transpose_scaled_neon(%s, %s, %s, %s, %s);", src, k0, s, dst, ds)
  end,
  mask_lanes = function(v, j0, lim) return "attngen_mask_lanes_neon(" .. v .. ", " .. j0 .. ", " .. lim .. ")" end,
  exp = function(x) return "attngen_exp_neon(" .. x .. ")" end,
  tanh = function(x) return "attngen_tanh_neon(" .. x .. ")" end,
  mask_keys = function(v, j, lim) return "attngen_mask_neon(" .. v .. ", " .. j .. ", " .. lim .. ")" end,
  select_zero_if_neginf = function(v) return "attngen_finite_or_zero_neon(" .. v .. ")" end,
  -- the cache's storage types (gen/kvtype.lua): 4 stored elements at p as 4 floats, exact (int8 before its scale)
  kv_load = {
    f32 = function(p) return "vld1q_f32(" .. p .. ")" end,
    f16 = function(p) return "vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(" .. p .. ")))" end,
    bf16 = function(p) return "vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(" .. p .. "), 16))" end,
    i8 = function(p) return "attngen_i8_load_neon(" .. p .. ")" end,
  },
}

-- The plan: how a kernel cuts its work, chosen per (ISA, phase, head_dim, group). This is where
-- specialization pays: blocking follows the ISA's register file, unrolling follows head_dim, and the
-- tile row stride becomes a compile-time constant once the group size is known.
local plan = {}

local function gcd(a, b) while b ~= 0 do a, b = b, a % b end return a end
local function lcm(a, b) return math.floor(a / gcd(a, b)) * b end
local function round_up(x, m) return math.floor((x + m - 1) / m) * m end

-- Largest head_dim whose Q·Kᵀ microkernel is fully unrolled; beyond it the body is unrolled in chunks
-- of this many so the code stays within the instruction cache.
plan.max_full_unroll = 256
plan.decode_max_q = 8 -- ATTNGEN_DECODE_MAX_Q

-- G = heads / kv_heads and D = head_dim (nil for generic kernels, which read them at run time).
function plan.for_kernel(isa, phase, D, G)
  local blk = isa[phase]
  local W = isa.width
  if phase == "decode" then
    -- a decode step has G query rows per kv head (x q_len): pick the blocking made for that many rows
    local choice = blk.generic
    if G then
      for _, b in ipairs(blk.by_group) do
        if G >= b.min_g then choice = b break end
      end
    end
    blk = { keys = blk.keys, rb = choice.rb, kb = choice.kb, pr = choice.pr, pvv = choice.pvv }
  end
  local p = {
    phase = phase,
    kb = blk.kb,                              -- keys per Q·Kᵀ block
    pr = blk.pr, pvv = blk.pvv,               -- P·V block: pr rows x pvv vectors of head_dim
    keys = blk.keys,                          -- keys per KV tile
  }
  if phase == "prefill" then
    -- Q·Kᵀ as a GEMM: query rows (x group) along the lanes, rv row vectors x kb keys of accumulators
    p.rv, p.rows = blk.rv, blk.rows           -- rows: target (query x group) rows per work item
    if D and blk.v_tile_bytes then
      -- keys per tile from head_dim: the packed V tile (keys x head_dim floats) should stay in L1 while
      -- every row block streams through it; more keys per tile amortize the softmax bookkeeping
      local keys = math.floor(blk.v_tile_bytes / (4 * D) / 16) * 16
      p.keys = math.max(32, math.min(128, keys))
    end
    p.keys_padded = round_up(p.keys, p.kb)
    p.row_align = lcm(lcm(p.rv * W, p.pr), 4)
    p.unroll = (D and D <= plan.max_full_unroll) and D or 64
  else
    -- few query rows: dot products along head_dim, rb rows x kb keys at a time; keys along the lanes
    -- in the softmax; one work item covers every kv head so K/V rows are read page after page
    p.rb = blk.rb
    p.keys_padded = round_up(p.keys, lcm(p.kb, W))
    p.row_align = lcm(lcm(p.rb, p.pr), 4)
  end
  if G and phase == "prefill" then
    -- rows of the largest item, padded: the tiles' row stride, a constant in the microkernels. (Decode's
    -- microkernels do not use it; there it follows the step's q_len to keep the per-head state small.)
    p.mp = round_up(G * (G >= p.rows and 1 or math.floor(p.rows / G)), p.row_align)
  end
  if phase == "prefill" then
    p.describe = string.format("about %d (query x group) rows per item, Q·Kᵀ %dx%d register blocks, " ..
      "P·V %dx%d, %d keys per tile%s", p.rows, p.rv * W, p.kb, p.pr, p.pvv * W, p.keys,
      D and (D <= plan.max_full_unroll and ", fully unrolled over head_dim"
             or string.format(", head_dim unrolled by %d", p.unroll)) or ", head_dim at run time")
  else
    p.describe = string.format("every kv head and all queries of a step per item, Q·Kᵀ as %dx%d dot products, " ..
      "P·V %dx%d, %d keys per tile%s", p.rb, p.kb, p.pr, p.pvv * W, p.keys,
      D and ", fully unrolled over head_dim" or ", head_dim at run time")
  end
  return p
end

-- Microkernels are shared by all kernels of a file with the same (ISA, head_dim, blocking, strides).
function plan.microkernel(isa, p, D)
  local W = isa.width
  local dim = D and string.format("d%d", D) or "dany"
  local mk = { D = D, kb = p.kb, pr = p.pr, pvv = p.pvv }
  if D then mk.dp = round_up(D, W) end
  if p.phase == "prefill" then
    local stride = p.mp and string.format("_s%d", p.mp) or ""
    mk.template = "qk_microkernel.c.tpl"
    mk.rv, mk.unroll, mk.qs = p.rv, p.unroll, p.mp
    mk.p_key_stride, mk.p_row_stride = p.mp, 1 -- P transposed: P[r][j] at j * mp + r
    mk.qk_name = string.format("attngen_qk_%s_%dx%d%s__%s", dim, p.rv * W, p.kb, stride, isa.name)
    mk.pv_name = string.format("attngen_pv_%s_%dx%d%s__%s", dim, p.pr, p.pvv * W, stride, isa.name)
  else
    mk.template = "qkdot_microkernel.c.tpl"
    mk.rb, mk.ss = p.rb, p.keys_padded
    mk.p_key_stride, mk.p_row_stride = 1, p.keys_padded -- P row-major: P[r][j] at r * keys + j
    mk.qk_name = string.format("attngen_qkdot_%s_%dx%d_s%d__%s", dim, p.rb, p.kb, p.keys_padded, isa.name)
    mk.pv_name = string.format("attngen_pv_%s_%dx%d_p%d__%s", dim, p.pr, p.pvv * W, p.keys_padded, isa.name)
  end
  return mk
end

return plan

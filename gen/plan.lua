-- The plan: how a kernel cuts its work, chosen per (ISA, phase, head_dim). This is where specialization
-- pays: blocking follows the ISA's register file, unrolling follows head_dim.
local plan = {}

local function gcd(a, b) while b ~= 0 do a, b = b, a % b end return a end
local function lcm(a, b) return math.floor(a / gcd(a, b)) * b end
local function round_up(x, m) return math.floor((x + m - 1) / m) * m end

-- Largest head_dim whose Q·Kᵀ microkernel is fully unrolled; beyond it the body is unrolled in chunks
-- of this many so the code stays within the instruction cache.
plan.max_full_unroll = 256

function plan.for_kernel(isa, phase, D)
  local blk = isa[phase]
  local p = {
    rv = blk.rv, kb = blk.kb,                 -- Q·Kᵀ block: rv row vectors x kb keys
    pr = blk.pr or isa.pv_rows,               -- P·V block: pr rows x pvv vectors of head_dim
    pvv = blk.pvv or isa.pv_vectors,
    keys = blk.keys,                          -- keys per KV tile
    rows = blk.rows or 1,                     -- prefill: target query rows (x group) per item
  }
  p.keys_padded = round_up(p.keys, p.kb)
  p.row_align = lcm(p.rv * isa.width, p.pr)
  p.unroll = (D and D <= plan.max_full_unroll) and D or 64
  p.describe = string.format("%s, Q·Kᵀ %dx%d register blocks, P·V %dx%d, %d keys per tile%s",
    phase == "decode" and "all queries of a step and the whole group per item" or
      string.format("about %d (query x group) rows per item", p.rows),
    p.rv * isa.width, p.kb, p.pr, p.pvv * isa.width, p.keys,
    D and (D <= plan.max_full_unroll and ", fully unrolled over head_dim"
           or string.format(", head_dim unrolled by %d", p.unroll)) or ", head_dim at run time")
  return p
end

-- Microkernels are shared by all kernels of a file with the same (ISA, head_dim, blocking).
function plan.microkernel(isa, p, D)
  local dim = D and string.format("d%d", D) or "dany"
  local mk = { D = D, rv = p.rv, kb = p.kb, pr = p.pr, pvv = p.pvv, unroll = p.unroll }
  mk.qk_name = string.format("attngen_qk_%s_%dx%d__%s", dim, p.rv * isa.width, p.kb, isa.name)
  mk.pv_name = string.format("attngen_pv_%s_%dx%d__%s", dim, p.pr, p.pvv * isa.width, isa.name)
  return mk
end

return plan

-- SPDX-License-Identifier: MIT
-- Step 4 of the pipeline: the plan. For one enumerated kernel it chooses how the work is cut (query rows
-- per item, keys per tile, split-KV policy, scratch layout) and the register blocking and unrolling of its
-- microkernels, per (ISA, phase, head_dim, group), and when a decode step is cut by kv heads among threads. It
-- owns every work-cut number: the kernel info carries them
-- as data (attngen_work), the runtime and the generated code read them; no formula exists anywhere else.
-- Specialized kernels get numbers; generic kernels (head_dim "d" and group "g" known at run time) get the C
-- expressions of the same formulas, emitted into their work function.
local spec = require("spec")
local E = require("cexpr")
local errors = require("errors")

local plan = {}

local function gcd(a, b) while b ~= 0 do a, b = b, a % b end return a end
local function lcm(a, b) return math.floor(a / gcd(a, b)) * b end
local round_up = E.round_up

-- Head split of a decode step (attngen_work.head_split_min_*): with fewer items than threads, the runtime cuts its
-- kv heads among the threads only when each part reads at least min_bytes of K/V or does min_flop flops (~100 us
-- of work): a pool thread that has gone to sleep takes tens of us to wake on a busy VM. 2 threads vs the single
-- item, calls back to back / 300 us apart / 1 ms apart: Llama-3-8B at kv_len 512 (parts of 2 MiB and 4.2 MFLOP)
-- 1.27-1.93x / 1.19x / 1.28-1.30x; GPT-2 at kv_len 768 (2.25 MiB, 1.2 MFLOP) 1.36-1.76x / 0.87-0.92x /
-- 1.05-1.42x, so parts that small stay whole. A prefill item holds one kv head: nothing to cut (0, 0).
plan.head_split = {
  decode = { min_bytes = 4 * 1024 * 1024, min_flop = 4000000 },
  prefill = { min_bytes = 0, min_flop = 0 },
}

-- Largest head_dim whose Q·Kᵀ microkernel is fully unrolled; beyond it the body is unrolled in chunks of this
-- many so the code stays within the instruction cache.
plan.max_full_unroll = 256

-- The vocabulary of an ISA named in the spec (gen/isa/<name>.lua). A spec entry without one is a one-line error.
local vocab_cache = {}
function plan.isa(name)
  if vocab_cache[name] then return vocab_cache[name] end
  local ok, v = pcall(require, "isa." .. name)
  if not ok or type(v) ~= "table" then
    errors.raise("spec: isa '%s' has no vocabulary (gen/isa/%s.lua): %s", name, name, (tostring(v):match("^[^\n]*")))
  end
  -- every word the templates use (hsum4_store, hsum16_store, pin and transpose_scaled are optional: hsum serves
  -- without the first two, nothing is pinned without the third, Q is packed element by element without the fourth)
  for _, field in ipairs({ "width", "vtype", "prefill", "decode", "zero", "set1", "load", "store", "bcast", "fma", "mul",
                           "add", "sub", "max", "hsum", "hmax", "mask_lanes", "exp", "tanh", "mask_keys",
                           "select_zero_if_neginf" }) do
    if v[field] == nil then
      errors.raise("spec: gen/isa/%s.lua lacks '%s'", name, field)
    end
  end
  -- a kv_load word for every storage type of the spec
  for _, t in ipairs(spec.kv_dtypes) do
    if not (type(v.kv_load) == "table" and v.kv_load[t.field or "f32"]) then
      errors.raise("spec: gen/isa/%s.lua has no kv_load word for storage type '%s' (kv_load.%s)", name, t.name,
        t.field or "f32")
    end
  end
  v.name = name
  v.spec = spec.isa[name]
  v.enum = "ATTNGEN_ISA_" .. name:upper()
  vocab_cache[name] = v
  return v
end

-- Scratch layout of one work item, in floats (all regions multiples of 16 floats: 64-byte aligned).
--   prefill (one kv head per item): S tile [keys_padded][mp], packed V tile [keys_padded][dp], 4 per-row arrays
--   [mp] (rescale, visible keys, key limit, spare), then the state: Q tile [mp][dp], O [mp][dp], max and sum [mp].
--   decode (every kv head per item): the heads' rows side by side, row R = head * rows + r, in ms = heads * mp
--   (padded) rows: S tile [keys_padded][ms] (softmax down the columns) or [ms][keys_padded], 5 per-row arrays
--   [ms] (max, sum, rescale, visible keys, key limit), then per kv head a state: Q tile [mp][dp], O [mp][dp].
--   Those are the largest item's sizes (q_len = max_q); a decode kernel places its heads' states by the rows
--   the item has (Q and O of rows_pv rows, head after head) and sets up only the per-row entries it uses.
-- Returns the offsets the kernel addresses and the total.
-- `bias_rows`: ALiBi kernels (and generic ones) add 2 per-row arrays after the others: each row's slope and position.
local function scratch_layout(mp, dp, keys_padded, heads, prefill, bias_rows)
  local q_floats = round_up(E.mul(mp, dp), 16)
  local n_rows = (prefill and 4 or 5) + (bias_rows and 2 or 0)
  if prefill then
    local s_floats = round_up(E.mul(keys_padded, mp), 16)
    local v_floats = round_up(E.mul(keys_padded, dp), 16)
    local rows0 = E.add(s_floats, v_floats)
    local state = E.add(E.mul(2, q_floats), round_up(E.mul(2, mp), 16))
    return {
      q_floats = q_floats, state_floats = state, ms = mp,
      vt_offset = s_floats, alpha_offset = rows0, lim_offset = E.add(rows0, mp), lim_abs_offset = E.add(rows0, E.mul(2, mp)),
      slope_offset = E.add(rows0, E.mul(4, mp)), qpos_offset = E.add(rows0, E.mul(5, mp)),
      state_offset = E.add(rows0, E.mul(n_rows, mp)),
      total = E.add(rows0, E.mul(n_rows, mp), state),
    }
  end
  local ms = round_up(E.mul(heads, mp), 16)
  local s_floats = E.mul(keys_padded, ms)
  local state = E.mul(2, q_floats)
  return {
    q_floats = q_floats, state_floats = state, ms = ms,
    m_offset = s_floats, l_offset = E.add(s_floats, ms), alpha_offset = E.add(s_floats, E.mul(2, ms)),
    lim_offset = E.add(s_floats, E.mul(3, ms)), lim_abs_offset = E.add(s_floats, E.mul(4, ms)),
    slope_offset = E.add(s_floats, E.mul(5, ms)), qpos_offset = E.add(s_floats, E.mul(6, ms)),
    state_offset = E.add(s_floats, E.mul(n_rows, ms)),
    total = E.add(s_floats, E.mul(n_rows, ms), E.mul(heads, state)),
  }
end

-- The blocking knobs of one phase (spec.tunables: rv/rb, kb, pr, pvv, rows, keys) for a kernel of head_dim D and
-- group G on `isa` (a vocabulary): the vocabulary's defaults for that shape, overlaid by `tuned` (the config's
-- validated `tuned.<isa>.<phase>`, specialized kernels only). D and G nil: a generic kernel (no tuning; `keys` then
-- stays the vocabulary's number). gen/config.lua checks register budgets on this, tools/tune/tune.lua starts from it.
-- kvh: kv heads (nil for generic kernels), for the decode tile's row-length rule.
-- A decode step has G query rows per kv head (x q_len): the vocabulary's entry made for that many rows (its
-- blocking, and whether the softmax runs down the columns), or its generic one (G nil).
function plan.decode_choice(isa, G)
  local blk = isa.decode
  if G then
    for _, c in ipairs(blk.by_group) do
      if G >= c.min_g then return c end
    end
  end
  return blk.generic
end

-- The group's entry may block a storage type otherwise: its by_dtype entry for `dtype` (keyed like kv_load: f32,
-- f16, bf16, i8), or nil.
local function by_dtype(choice, dtype)
  return choice.by_dtype and choice.by_dtype[spec.kv_dtype[dtype or "f32"].field or "f32"]
end

-- The config's tuned knobs (`tuned`: its tuned.<isa>.<phase>, gen/config.lua) that apply to kernels whose code reads
-- `dtype`: a decode block's own knobs were timed on an fp32 cache, its by_dtype.<type> on that type; prefill code
-- reads fp32 tiles whatever the cache holds. nil: the vocabulary's blocking.
function plan.tuned_for(tuned, phase, dtype)
  if not tuned or phase ~= "decode" or (dtype or "f32") == "f32" then return tuned end
  return tuned.by_dtype and tuned.by_dtype[dtype]
end

-- paged_table: the kernel's table has paged kernels, whose tiles its contiguous ones share (so that a paged cache
-- gives the contiguous cache's bits): a vocabulary's tiles for long rows or a type "where no table has pages"
-- (keys_long_rows_unpaged, by_dtype keys_unpaged) are not for it.
function plan.blocking(isa, phase, D, G, tuned, kvh, dtype, paged_table)
  local blk = isa[phase]
  local b = {}
  if phase == "decode" then
    local choice = plan.decode_choice(isa, G)
    b.rb, b.kb, b.pr, b.pvv, b.keys = choice.rb, choice.kb, choice.pr, choice.pvv, blk.keys
    local by = by_dtype(choice, dtype)
    if blk.keys_long_rows then
      -- a token's K row in elements of the cache's type
      local row_floats = blk.long_row_bytes / spec.kv_dtype[dtype or "f32"].bytes
      if D and kvh then
        -- a group's own count (a multiple of its kb, so no block repeats a key), else the vocabulary's
        if kvh * D >= row_floats then
          b.keys = (not paged_table and choice.keys_long_rows_unpaged) or blk.keys_long_rows
        end
      elseif not D then
        -- the generic kernel chooses at run time by the same rule (it was 32 keys for every shape: 1.1-1.7x
        -- slower beyond the cache for token rows of 2 KiB and more, alternating runs)
        b.keys = E.ge(E.mul("kvh", "d"), row_floats, blk.keys_long_rows, blk.keys)
      end
    end
    if by then
      for _, knob in ipairs(spec.tunables.decode) do
        if by[knob.name] then b[knob.name] = by[knob.name] end
      end
      if by.keys_unpaged and not paged_table then b.keys = by.keys_unpaged end
    end
  else
    b.rv, b.kb, b.pr, b.pvv, b.rows, b.keys = blk.rv, blk.kb, blk.pr, blk.pvv, blk.rows, blk.keys
    if D and blk.v_tile_bytes then
      -- keys per tile from head_dim: the packed V tile (keys x head_dim) should stay in L1 while every row
      -- block streams through it; more keys per tile amortize the softmax bookkeeping
      local keys = math.floor(blk.v_tile_bytes / (spec.kv_dtype.f32.bytes * D) / 16) * 16
      b.keys = math.max(32, math.min(128, keys))
    end
  end
  if D and G and tuned then
    for _, knob in ipairs(spec.tunables[phase]) do
      if tuned[knob.name] ~= nil then b[knob.name] = tuned[knob.name] end
    end
  end
  return b
end

-- k: an enumerated kernel (gen/enumerate.lua): isa, phase, D and G (nil for generic kernels), and `tuned` (the
-- config's tuned knobs for this ISA and phase, or nil).
function plan.for_kernel(k)
  local isa = plan.isa(k.isa)
  local W = isa.width
  local D, G = k.D, k.G
  local d, g = D or "d", G or "g"
  local blk = isa[k.phase]
  local p = { phase = k.phase, width = W }
  local dtype = k.code_dtype or k.kv_dtype or "f32" -- the storage type the code reads
  local tuned = D and G and plan.tuned_for(k.tuned, k.phase, dtype) or nil -- the generic kernels keep the vocabulary's plan
  local b = plan.blocking(isa, k.phase, D, G, tuned, D and k.kv_heads, dtype, k.paged_table)
  p.tuned = false -- whether the config's tuned knobs set any of this kernel's blocking
  for _, knob in ipairs(spec.tunables[k.phase]) do if tuned and tuned[knob.name] then p.tuned = true end end
  if k.phase == "decode" then
    p.kb, p.pr, p.pvv, p.rb, p.keys = b.kb, b.pr, b.pvv, b.rb, b.keys
    -- S's key stride, a constant: the tile's keys, or their largest value (the vocabulary's `keys`; keys_long_rows
    -- is the smaller count) when chosen at run time
    -- Keys per tile when every kv head's K and V rows are contiguous (k and v seq strides = head_dim: a head-major
    -- cache, or a single kv head), decided at run time: the kernel then reads each head's rows in address order,
    -- whole (row-wise Q·Kᵀ microkernels), head after head, so a tile can be long. One kv head's token-major
    -- cache is that layout too, and its `keys` (tuned or not) is what it had.
    p.keys_contig = (D and k.kv_heads == 1) and p.keys or blk.keys_contiguous or blk.keys
    -- and the Q·Kᵀ block there: the vocabulary's kb_contiguous and rb_contiguous for the group (and type), else kb, rb
    local choice = plan.decode_choice(isa, G)
    local by = by_dtype(choice, dtype) or {}
    p.kb_contig = by.kb_contiguous or choice.kb_contiguous or p.kb
    p.rb_contig = by.rb_contiguous or choice.rb_contiguous or p.rb
    -- softmax down the columns of a transposed S (the vocabulary's choice per group), over every kv head's rows
    -- side by side: the per-row arrays span ms rows (scratch_layout), padded there to whole vectors
    p.columns = choice.columns or false
    -- Q·Kᵀ with a kv head's rows in the vector lanes and K's elements broadcast (prefill's form), chosen at run time
    -- when the rows fill whole vectors, at least rows_in_lanes.min_rows (a step of several queries): the dot
    -- products' horizontal sums and Q reloads go away. fp32 K only (a typed K would convert each element alone),
    -- S transposed only (the form stores a key's rows side by side). Shared prefix of 8 sequences, h32/kv8/d128,
    -- kv_len 16384, Zen 4: see docs/performance.md.
    local lanes = blk.rows_in_lanes
    if D and lanes and dtype == "f32" and p.columns then
      -- panels of rv vectors of rows (rv x W rows a panel: the rows then fill whole panels) against kb keys, in
      -- tiles of `keys` keys when given (a multiple of kb, so no block repeats a key)
      local rv = lanes.rv or 1
      if lanes.keys and lanes.keys % lanes.kb ~= 0 then
        errors.raise("spec: gen/isa/%s.lua: rows_in_lanes.keys (%d) is not a multiple of its kb (%d)", isa.name,
          lanes.keys, lanes.kb)
      end
      -- (P·V in the same form: the panels' Oᵀ, pv_cols columns of V a block, the Q·Kᵀ block's keys when not given)
      local panel = rv * W
      p.lanes = { kb = lanes.kb, rv = rv, panel = panel, keys = lanes.keys, min_rows = math.max(lanes.min_rows, panel),
                  pv_cols = lanes.pv_cols or lanes.kb }
    end
    p.keys_padded = round_up(math.max(type(p.keys) == "number" and p.keys or blk.keys, p.keys_contig,
        p.lanes and p.lanes.keys or 0),
      lcm(lcm(lcm(p.kb, p.kb_contig), W), p.lanes and p.lanes.kb or 1))
    -- rows computed are padded to the blocking only (padding to 4 made MHA decode compute 4 rows for its 1)
    p.row_align = lcm(lcm(p.rb, p.rb_contig), p.pr)
    -- P·V on rows contiguous per head reads each V row whole, in address order: column blocks of at most
    -- contig_pv_vectors vectors (as few passes over the row as that allows) and as many rows as keep at most 16
    -- accumulators. The token-major blocking reads a row in several column passes (4 x 48 at d128: three), which
    -- on a head-major cache broke the head's sequential stream (h32/kv8/d128, kv_len 16384, Zen 4: 10.8 -> 8.2 ms;
    -- a plain read of the same rows in three column passes: 28.0 -> 16.7 GB/s). Known head_dim only.
    -- A group's by_dtype may cut a row in more passes (contig_pv_vectors): an int8 row is converted by every row
    -- block that reads it, and more rows a block convert each element for more FMAs.
    local contig_pv_vectors = by.contig_pv_vectors or blk.contig_pv_vectors
    if D and contig_pv_vectors then
      local vecs = math.ceil(D / W)
      local passes = math.ceil(vecs / contig_pv_vectors)
      if passes < math.ceil(vecs / p.pvv) then
        p.pvv_contig = math.ceil(vecs / passes)
        -- rows: a divisor of pr, so the rows padded for the other blocks (row_align) hold whole blocks of these
        local rows = math.max(1, math.floor(16 / p.pvv_contig))
        p.pr_contig = 1
        for r = math.min(rows, p.pr), 1, -1 do
          if p.pr % r == 0 then p.pr_contig = r; break end
        end
      end
    end
    p.q_tile = spec.phase.decode.max_q        -- every query of a step in one item ...
    p.kv_heads_per_item = 0                   -- ... and every kv head: K/V rows are read page after page
  else
    p.kb, p.pr, p.pvv, p.rv, p.rows, p.keys = b.kb, b.pr, b.pvv, b.rv, b.rows, b.keys
    p.keys_padded = round_up(p.keys, p.kb)
    p.row_align = lcm(lcm(p.rv * W, p.pr), 4)
    -- about `rows` (query x group) rows per item; a group larger than that gets one query per item
    p.q_tile = E.ge(g, p.rows, 1, E.div(p.rows, g))
    p.kv_heads_per_item = 1
    if isa.unroll_head_dim ~= false then
      -- head_dim steps per Q·Kᵀ loop iteration: the ISA's choice (NEON: 1, a rolled loop gcc does not spill in;
      -- llvm-mca, make bench-neon-model), else fully unrolled up to max_full_unroll
      local u = isa.prefill.unroll
      if u == 1 then p.unroll = nil
      elseif u and D and u < D then p.unroll = u
      else p.unroll = (D and D <= plan.max_full_unroll) and D or 64 end
    end
  end
  if k.phase == "decode" and isa.unroll_head_dim ~= false then p.unroll = D end
  -- the row stride of the Q, S and O tiles: rows of the largest item, padded to the blocking
  p.mp = round_up(E.mul(g, p.q_tile), lcm(p.row_align, 4)) -- a multiple of 4 keeps the per-row arrays aligned
  p.dp = round_up(d, W)
  local heads = p.kv_heads_per_item == 0 and (k.D and k.kv_heads or "kvh") or 1 -- generic: kvh at run time
  p.scratch = scratch_layout(p.mp, p.dp, p.keys_padded, heads, k.phase == "prefill",
    not k.D or (k.attn and k.attn.alibi ~= nil))
  -- split-KV (decode with few sequences): threads share one sequence's KV stream; merged through max and sum
  local split = blk.split or {}
  -- K/V repack (prefill): once a sequence has more than one query tile per kv head, the runtime copies each head's
  -- K and V rows into contiguous buffers once and every tile reads them there; in place, token-major rows a token
  -- apart cost a TLB miss and a prefetcher restart per row, paid again by every tile (h32/kv8/d128 S=2048: the
  -- same kernel ran 15-20% faster on head-major K/V). Decode reads each row once: never.
  p.pack_kv_min_q = k.phase == "prefill" and E.add(p.q_tile, 1) or 0
  p.split = { max = split.max or 1, min_keys = split.min_keys or 0, align = split.align or 1,
              below_batch = split.below_batch or 0 }
  p.head_split = plan.head_split[k.phase]
  p.dtype = dtype
  -- Decode on token-major rows of several heads (contiguous or paged) reads each kv head's part of a tile's token
  -- rows, rows 2-16 KiB apart, which the hardware prefetchers do not follow (nor a jump to a page elsewhere): every
  -- step of that stream (one head's K or V rows of a tile) asks for the rows stream_prefetch bytes further on in L2
  -- (templates/kernel.c.tpl, prefetch_stream). h32/kv8/d128 at kv_len 16384, Zen 4: f16 7.7 -> 4.7 ms, int8 5.6 ->
  -- 4.8, fp32 8.0 -> 7.5; shuffled token-major pages keep 0.93-1.16x the contiguous speed. Rows contiguous per head
  -- (head-major caches and pages) read the same stream, a head's rows of a tile a step: h32/kv8/d128 head-major
  -- cache 1.03-1.10x faster; shuffled head-major pages of 16 rows 1.2-1.9x.
  p.stream_prefetch = k.phase == "decode" and isa.prefetch_l2 ~= nil and blk.stream_prefetch or nil
  -- A vocabulary may leave fp32's token-major rows (contiguous or paged) to the hardware prefetchers
  -- (stream_prefetch_f32_token_major = false): rows contiguous per head still ask for theirs.
  p.prefetch_token_major = p.stream_prefetch ~= nil and
    not (dtype == "f32" and blk.stream_prefetch_f32_token_major == false)
  -- Rows in the lanes (a step of many rows a head, a shared prefix's) are bound by the FMAs, not the memory: their
  -- token-major rows ask for the stream's step ahead whatever the vocabulary leaves to the hardware. Shared prefix
  -- of 8 sequences, h32/kv8/d128, kv_len 16384, Zen 3 (AVX2), paired medians of 25 interleaved calls: 1.01-1.06x.
  p.prefetch_lanes = p.lanes ~= nil and p.stream_prefetch ~= nil
  p.paged = k.phase == "decode" and k.page_size or nil -- a paged decode kernel reads its rows page run by page run
  -- whether each P·V run of head-major pages asks for the stream's step ahead: a 16- or 8-bit type's always (bound
  -- by compute, it cannot wait for a line), fp32's when a head's run of a page is shorter than the vocabulary's
  -- page_run_bytes (longer ones the hardware prefetchers follow, as a head-major cache's rows)
  p.page_run_prefetch = p.paged and p.stream_prefetch and
    (dtype ~= "f32" or p.paged * D * spec.kv_dtype.f32.bytes < (blk.page_run_bytes or math.huge)) or nil
  p.mk = plan.microkernels(isa, p, D, G)
  if k.phase == "prefill" then
    p.describe = string.format("about %d (query x group) rows per item, Q·Kᵀ %dx%d register blocks, " ..
      "P·V %dx%d, %s keys per tile%s", p.rows, p.rv * W, p.kb, p.pr, p.pvv * W, E.I(p.keys),
      not D and ", head_dim at run time" or not p.unroll and ", head_dim loops"
        or D <= plan.max_full_unroll and ", fully unrolled over head_dim"
        or string.format(", head_dim unrolled by %d", p.unroll))
  else
    p.describe = string.format("every kv head and all queries of a step per item, Q·Kᵀ as %dx%d dot products, " ..
      "%sP·V %dx%d, %s keys per tile%s", p.rb, p.kb, p.columns and "softmax down the columns of Sᵀ, " or "",
      p.pr, p.pvv * W, E.I(p.keys) .. (p.keys_contig ~= p.keys and
        string.format(" (%s on rows contiguous per head)", E.I(p.keys_contig)) or ""),
      not D and ", head_dim at run time" or p.unroll and ", fully unrolled over head_dim" or ", head_dim loops")
  end
  if p.tuned then p.describe = p.describe .. " (blocking from the config's `tuned`)" end
  return p
end

-- Microkernels are shared by all kernels of a file with the same (ISA, head_dim, blocking, strides); the name
-- carries every parameter.
-- The live rows of a decode step's last row block, for blocks of `rb` rows, that get an edge microkernel: a
-- one-query step's G rows per kv head modulo rb (G nil: a generic kernel, every count from 1 to rb - 1). The
-- edge computes only those rows, so a group of 7 on blocks of 4 does not compute an 8th row of zeros. Steps of
-- 2-8 queries (speculative decoding) with another remainder run the full block over zero-padded rows, as before:
-- an edge for each would grow Qwen2.5-7B's file by half.
local function edge_rows(rb, G)
  local list = {}
  if G then
    if G % rb ~= 0 then list[1] = G % rb end
  else
    for live = rb - 1, 1, -1 do list[#list + 1] = live end
  end
  return list
end

function plan.microkernels(isa, p, D, G)
  local W = isa.width
  local dim = D and string.format("d%d", D) or "dany"
  local mk = { D = D, kb = p.kb, pr = p.pr, pvv = p.pvv, unroll = p.unroll, dtype = p.dtype }
  local ty = require("kvtype").suffix(p.dtype) -- decode microkernels read the cache's type
  if D then mk.dp = p.dp end
  if p.phase == "prefill" then
    local qs = type(p.mp) == "number" and p.mp or nil
    local stride = qs and string.format("_s%d", qs) or ""
    mk.template = "qk_microkernel.c.tpl"
    mk.rv, mk.qs = p.rv, qs
    mk.p_key_stride, mk.p_row_stride = qs, 1 -- P transposed: P[r][j] at j * mp + r
    mk.qk_name = string.format("attngen_qk_%s_%dx%d%s__%s", dim, p.rv * W, p.kb, stride, isa.name)
    -- P·V by column panels of pvv*W: the kernel loops panels outside and row blocks inside, so one panel of V
    -- (keys x pvv*W floats) stays in L1 while every row block passes over it (row blocks outside streamed the
    -- whole V tile from L2 once per row block). A head_dim that is not a multiple of the panel gets a tail.
    -- A panel keeps the ISA's form (NEON's rolled one: written out, gcc spilled 8 registers); a tail of constant
    -- width (less than one panel) is written out, since its loop form would be dead loops that gcc warns about.
    local pw = p.pvv * W
    mk.pv_panel = { name = string.format("attngen_pv_panel_%dx%d%s__%s", p.pr, pw, stride, isa.name), D = pw,
                    unroll = p.unroll }
    if not D then
      mk.pv_tail = { name = string.format("attngen_pv_tail_dany_%dx%d%s__%s", p.pr, pw, stride, isa.name),
                     unroll = p.unroll }
    elseif D % pw ~= 0 then
      mk.pv_tail = { name = string.format("attngen_pv_tail_c%d_%dx%d%s__%s", D % pw, p.pr, pw, stride, isa.name),
                     D = D % pw, unroll = p.unroll or true }
    end
    mk.pvs = { mk.pv_panel, mk.pv_tail }
  else
    mk.template = "qkdot_microkernel.c.tpl"
    mk.rb, mk.ss = p.rb, p.keys_padded
    -- names by the rows a block computes: "4" for a block of 4, "3of4" for an edge block with 3 of its 4 rows live
    local qk_stride, pv_stride
    if p.columns then
      -- S and P transposed (S[R][j] at j * ms + R), as in prefill: ms (every kv head's rows) is a constant, or the
      -- argument qs
      local qs = type(p.scratch.ms) == "number" and p.scratch.ms or nil
      qk_stride = qs and string.format("_t%d", qs) or "_tany"
      pv_stride = qk_stride
      mk.columns, mk.qs = true, qs
      mk.p_key_stride, mk.p_row_stride = qs, 1
    else
      mk.p_key_stride, mk.p_row_stride = 1, p.keys_padded -- P row-major: P[r][j] at r * keys + j
      qk_stride, pv_stride = string.format("_s%d", p.keys_padded), string.format("_p%d", p.keys_padded)
    end
    -- token-major blocks that ask for the rows of the stream's step ahead as they read theirs (`_pf`, the
    -- vocabulary's prefetch_in_blocks): specialized and unrolled; on pages, the rows of the step's block (or run)
    -- that share its first row's page
    local pf_tm = p.prefetch_token_major and isa.decode.prefetch_in_blocks and D and p.unroll and true or nil
    mk.prefetch_in_blocks = pf_tm
    local pfs = pf_tm and "_pf" or ""
    local function qk_name(rows) return string.format("attngen_qkdot_%s_%sx%d%s%s%s__%s", dim, rows, p.kb, qk_stride, ty, pfs, isa.name) end
    local function pv_name(rows) return string.format("attngen_pv_%s_%sx%d%s%s%s__%s", dim, rows, p.pvv * W, pv_stride, ty, pfs, isa.name) end
    mk.qk_name, mk.pv_name = qk_name(p.rb), pv_name(p.pr)
    if p.lanes then -- rows in the lanes: prefill's microkernel on panels of rv x W rows of Qᵀ (that row stride)
      -- (with stream prefetch: `_pf`, the block's rows of the step ahead asked for among its FMAs)
      local pw, lpf = p.lanes.panel, p.prefetch_lanes and "_pf" or ""
      mk.qk_lanes = { name = string.format("attngen_qk_%s_%dx%d_q%d%s%s__%s", dim, pw, p.lanes.kb, pw, qk_stride, lpf, isa.name),
                      kb = p.lanes.kb, rv = p.lanes.rv, qts = pw, qs = mk.qs, unroll = isa.prefill.unroll,
                      pf_rows = p.prefetch_lanes and p.lanes.kb or nil }
      -- and P·V in that form: Oᵀ of a panel's rows, pv_cols columns a block, each V element broadcast from its row in
      -- place (templates/pvt_microkernel.c.tpl); a head_dim not a multiple of pv_cols ends in a block of the rest
      local function pvt(cols)
        return { name = string.format("attngen_pvt_%s_%dx%d%s%s__%s", dim, pw, cols, qk_stride, lpf, isa.name),
                 rv = p.lanes.rv, cols = cols, qs = mk.qs,
                 pf = p.prefetch_lanes and (pf_tm or not p.prefetch_token_major) or nil }
      end
      local cols = p.lanes.pv_cols
      mk.pv_lanes = pvt(cols)
      if D % cols ~= 0 then mk.pv_lanes.edge = pvt(D % cols) end
    end
    -- (their P·V: "spread", each column block asking for the lines of its own columns)
    local pv_pf = pf_tm and "spread" or nil
    mk.pvs = { { name = mk.pv_name, D = D, unroll = p.unroll, prefetch = pv_pf } } -- one P·V microkernel for the whole head_dim
    -- and the blocks for rows contiguous per head (see pvv_contig), when they differ
    if p.pvv_contig then
      -- with the stream prefetch, the 16- and 8-bit types' blocks ask for row j of the stream's step ahead as they
      -- read V row j (`_pf`): a head's V rows are one long run the hardware prefetchers follow, but not into the
      -- step after them. h32/kv8/d128 head-major beyond the cache, Zen 4, in one process: int8 1.15x, f16 1.02x
      -- faster; fp32, bound by memory, 0.87x (the hardware prefetchers keep its pace), so it goes without, except
      -- on pages of short runs (page_run_prefetch): there each run's blocks ask for the same rows of the step ahead
      -- (asked for at once instead, f16 pages of 64 rows ran 0.79x a head-major cache, now 0.94-0.96x)
      local pf = p.stream_prefetch and D and p.unroll and (p.dtype ~= "f32" or p.page_run_prefetch) or nil
      local function pvc_name(rows)
        return string.format("attngen_pv_%s_%sx%d%s%s%s__%s", dim, rows, p.pvv_contig * W, pv_stride, ty,
          pf and "_pf" or "", isa.name)
      end
      mk.pv_contig = { name = pvc_name(p.pr_contig), pr = p.pr_contig, edges = {}, prefetch = pf }
      mk.pvs[#mk.pvs + 1] = { name = mk.pv_contig.name, D = D, unroll = p.unroll, pr = p.pr_contig, pvv = p.pvv_contig,
                              prefetch = pf }
      for _, live in ipairs(edge_rows(p.pr_contig, G)) do
        local e = { name = pvc_name(live .. "of" .. p.pr_contig), D = D, unroll = p.unroll, live = live,
                    pr = p.pr_contig, pvv = p.pvv_contig, prefetch = pf }
        mk.pv_contig.edges[#mk.pv_contig.edges + 1] = e
        mk.pvs[#mk.pvs + 1] = e
      end
    end
    -- edges: the last row block of a step with fewer live rows (S of the block's other rows is stored as 0; P·V
    -- leaves their O alone), e.g. attngen_qkdot_d64_3of4x3_t112__avx2
    mk.qk_edges, mk.pv_edges = {}, {}
    for _, live in ipairs(edge_rows(p.rb, G)) do
      mk.qk_edges[#mk.qk_edges + 1] = { name = qk_name(live .. "of" .. p.rb), live = live }
    end
    -- the same blocks reading each key's row whole, key after key, for K rows contiguous per head (see keys_contig):
    -- on a head-major cache the column order (a vector of every key in turn) read 8 rows of one 4 KiB block
    -- 2.3x slower than row by row (plain-read microbenchmark, Zen 4)
    local function qk_rw_name(rows)
      return string.format("attngen_qkdot_%s_%sx%d%s_rowwise%s__%s", dim, rows, p.kb_contig, qk_stride, ty, isa.name)
    end
    mk.qk_rowwise = { name = qk_rw_name(p.rb_contig), rb = p.rb_contig, kb = p.kb_contig, edges = {} }
    for _, live in ipairs(edge_rows(p.rb_contig, G)) do
      mk.qk_rowwise.edges[#mk.qk_rowwise.edges + 1] = { name = qk_rw_name(live .. "of" .. p.rb_contig), live = live }
    end
    for _, live in ipairs(edge_rows(p.pr, G)) do
      local e = { name = pv_name(live .. "of" .. p.pr), D = D, unroll = p.unroll, live = live, prefetch = pv_pf }
      mk.pv_edges[#mk.pv_edges + 1] = e
      mk.pvs[#mk.pvs + 1] = e
    end
  end
  return mk
end

return plan

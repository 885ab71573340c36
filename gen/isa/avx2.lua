-- SPDX-License-Identifier: MIT
-- AVX2 + FMA vocabulary (x86-64). Code is compiled per function with target("avx2,fma"), so the
-- generated file needs no -mavx2 and is only called after the runtime has checked cpuid + xgetbv.
return {
  width = 8,
  vtype = "__m256",
  attr = "ATTNGEN_TARGET_AVX2", -- defined in templates/isa/avx2.c as target("avx2,fma")
  registers = 16, -- ymm0..15: the register budget of a tuned blocking (gen/register_budget.lua)
  -- register blocking: prefill QK block = rv row-vectors x kb keys (rv*kb accumulators of 16 ymm)
  -- unroll = 32 head_dim steps per Q·Kᵀ loop iteration: on Zen 3 the fully unrolled d128 body (~2,400
  -- instructions) ran 12-16% slower than 32 steps in a loop (interleaved runs, S=1024, none and causal)
  prefill = { rv = 3, kb = 4, rows = 96, keys = 64, v_tile_bytes = 32768, pr = 6, pvv = 2, unroll = 32 },
  -- decode: blocking follows the group size (query rows of one step), so no lanes or registers idle
  -- (32 keys per tile: each head's pass over a tile touches fewer 4 KiB pages before the next head revisits
  -- them; measured 8.9-9.1 vs 7.7-8.2 GB/s at kv_len 16384, no change in cache)
  -- split-KV for decode with fewer than `below_batch` sequences: up to `max` KV chunks of >= min_keys keys,
  -- aligned to `align`, so both threads share one sequence's stream (the cut never depends on the thread count)
  -- keys_long_rows: keys per tile when a token's K row (every kv head) spans >= long_row_bytes: each head's pass
  -- then touches one page per key, and fewer pages per pass keep the prefetchers on track (beyond the cache:
  -- 8 keys vs 32 measured +20% h32/kv8/d128, +11% MHA h32/d128, +5-10% h64/kv8; kv2/d64 rows stay at 32: -10%)
  decode = { split = { max = 8, min_keys = 512, align = 256, below_batch = 8 }, keys_long_rows = 8, long_row_bytes = 2048,
    contig_pv_vectors = 8, -- P·V on rows contiguous per head: at most 8 vectors of a V row per pass (gen/plan.lua)
    -- token-major rows of several heads: each step asks for the rows this many bytes on in L2 (gen/plan.lua).
    -- h32/kv8/d128 at kv_len 16384, AVX2 kernels on Zen 4, interleaved: f16 8.5 -> 5.1 ms, int8 6.9 -> 5.9
    stream_prefetch = 65536,
    -- except fp32's token-major rows: Zen 3 (AVX2 only), kv_len 16384, two interleaved runs of the storage-type
    -- bench, % of the bound without / with: h32/kv8/d128 59-61 / 56-59, MHA h32/d128 90-94 / 79-85, h14/kv2/d64
    -- 36-43 / 35-38, batch 8 59-62 / 52-58 (a head-major cache keeps its requests: 43-44 without, 47-49 with).
    -- Token-major pages too: shuffled pages of 16 / 64 rows ran 0.92 / 0.95-0.97x the contiguous cache without,
    -- 0.85-0.86 / 0.87-0.88x with (two interleaved pairs of runs of BENCH_FILTER=paged)
    stream_prefetch_f32_token_major = false,
    -- the token-major Q·Kᵀ and P·V blocks ask for their rows of the step ahead themselves, a line or so per vector
    -- step of their FMAs (`_pf`, gen/plan.lua), instead of all of a step's lines at once before the block: a burst
    -- of 12-32 requests waited on the miss buffers. h32/kv8/d128 at kv_len 16384, Zen 3, paired medians of 21
    -- interleaved calls: f16 1.05x, bf16 1.02-1.05x, int8 1.00-1.03x (its rows are 2 lines a head); P·V asking
    -- in each column block for the lines of its columns rather than for whole rows in the first, on top: f16
    -- 0.99-1.05x (median 1.02), bf16 1.03-1.09x. fp32's rows asked for this way still ran 0.95-0.99x. Shuffled
    -- token-major pages of 16 / 64 rows, two runs of BENCH_FILTER=paged, paged ÷ contiguous (both with it): f16
    -- 0.93-0.95 / 0.96-0.97x, bf16 0.95 / 0.96-0.98x, int8 0.91-0.93 / 0.94-0.95x (without: 0.92, 0.94, 0.90 / 0.95,
    -- 0.96, 0.92)
    prefetch_in_blocks = true,
    page_run_bytes = 32768, -- as AVX-512's (gen/isa/avx512.lua)
    keys = 32,
    -- keys_contiguous: keys per tile when each kv head's K and V rows are contiguous (head-major cache; chosen at
    -- run time, gen/plan.lua): each head then streams 64 KiB of K and of V per tile in address order. Beyond the
    -- cache (Zen 4, AVX2 kernels, interleaved): h32/kv8/d128 head-major 10.0 GB/s at 32 keys, 11.1 at 64, 12.5 at
    -- 128; MHA h32/d128 13.9 / 15.5 / 15.8
    keys_contiguous = 128,
    -- rows of a kv head in the lanes for Q·Kᵀ (K broadcast) once they fill whole panels of rv vectors, at least
    -- min_rows: see gen/isa/avx512.lua. Panels of 16 rows x 6 keys (12 accumulators, 2 + 6 loads per 12 FMAs) in
    -- tiles of 24 keys: 8 rows x 8 keys had 8 chains of dependent FMAs, just enough for the FMA latency, and 9 loads
    -- per 8 FMAs. Alone in L1 on Zen 3, 32 rows a key: 85-99 ns against 117-126 (84 at the FMA peak)
    -- From 32 rows: a step of 16 (a group of 4 x 4 queries, of 8 x 2) runs faster on the dot products, Zen 3, paired
    -- medians of interleaved calls (decode kernels of min_rows 16 and 32, kv_len 4096 / 16384): h32/kv8/d128 q_len 4
    -- 1.08-1.11x / 1.03-1.06x, h64/kv8/d128 q_len 2 1.02-1.10x / 1.06-1.08x; at 32 rows the lanes stay the faster
    -- (dot products 0.93-0.96x, h32/kv8/d128 q_len 8, kv_len 16384)
    rows_in_lanes = { kb = 6, rv = 2, keys = 24, min_rows = 32 },
    -- (before decode asked for its rows ahead, 4 rows x 2 keys measured slower than 2 x 4 once K/V left L2: fewer
    -- K rows in flight at once; with the stream prefetch 4 x 2, then 4 x 3, is the faster, see by_group)
    -- columns: S is stored transposed (a key's scores of all rows in one vector) and the softmax runs down the
    -- columns like prefill's, a lane per row: per-row horizontal max/sum and a scalar exp per row cost more than
    -- the dot products themselves once a tile holds 4+ rows (h64/kv8 decode: ~1,400 of 5,200 instructions per
    -- tile and head, callgrind)
    -- (P·V 4 rows x 3 vectors for 4+ rows: 12 accumulators, 7 loads per 12 FMAs instead of 6 per 8; 1.04-1.06x in
    -- cache and 1.00-1.04x beyond it for groups 4, 7 and 8, interleaved)
    -- (groups 1-2 too, since S holds every kv head's rows side by side: MHA h12/d64 has 12 rows, 2 vectors, where
    -- the row form paid a horizontal max, a horizontal sum and a libm expf per head and tile. In cache (kv_len
    -- 512-2048), interleaved with an A/A copy: h12/kv12/d64 1.08-1.11x, h16/kv8/d64 1.12-1.16x, h32/kv32/d128
    -- 1.03-1.05x; beyond the cache 1.00-1.02x, the memory's pace)
    -- groups of 7+: 4 x 3 as groups of 4 (below; a group of 7 ends on a 3-row edge block), from 2 x 4 (8 chains, K
    -- loaded and converted once per 2 rows). Zen 3, ns per key and kv head, medians of 5-7 interleaved rounds at
    -- kv_len 256 / 16384: group 8 (h64/kv8/d128) fp32 95 / 101 against 91 / 107, f16 75 / 89 against 100 / 97, int8
    -- 95 / 104 against 109 / 111; group 7 (h28/kv4/d128) fp32 101 / 144 against 104 / 153, f16 82 / 98 against
    -- 91 / 109, int8 93 / 84 against 106 / 106
    by_group = { -- groups of 7+ on an int8 cache: Q·Kᵀ 8 rows x 1 key (8 accumulators), so a group of 7 is one block and
                 -- each K vector is converted once, not by a 4-row block and a 3-row edge block. Intel Xeon (AVX2
                 -- kernels), beyond the LLC, paired medians of 11 interleaved calls, bit-identical: h14/kv2/d64 int8
                 -- 1.04-1.05x, int8_g32 1.01x; h28/kv4/d128 int8 1.08x, int8_g32 1.01-1.05x; group 8 (h64/kv8)
                 -- int8 0.97-1.02x, int8_g32 1.01-1.03x. The other types lost
                 -- (fp32 0.98-1.02x, f16 0.94x), as did P·V 8 x 8 (fp32 0.92x, f16 0.91-0.92x). Its head-major
                 -- blocks stay the group's 4 x 3 (rb/kb_contiguous, else they would follow rb and kb)
                 { min_g = 7, rb = 4, kb = 3, pr = 4, pvv = 3, columns = true,
                   by_dtype = { i8 = { rb = 8, kb = 1, rb_contiguous = 4, kb_contiguous = 3, contig_pv_vectors = 4 } } },
                 -- groups of 4-6: all 4 rows x 3 keys, each K vector loaded and converted once for 4 FMAs; int8 in
                 -- tiles of its own count (its 1 KiB token rows are under long_row_bytes). 4 x 2 (8 accumulators, each a chain
                 -- of 16 dependent FMAs at d128) waited on its chains: alone in L1, Q·Kᵀ of 4 rows took 16-22 ns a
                 -- key against 12-13.6 for 4 x 3 (12 accumulators, the 3 K vectors held, a Q vector at a time; 10.5
                 -- at the FMA peak), Zen 3. h32/kv8/d128, ns per key and kv head, medians of 5 interleaved rounds,
                 -- Zen 3: kv_len 256 fp32 56 against 62, f16 56 against 60, int8 59 against 61; kv_len 16384 fp32
                 -- 79 against 82, f16 62 against 66, int8 56 against 62. (4 x 2 against 1 x 8 earlier, Zen 4, in
                 -- one process: fp32 7.1 against 8.1-8.3 ms, f16 4.6 against 4.6-4.7, int8 5.2 against 5.4 (4 x 1))
                 -- Tiles of long token rows in a table without pages: 12 keys (4 blocks of 3, where 8 computed a
                 -- repeated 9th), int8 24. h32/kv8/d128, Zen 3, paired medians of 21 interleaved calls, against 8
                 -- keys: kv_len 16384 fp32 1.01-1.03x, f16 0.99-1.03x, bf16 1.02-1.08x, int8 (24) 1.10-1.17x;
                 -- kv_len 1024 (in L3) fp32 1.03x, f16 1.11x, bf16 1.09x, int8 1.17x. f16 in tiles of 24:
                 -- 0.93-1.00x beyond the cache. A table with paged kernels keeps 8 (a tile of 12 crosses pages of
                 -- 16: the paged kernels ran 0.79-0.85x the contiguous ones, slower than with tiles of 8).
                 -- On rows contiguous per head (a head-major cache) the same 4 x 3 blocks, row-wise: each K row
                 -- loaded once for the 4 rows instead of 4 times by 1 x 8 blocks. h32/kv8/d128 head-major, Zen 3,
                 -- paired medians of 21-31 interleaved calls, kv_len 16384 / 2048: fp32 1.10-1.16 / 1.20x, f16
                 -- 1.17-1.19 / 1.12x, bf16 1.26 / 1.24x; int8 keeps 4 x 1 (4 x 3 0.95x, 4 x 2 0.96x). Its P·V
                 -- there 4 rows x 32 (contig_pv_vectors 4, four passes over a V row) where 2 x 64 converted each
                 -- V vector for 2 rows: Intel Xeon, kv_len 131072, paired medians of 9 interleaved calls,
                 -- bit-identical: h32/kv8/d128 int8 1.13x, int8_g32 1.12x (fp32 1.02x, f16 1.00x: kept at 8);
                 -- h28/kv4/d128 (the group of 7 below) int8 1.13x, int8_g32 1.19x; 4 x 24 alike (0.97-1.03x)
                 { min_g = 4, rb = 4, kb = 3, pr = 4, pvv = 3, columns = true, rb_contiguous = 4, kb_contiguous = 3,
                   keys_long_rows_unpaged = 12,
                   by_dtype = { i8 = { keys = 8, keys_unpaged = 24, kb_contiguous = 1, contig_pv_vectors = 4 } } },
                 { min_g = 2, rb = 2, kb = 4, pr = 2, pvv = 4, columns = true },   -- 8 + 8 ymm accumulators
                 -- MHA: one row, 8 keys in flight; on rows contiguous per head one key per block (kb_contiguous,
                 -- gen/plan.lua): h32/d128 head-major, kv_len 16384, 17.5-18.5 GB/s against 16.0-16.3 with 8
                 { min_g = 1, rb = 1, kb = 8, pr = 1, pvv = 8, columns = true, kb_contiguous = 1 } },
    generic = { rb = 2, kb = 4, pr = 2, pvv = 4 } },
  zero = function() return "_mm256_setzero_ps()" end,
  set1 = function(x) return "_mm256_set1_ps(" .. x .. ")" end,
  load = function(p) return "_mm256_loadu_ps(" .. p .. ")" end,
  store = function(p, v) return "_mm256_storeu_ps(" .. p .. ", " .. v .. ");" end,
  bcast = function(p) return "_mm256_broadcast_ss(" .. p .. ")" end,
  fma = function(acc, a, b) return "_mm256_fmadd_ps(" .. a .. ", " .. b .. ", " .. acc .. ")" end,
  mul = function(a, b) return "_mm256_mul_ps(" .. a .. ", " .. b .. ")" end,
  add = function(a, b) return "_mm256_add_ps(" .. a .. ", " .. b .. ")" end,
  sub = function(a, b) return "_mm256_sub_ps(" .. a .. ", " .. b .. ")" end,
  max = function(a, b) return "_mm256_max_ps(" .. a .. ", " .. b .. ")" end,
  hsum = function(v) return "attngen_hsum_avx2(" .. v .. ")" end,
  hmax = function(v) return "attngen_hmax_avx2(" .. v .. ")" end,
  -- the horizontal sums of four vectors, stored to p[0..3] (one transposing reduction instead of four)
  hsum4_store = function(p, a, b, c, d) return string.format("attngen_hsum4_avx2(%s, %s, %s, %s, %s);", p, a, b, c, d) end,
  -- keys along the lanes: lane k (key j0 + k) of v becomes -inf unless j0 + k < lim
  mask_lanes = function(v, j0, lim) return "attngen_mask_lanes_avx2(" .. v .. ", " .. j0 .. ", " .. lim .. ")" end,
  exp = function(x) return "attngen_exp_avx2(" .. x .. ")" end,
  tanh = function(x) return "attngen_tanh_avx2(" .. x .. ")" end,
  -- dst[c * ds + i] = src[i][k0 + c] * s for i, c < 8: eight rows of Q into the transposed tile at once (the
  -- x86 helper AVX-512 uses too, templates/isa/x86.c)
  transpose_scaled = function(src, k0, s, dst, ds)
    return string.format("attngen_transpose8_scaled_x86(%s, %s, _mm256_set1_ps(%s), %s, %s);", src, k0, s, dst, ds)
  end,
  -- a statement keeping a loaded vector in a register (optional word: gcc folds loads into FMA operands)
  pin = function(v) return "ATTNGEN_PIN_AVX2(" .. v .. ");" end,
  -- lanes of v whose row limit (int vector as float) is <= j become -inf
  mask_keys = function(v, j, lim) return "attngen_mask_avx2(" .. v .. ", " .. j .. ", " .. lim .. ")" end,
  select_zero_if_neginf = function(v) return "attngen_finite_or_zero_avx2(" .. v .. ")" end,
  -- a statement asking for the cache line at address p in L2 (a paged decode's next page)
  prefetch_l2 = function(p) return "_mm_prefetch((const char *)(" .. p .. "), _MM_HINT_T1);" end,
  -- the cache's storage types (gen/kvtype.lua): 8 stored elements at p as 8 floats, exact (int8 before its scale).
  -- f16 converts with F16C: only the kernels reading f16 carry it (attr_kv) and the runtime checks it for them.
  kv_load = {
    f32 = function(p) return "_mm256_loadu_ps(" .. p .. ")" end,
    f16 = function(p) return "_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(" .. p .. ")))" end,
    bf16 = function(p) return "attngen_bf16_load_avx2(" .. p .. ")" end,
    i8 = function(p) return "attngen_i8_load_avx2(" .. p .. ")" end,
  },
  attr_kv = { f16 = "ATTNGEN_TARGET_AVX2_F16C" },
}

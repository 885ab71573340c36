-- SPDX-License-Identifier: MIT
-- AVX-512F vocabulary (x86-64: AMD Zen 4 and later, Intel Skylake-SP and later). Like AVX2, code is compiled per
-- function with target("avx512f,avx2,fma"), so the generated file needs no -mavx512f; the runtime calls it only
-- after cpuid and xgetbv confirm AVX-512F and the OS's zmm and opmask state.
-- What it brings over AVX2 at the same FMA rate (Zen 4 runs a 512-bit FMA as two 256-bit halves): 16 lanes and 32
-- registers, so each broadcast or load feeds twice the lanes and the register blocks are larger; lane masks
-- (k registers) instead of blends.
return {
  width = 16,
  vtype = "__m512",
  attr = "ATTNGEN_TARGET_AVX512", -- defined in templates/isa/avx512.c
  registers = 32, -- zmm0..31: the register budget of a tuned blocking (gen/register_budget.lua)
  -- prefill: Q·Kᵀ 32 query rows (2 vectors) x 8 keys = 16 accumulators, P·V 8 rows x 32 columns = 16; the rest
  -- as AVX2 (V tile in L1, 32 head_dim steps per Q·Kᵀ loop iteration)
  prefill = { rv = 2, kb = 8, rows = 96, keys = 64, v_tile_bytes = 32768, pr = 8, pvv = 2, unroll = 32 },
  -- decode: AVX2's cut and rules (gen/isa/avx2.lua has the measurements), with the blocks below; P·V 4 rows x 48
  -- columns for groups of 4-6 (`attngen --tune --isa avx512` on Zen 4: 1.02x over 4 x 64)
  -- keys_long_rows from rows of 128 bytes (AVX2: 2 KiB): with the stream prefetch, 8-key tiles beat 128-key ones on
  -- short token rows too. h14/kv2/d64 (rows of 128-512 B) at kv_len 65536, Zen 4, in one process: f32 4.2 against
  -- 7.4 ms, f16 3.8 against 4.8, int8 4.3 against 4.5; int8 h32/kv8/d128 (1 KiB rows) 4.2 against 5.9
  decode = { split = { max = 8, min_keys = 512, align = 256, below_batch = 8 }, keys_long_rows = 8, long_row_bytes = 128,
    contig_pv_vectors = 8, -- P·V on rows contiguous per head: at most 8 vectors of a V row per pass (gen/plan.lua)
    -- token-major rows of several heads: each step asks for the rows this many bytes on in L2 (gen/plan.lua).
    -- h32/kv8/d128 at kv_len 16384, Zen 4, interleaved runs: f16 7.7 -> 4.7 ms, int8 5.6 -> 4.8, fp32 8.0 -> 7.5;
    -- 32-192 KiB measured alike, every other line or fewer 1.2-2x slower, tiles of 16-64 keys slower still.
    -- Intel Xeon (Emerald Rapids), h32/kv8/d128 at kv_len 131072, paired medians of 11 interleaved calls, 32 KiB
    -- against 64: fp32 1.05-1.06x (4-16 KiB alike), f16 1.01-1.03x, int8 1.00-1.02x; group 8 (h64/kv8) 1.02x,
    -- head-major 1.02x, MHA, group 7 (h14/kv2/d64), batch 8 and pages of 16 rows alike (0.99-1.01x)
    stream_prefetch = 32768,
    -- the token-major blocks ask for their rows of the step ahead themselves, a line or so per vector step of their
    -- FMAs, as AVX2's do (gen/isa/avx2.lua): a step's burst of requests before its block waited on the miss
    -- buffers. Intel Xeon (Emerald Rapids, one core 15.4 GB/s asking ahead), paired medians of 9-11 interleaved calls
    -- beyond the LLC: h32/kv8/d128 fp32 1.09-1.10x, f16 1.08-1.09x, int8 1.03-1.09x; MHA h32/d128 fp32 1.02x, f16
    -- 1.03x, int8 1.02x; h14/kv2/d64 fp32 1.03x, f16 1.02-1.07x, int8 1.04x (64 KiB ahead; 32 KiB, above, on top)
    prefetch_in_blocks = true,
    -- head-major pages: a head's run of a page at least this long the hardware prefetchers follow, so fp32 P·V
    -- runs ask for nothing (gen/plan.lua). h32/kv8/d128 at kv_len 16384, Zen 4, in one process, fp32 pages ÷ a
    -- head-major cache asking / not: pages of 16 rows (8 KiB runs) 0.83 / 0.66, 32 0.85 / 0.83, 64 0.88 / 0.94
    page_run_bytes = 32768,
    keys = 128, -- also the tile on rows contiguous per head (keys_contiguous, gen/isa/avx2.lua): 256 measured the same
    -- a kv head with at least min_rows rows filling whole vectors (a step of several queries: a shared prefix's pass,
    -- speculative decoding) computes Q·Kᵀ with its rows in the lanes, K elements broadcast (prefill's form), kb keys
    -- per block: no horizontal sums (gen/plan.lua)
    -- (panels of rv vectors of rows, 1 when not given; `keys`: keys per tile in this form, else the layout's).
    -- Panels of 32 rows x 8 keys: a panel of 16 loaded 9 vectors and broadcasts for its 8 FMAs a step, more than
    -- the load ports take at the FMAs' pace. Intel Xeon (Emerald Rapids), 8 queries of h32/kv8/d128 on 131072
    -- rows (a shared prefix's pass), one thread: 16 x 8 in 8-key tiles 200-237 ms, 32 x 8 191-194 ms, with 32-key
    -- tiles and the block's prefetch spread over its FMAs (qk_microkernel.c.tpl) 160-165 ms. A step of 16 rows
    -- (4 queries) runs the row-wise blocks, 1.13-1.24x faster there than 16 x 8 panels.
    rows_in_lanes = { kb = 8, rv = 2, keys = 32, min_rows = 32 },
    -- groups of 4+: all 4 rows of a group x 4 keys (16 accumulators), so each K vector is loaded and converted once
    -- for 4 FMAs (2 x 8 converted every K vector twice). h32/kv8/d128 at kv_len 16384, token-major, Zen 4, in one
    -- process: fp32 7.4 against 8.0 ms, f16 4.5 against 4.7, int8 4.2 against 4.9 (its 4 x 1 blocks); alone in L1,
    -- Q·Kᵀ of f16 76% of the FMA peak against 64%. Groups of 7-8: 8 rows x 2 keys and P·V 8 x 32, so a group of 7 is
    -- one block (7 live rows), each K and V vector converted once; as 4 x 4 and 4 x 64 it was two blocks that both
    -- converted it. Intel Xeon (Emerald Rapids), beyond the LLC, paired medians of 9-21 interleaved calls, results
    -- bit-identical, against 4 x 4 / 4 x 64: h14/kv2/d64 fp32 1.03-1.11x, f16 1.07-1.10x, bf16 1.07-1.14x, int8
    -- 0.98-1.02x, int8_g32 1.00-1.07x; h28/kv4/d128 fp32 1.03-1.04x, f16 1.09-1.11x, bf16 1.10-1.13x, int8
    -- 0.99-1.02x, int8_g32 1.12-1.14x; group 8 (h64/kv8/d128) fp32 1.04x, f16 1.03x, bf16 1.00x, int8 0.99x,
    -- int8_g32 1.13x (the 4 x 4 and 4 x 64 against Qwen2.5-0.5B's earlier tuned 2 x 2, Zen 4: fp32 4.2 against 6.3 ms)
    -- Rows contiguous per head (row-wise blocks, each head's rows read whole in address order), on a quiet Zen 4,
    -- h32/kv8/d128 head-major at kv_len 16384, two runs of `make bench BENCH_FILTER=kvtype`: 2 x 4 read fp32 at
    -- 18.2 against 16.1 GB/s for 2 x 8 (f16 12.2 against 11.8), and 4 x 4 took fp32 from 7.8 to 9.0 ms; groups of
    -- 4-6 now run 4 x 3 (below, measured on an Intel Xeon), groups of 7+ 2 x 8, int8 4 x 1 (head-major int8 ran
    -- 1.1x faster than 2 x 4). An int8 V row there in two passes of 4 vectors (P·V 4 x 64, contig_pv_vectors) where
    -- one pass held 2 rows: each V vector converted for 4 rows, not 2. Intel Xeon, head-major, kv_len 131072, paired
    -- medians of 9 interleaved calls, bit-identical: h32/kv8/d128 int8 1.12x, int8_g32 1.08x (fp32 0.94x, f16
    -- 0.98x: their conversion is cheaper than the second pass); h28/kv4/d128 int8 1.03x, int8_g32 1.11x
    by_group = { -- groups of 9+ (Falcon's one kv head for 71): 4 x 4 and 4 x 64 as before. h71/kv1/d64 with 8 x 2 and
                 -- 8 x 32 ran its fp32 0.95-0.98x, the other types 1.00-1.02x (its one kv head runs the row-wise
                 -- blocks, whose P·V then went without the 4 x 64 blocks' stream prefetch; giving it one: 0.96-0.98x)
                 { min_g = 9, rb = 4, kb = 4, pr = 4, pvv = 4, columns = true, rb_contiguous = 2, kb_contiguous = 8,
                   by_dtype = { i8 = { rb_contiguous = 4, kb_contiguous = 1, contig_pv_vectors = 4 } } },
                 { min_g = 7, rb = 8, kb = 2, pr = 8, pvv = 2, columns = true, rb_contiguous = 2, kb_contiguous = 8,
                   by_dtype = { i8 = { rb_contiguous = 4, kb_contiguous = 1, contig_pv_vectors = 4 } } },
                 -- groups of 4-6 on rows contiguous per head: row-wise blocks of 4 rows x 3 keys, as AVX2's (each K
                 -- row loaded once for the group's 4 rows; 12 accumulators, where Zen 4's 4 x 4 ran slower). Intel
                 -- Xeon (Emerald Rapids), against 2 x 4, paired medians of 9-21 interleaved calls, results bit-identical:
                 -- h32/kv8/d128 head-major kv_len 131072 fp32 1.04-1.08x, f16 1.07-1.09x, bf16 1.08-1.10x (kv_len
                 -- 2048: fp32 1.08x, f16 1.12x); h4/kv1/d256 (one kv head) fp32 1.07-1.11x, f16 1.13-1.16x
                 { min_g = 4, rb = 4, kb = 4, pr = 4, pvv = 3, columns = true, kb_contiguous = 3, rb_contiguous = 4,
                   by_dtype = { i8 = { kb_contiguous = 1, contig_pv_vectors = 4 } } },
                 { min_g = 2, rb = 2, kb = 4, pr = 2, pvv = 4, columns = true },
                 -- kb_contiguous: keys per Q·Kᵀ block on rows contiguous per head (gen/plan.lua). MHA h32/d128 on a
                 -- head-major cache, kv_len 16384: 1 key 24 GB/s, 2 keys 18-20, 4 keys 16, 8 keys 13-15
                 { min_g = 1, rb = 1, kb = 8, pr = 1, pvv = 8, columns = true, kb_contiguous = 1 } },
    generic = { rb = 2, kb = 4, pr = 2, pvv = 4 } },
  zero = function() return "_mm512_setzero_ps()" end,
  set1 = function(x) return "_mm512_set1_ps(" .. x .. ")" end,
  load = function(p) return "_mm512_loadu_ps(" .. p .. ")" end,
  store = function(p, v) return "_mm512_storeu_ps(" .. p .. ", " .. v .. ");" end,
  bcast = function(p) return "_mm512_set1_ps(*(" .. p .. "))" end,
  fma = function(acc, a, b) return "_mm512_fmadd_ps(" .. a .. ", " .. b .. ", " .. acc .. ")" end,
  mul = function(a, b) return "_mm512_mul_ps(" .. a .. ", " .. b .. ")" end,
  add = function(a, b) return "_mm512_add_ps(" .. a .. ", " .. b .. ")" end,
  sub = function(a, b) return "_mm512_sub_ps(" .. a .. ", " .. b .. ")" end,
  max = function(a, b) return "_mm512_max_ps(" .. a .. ", " .. b .. ")" end,
  hsum = function(v) return "attngen_hsum_avx512(" .. v .. ")" end,
  hmax = function(v) return "attngen_hmax_avx512(" .. v .. ")" end,
  -- the horizontal sums of four vectors, stored to p[0..3]
  hsum4_store = function(p, a, b, c, d) return string.format("attngen_hsum4_avx512(%s, %s, %s, %s, %s);", p, a, b, c, d) end,
  -- sixteen horizontal sums in one tree (templates/isa/avx512.c): v[m][k] (m, k = 1..4) to dst[k][m - 1], each times
  -- scale[k] when given
  hsum16_store = function(dst, v, scale)
    local out = {}
    for m = 1, 4 do
      out[m] = string.format("%sconst __m512 r%d = attngen_fold4_avx512(attngen_fold2_avx512(%s, %s), attngen_fold2_avx512(%s, %s));",
        m == 1 and "{ " or "  ", m - 1, v[m][1], v[m][2], v[m][3], v[m][4])
    end
    out[5] = "  const __m512 z = attngen_fold16_avx512(attngen_fold8_avx512(r0, r1), attngen_fold8_avx512(r2, r3)); /* lanes 4 k .. 4 k + 3: the sums stored to the k-th address below */"
    for k = 1, 4 do
      local lane = k == 1 and "_mm512_castps512_ps128(z)" or string.format("_mm512_extractf32x4_ps(z, %d)", k - 1)
      if scale then lane = string.format("_mm_mul_ps(%s, _mm_set1_ps(%s))", lane, scale[k]) end
      out[#out + 1] = string.format("  _mm_storeu_ps(%s, %s);", dst[k], lane)
    end
    out[#out + 1] = "}"
    return table.concat(out, "\n")
  end,
  -- keys along the lanes: lane k (key j0 + k) of v becomes -inf unless j0 + k < lim
  mask_lanes = function(v, j0, lim) return "attngen_mask_lanes_avx512(" .. v .. ", " .. j0 .. ", " .. lim .. ")" end,
  exp = function(x) return "attngen_exp_avx512(" .. x .. ")" end,
  tanh = function(x) return "attngen_tanh_avx512(" .. x .. ")" end,
  -- dst[c * ds + i] = src[i][k0 + c] * s for i, c < 16: sixteen rows of Q into the transposed tile at once
  transpose_scaled = function(src, k0, s, dst, ds)
    return string.format("attngen_transpose_scaled_avx512(%s, %s, %s, %s, %s);", src, k0, s, dst, ds)
  end,
  -- a statement keeping a loaded vector in a register (see gen/isa/avx2.lua)
  pin = function(v) return "ATTNGEN_PIN_AVX512(" .. v .. ");" end,
  -- lanes of v whose row limit (int vector as float) is <= j become -inf
  mask_keys = function(v, j, lim) return "attngen_mask_avx512(" .. v .. ", " .. j .. ", " .. lim .. ")" end,
  select_zero_if_neginf = function(v) return "attngen_finite_or_zero_avx512(" .. v .. ")" end,
  -- a statement asking for the cache line at address p in L2 (a paged decode's next page)
  prefetch_l2 = function(p) return "_mm_prefetch((const char *)(" .. p .. "), _MM_HINT_T1);" end,
  -- the cache's storage types (gen/kvtype.lua): 16 stored elements at p as 16 floats, exact (int8 before its scale),
  -- all with AVX-512F's own conversions
  kv_load = {
    f32 = function(p) return "_mm512_loadu_ps(" .. p .. ")" end,
    f16 = function(p) return "_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(" .. p .. ")))" end,
    bf16 = function(p) return "attngen_bf16_load_avx512(" .. p .. ")" end,
    i8 = function(p) return "attngen_i8_load_avx512(" .. p .. ")" end,
  },
}

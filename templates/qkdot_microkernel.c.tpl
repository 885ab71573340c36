@ -- SPDX-License-Identifier: MIT
@ -- Decode's Q·Kᵀ: few query rows, so dot products run along head_dim (no lanes wasted on missing rows).
@ local V, W = isa.vtype, isa.width
@ local RB, KB = mk.rb, mk.kb
@ local LIVE = mk.live or RB -- rows computed: an edge block's last RB - LIVE rows get S = 0
@ local DP = mk.D and I(mk.dp) or "dp"
@ local DV = mk.D and I(mk.D) or "d" -- head_dim in the loop form: a constant, or the generic kernel's argument
@ local attr = kvtype.attr(isa, mk.dtype)
@ local kv = kvtype.words(isa, mk.dtype, mk.D) -- K as stored: its element type, and loads that give fp32
@ local function kload(j, c) return kv.load("k" .. I(j), c, "ks" .. I(j)) end
@ local function kelem(j, c) return kv.elem("k" .. I(j), c, c, "ks" .. I(j)) end
@ local function acc(r, j) return string.format("acc%d_%d", r, j) end
@ -- where S[r][j] goes: row-major (row stride ss), or transposed for the softmax down the columns (key stride qs)
@ local QS = mk.qs or "qs"
@ local function sidx(rr, j) if mk.columns then return add(mul(j, QS), rr) end return add(mul(rr, mk.ss), j) end
/* S[r][j] = Q_r · K_j for $(LIVE < RB and (I(LIVE) .. " of a block of ") or "")$(I(RB)) query rows and KB=$(I(KB)) keys$(mk.rowwise and ", key after key (each K row read whole)" or ""): vector dot products along head_dim, then one
 * horizontal sum each, stored $(mk.columns and "transposed (S[r][j] at s[j * " .. QS .. " + r])" or "row-major"). Q is packed row-major (scaled). No row loop in here: the compiler would hoist the K loads
 * out of it and spill them. */
static ATTNGEN_NOINLINE $(attr)void $(mk.qk_name)(const float *restrict qp, const $(kv.ctype) *const *restrict krow$(kv.scaled and ", const float *const *restrict ksrow" or ""), float *restrict s$(mk.D and "" or ", int d, ptrdiff_t dp")$(mk.columns and not mk.qs and ", ptrdiff_t qs" or "")$(mk.prefetch_in_blocks and (", const " .. kv.ctype .. " *pf, ptrdiff_t pfs, int pfn") or ""))
{
@ if LIVE == 1 and not mk.D then
  (void)dp; /* one row per block */
@ end
@ if mk.prefetch_in_blocks and KB == 1 then
  (void)pfs; /* one key a block: its row of the stream ahead starts at pf */
@ end
@ for j = 0, KB - 1 do
  const $(kv.ctype) *restrict k$(I(j)) = krow[$(I(j))];
@   if kv.scaled then
  const float *restrict ks$(I(j)) = ksrow[$(I(j))];
@   end
@ end
  {
@ for rr = 0, LIVE - 1 do
    const float *restrict q$(I(rr)) = qp + $(mul(rr, DP));
@ end
@ for rr = 0, RB - 1 do
@   local decl = {}
@   for j = 0, KB - 1 do decl[#decl + 1] = acc(rr, j) .. " = " .. isa.zero() end
    $(rr >= LIVE and "const " or "")$(V) $(table.concat(decl, ", "));$(rr == LIVE and " /* rows past the live ones: S = 0 */" or "")
@ end
@ -- one vector of head_dim: RB vectors of Q, then one line per key (load, RB FMAs); `{` opens the step's scope
@ -- Keys first when the block has more rows than keys: the KB K vectors stay in registers (loaded and converted
@ -- once each) and one row's Q vector at a time meets them, RB x KB + KB + 1 registers where Q first needs
@ -- RB x KB + RB + 1 (4 x 3: 16 of AVX2's 16 instead of 17)
@ local keys_first = LIVE > KB
@ local function step_keys_first(c, indent)
@   local ks = {}
@   for j = 0, KB - 1 do
@     ks[#ks + 1] = string.format("%s kv%d = %s;", V, j, kload(j, c))
@     if isa.pin then ks[#ks + 1] = isa.pin("kv" .. I(j)) end
@   end
$(indent){ $(table.concat(ks, " "))
@   for rr = 0, LIVE - 1 do
@     local fm = {}
@     for j = 0, KB - 1 do fm[#fm + 1] = string.format("%s = %s;", acc(rr, j), isa.fma(acc(rr, j), "qv", "kv" .. I(j))) end
$(indent)  { const $(V) qv = $(isa.load(add("q" .. I(rr), c))); $(table.concat(fm, " ")) }$(rr == LIVE - 1 and " }" or "")
@   end
@ end
@ local function step(c, indent)
@   if keys_first then return step_keys_first(c, indent) end
@   local qs = {}
@   for rr = 0, LIVE - 1 do qs[#qs + 1] = string.format("const %s qv%d = %s;", V, rr, isa.load(add("q" .. I(rr), c))) end
$(indent){ $(table.concat(qs, " "))
@   for j = 0, KB - 1 do
@     local fm = {}
@     for rr = 0, LIVE - 1 do fm[#fm + 1] = string.format("%s = %s;", acc(rr, j), isa.fma(acc(rr, j), "qv" .. I(rr), "kv")) end
@     if isa.pin and LIVE > 1 then
$(indent)  { $(V) kv = $(kload(j, c)); $(isa.pin("kv")) $(table.concat(fm, " ")) }$(j == KB - 1 and " }" or "")
@     else
$(indent)  { const $(V) kv = $(kload(j, c)); $(table.concat(fm, " ")) }$(j == KB - 1 and " }" or "")
@     end
@   end
@ end
@ -- row rr's KB dot products: reduced four at a time in one transposing step where the ISA has it
@ local function store_sums(rr)
@   local j = 0
@   while j < KB do
@     if isa.hsum4_store and j + 4 <= KB and not mk.columns then
    $(isa.hsum4_store("s + " .. I(sidx(rr, j)), acc(rr, j), acc(rr, j + 1), acc(rr, j + 2), acc(rr, j + 3)))
@       j = j + 4
@     elseif isa.hsum4_store and j + 4 <= KB then
    { float t4[4]; /* four sums in one reduction, then to their columns */
      $(isa.hsum4_store("t4", acc(rr, j), acc(rr, j + 1), acc(rr, j + 2), acc(rr, j + 3)))
      s[$(sidx(rr, j))] = t4[0]; s[$(sidx(rr, j + 1))] = t4[1]; s[$(sidx(rr, j + 2))] = t4[2]; s[$(sidx(rr, j + 3))] = t4[3]; }
@       j = j + 4
@     else
    s[$(sidx(rr, j))] = $(isa.hsum(acc(rr, j)));
@       j = j + 1
@     end
@   end
@ end
@ -- every row's sums; transposed with rows in fours, one reduction stores four rows of one key side by side, or
@ -- (hsum16_store) one tree stores four such runs of four rows (4 rows x 4 keys, 8 x 2), a K row's scale
@ -- multiplying its sums on the way (returns true: the sums are scaled). Head-major 4 x 3 blocks padded to 4 x 4
@ -- ran no faster (0.99-1.04x).
@ local function store_all()
@   if mk.columns and isa.hsum16_store and RB % 4 == 0 and (RB / 4 * KB) % 4 == 0 then
@     local runs = {} -- { first row, key } of each run of four rows' sums, key by key
@     for j = 0, KB - 1 do
@       for rr = 0, RB - 1, 4 do runs[#runs + 1] = { rr, j } end
@     end
@     for r0 = 1, #runs, 4 do
@       local dst, v, sc = {}, { {}, {}, {}, {} }, kv.row_scale and {} or nil
@       for k = 1, 4 do
@         local rr, j = runs[r0 + k - 1][1], runs[r0 + k - 1][2]
@         for m = 1, 4 do v[m][k] = acc(rr + m - 1, j) end
@         dst[k] = "s + " .. I(sidx(rr, j))
@         if sc then sc[k] = kv.row_scale_of("ks" .. I(j)) end
@       end
    $((isa.hsum16_store(dst, v, sc):gsub("\n", "\n    ")))
@     end
@     return true
@   elseif mk.columns and isa.hsum4_store and RB % 4 == 0 then
@     for j = 0, KB - 1 do
@       for rr = 0, RB - 1, 4 do
    $(isa.hsum4_store("s + " .. I(sidx(rr, j)), acc(rr, j), acc(rr + 1, j), acc(rr + 2, j), acc(rr + 3, j)))
@       end
@     end
@   else
@     for rr = 0, RB - 1 do store_sums(rr) end
@   end
@ end
@ -- Row-wise (K rows contiguous per head): each key's row whole, key after key, in address order. Unrolled, a
@ -- key's vectors alternate between two accumulator chains (half the dependent FMAs), summed when the row ends.
@ local function key_row(j, indent)
@   local a, b = {}, {}
@   for rr = 0, LIVE - 1 do a[#a + 1] = "ka" .. I(rr) .. " = " .. isa.zero(); b[#b + 1] = "kb" .. I(rr) .. " = " .. isa.zero() end
$(indent){ $(V) $(table.concat(a, ", ")), $(table.concat(b, ", "));
@   local full = math.floor(mk.D / W) * W
@   for c = 0, full - 1, W do
@     local ch = (c / W) % 2 == 0 and "ka" or "kb"
@     local fm = {}
@     for rr = 0, LIVE - 1 do fm[#fm + 1] = string.format("%s%d = %s;", ch, rr, isa.fma(ch .. I(rr), isa.load(add("q" .. I(rr), c)), "kv")) end
$(indent)  { const $(V) kv = $(kload(j, c)); $(table.concat(fm, " ")) }
@   end
@   local sums = {}
@   for rr = 0, LIVE - 1 do sums[#sums + 1] = string.format("%s = %s;", acc(rr, j), isa.add("ka" .. I(rr), "kb" .. I(rr))) end
$(indent)  $(table.concat(sums, " ")) }
@   if j < KB - 1 then
$(indent)ATTNGEN_RELOAD(); /* the next key loads Q again (L1) rather than keep it live */
@   end
@ end
@ -- one scale per K row: the vector sums are of the bare integers, scaled here once per score (the tails after
@ -- this add scaled elements)
@ local function scale_sums(done)
@   if not kv.row_scale or done then return end
@   for rr = 0, LIVE - 1 do
@     local sc = {}
@     for j = 0, KB - 1 do sc[#sc + 1] = string.format("s[%s] *= %s;", sidx(rr, j), kv.row_scale_of("ks" .. I(j))) end
    $(table.concat(sc, " "))
@   end
@ end
@ -- the loop form's last head_dim elements (past the last full vector), from c = `from` (empty: c as the loop left it)
@ local function loop_tail(from)
    for ($(from); c < $(DV); ++c) { /* head_dim past the last full vector */
@   for rr = 0, LIVE - 1 do for j = 0, KB - 1 do
      s[$(sidx(rr, j))] += q$(I(rr))[c] * $(kelem(j, "c"));
@   end end
    }
@ end
@ if mk.D and mk.unroll then
@   local full = math.floor(mk.D / W) * W
@   if mk.rowwise then
@     for j = 0, KB - 1 do key_row(j, "    ") end
@   else
@     -- `_pf`: rows pf + j * pfs (j < pfn) of the stream ahead, asked for in L2 a line or so per step of head_dim
@     local steps, lpr = full / W, mk.prefetch_in_blocks and math.ceil(mk.D * kv.bytes / 64) or 0
@     for c = 0, full - 1, W do
@       local i = c / W
@       for l = math.floor(i * KB * lpr / steps), math.floor((i + 1) * KB * lpr / steps) - 1 do
@         local j, lc = math.floor(l / lpr), (l % lpr) * math.floor(64 / kv.bytes)
    if (pfn > $(I(j))) $(isa.prefetch_l2(add(add("pf", mul(j, "pfs")), lc)))
@       end
@       step(c, "    ")
@     end
@   end
@   scale_sums(store_all())
@   for rr = 0, LIVE - 1 do
@     for j = 0, KB - 1 do
@       local tail = {}
@       for c = full, mk.D - 1 do tail[#tail + 1] = string.format(" + q%d[%d] * %s", rr, c, kelem(j, c)) end
@       if #tail > 0 then
    s[$(sidx(rr, j))] += $(table.concat(tail):sub(4));
@       end
@     end
@   end
@ elseif mk.rowwise then
@   for j = 0, KB - 1 do
@     local fm = {}
@     for rr = 0, LIVE - 1 do fm[#fm + 1] = string.format("%s = %s;", acc(rr, j), isa.fma(acc(rr, j), isa.load("q" .. I(rr) .. " + c"), "kv")) end
    for (int c = 0; c + $(I(W)) <= $(DV); c += $(I(W))) { const $(V) kv = $(kload(j, "c")); $(table.concat(fm, " ")) }
@   end
@   scale_sums(store_all())
@   loop_tail("int c = " .. DV .. " / " .. I(W) .. " * " .. I(W))
@ else
    int c = 0;
    for (; c + $(I(W)) <= $(DV); c += $(I(W)))
@   step("c", "      ")
@   scale_sums(store_all())
@   loop_tail("")
@ end
  }
}


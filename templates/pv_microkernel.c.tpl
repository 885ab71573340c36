@ -- SPDX-License-Identifier: MIT
@ -- Register-blocked microkernels for one (ISA, head_dim, blocking). `mk` comes from gen/plan.lua.
@ -- Inside C code, a number from Lua is printed with I(); an index that is a C variable stays a name.
@ local V, W = isa.vtype, isa.width
@ local PR, PVV = mk.pr, mk.pvv
@ local LIVE = mk.live or PR -- rows computed: an edge block leaves O of its last PR - LIVE rows alone
@ -- P's strides: prefill keeps it transposed (key stride = the tile's row count), decode row-major
@ local PKS, PRS = mk.p_key_stride or "qs", mk.p_row_stride
@ local DV = mk.D and I(mk.D) or "d" -- head_dim in the loop form: a constant, or the generic kernel's argument
@ local attr = kvtype.attr(isa, mk.dtype)
@ local kv = kvtype.words(isa, mk.dtype, mk.D0 or mk.D) -- V as stored (decode reads the cache; prefill its fp32 tile)
@ -- one column block: LIVE rows x nv vectors of accumulators, one source line per row
@ local function pv_block(c0, nv, pf_here)
  {
@   for r = 0, LIVE - 1 do
@     local os = {}
@     for v = 0, nv - 1 do os[#os + 1] = string.format("o%d_%d = %s", r, v, isa.load(add("o", mul(r, "os"), c0, v * W))) end
    $(V) $(table.concat(os, ", "));
@   end
    if (rescale) {
@   -- each row's rescale is broadcast where it is used: eight held at once made gcc spill NEON's 8x12 block
@   for r = 0, LIVE - 1 do
@     local ms = {}
@     for v = 0, nv - 1 do ms[#ms + 1] = string.format("o%d_%d = %s;", r, v, isa.mul("o" .. I(r) .. "_" .. I(v), "a")) end
      { const $(V) a = $(isa.bcast(add("alpha", r))); $(table.concat(ms, " ")) }
@   end
    }
    for (int j = 0; j < n; ++j) {
      const $(kv.ctype) *restrict vj = v + j * vs;
@   if kv.scaled and not kv.row_scale then
      const float *restrict vsj = vsc + j * vss;
@   end
      const float *restrict pj = pt + $(mul("j", PKS));
@   if pf_here == "spread" then
@     -- the lines of the row ahead that start in this block's columns: the requests spread over every block
@     local per_line = math.floor(64 / kv.bytes)
@     local first = math.ceil(c0 / per_line) * per_line
@     if first < c0 + nv * W then
      if (j < pfn) {
@       for lc = first, c0 + nv * W - 1, per_line do
        $(isa.prefetch_l2("pf + j * pfs + " .. I(lc)))
@       end
      }
@     end
@   elseif pf_here then
      if (j < pfn)
        for (int c = 0; c < $(DV); c += 64 / (int)sizeof(*pf)) $(isa.prefetch_l2("pf + j * pfs + c"))
@   end
@   local vs = {}
@   for vv = 0, nv - 1 do vs[#vs + 1] = string.format("v%d = %s", vv, kv.load("vj", add(c0, vv * W), "vsj")) end
@   if isa.pin and LIVE > 1 then
@     local pins = {}
@     for vv = 0, nv - 1 do pins[#pins + 1] = isa.pin("v" .. I(vv)) end
      $(V) $(table.concat(vs, ", ")); /* in registers: each is used by $(I(LIVE)) rows */
      $(table.concat(pins, " "))
@   else
      const $(V) $(table.concat(vs, ", "));
@   end
@   for r = 0, LIVE - 1 do
@     local fm = {}
@     for vv = 0, nv - 1 do fm[#fm + 1] = string.format("o%d_%d = %s;", r, vv, isa.fma("o" .. I(r) .. "_" .. I(vv), "p", "v" .. I(vv))) end
      { const $(V) p = $(isa.bcast(add("pj", mul(r, PRS)))); $(table.concat(fm, " ")) }
@   end
    }
@   for r = 0, LIVE - 1 do
@     local sts = {}
@     for vv = 0, nv - 1 do sts[#sts + 1] = isa.store(add("o", mul(r, "os"), c0, vv * W), "o" .. I(r) .. "_" .. I(vv)) end
    $(table.concat(sts, " "))
@   end
  }
@ end
/* O[r][:] = alpha[r] · O[r][:] + Σ_j P[r][j] · V[j][:] for $(I(LIVE))$(LIVE < PR and (" (of a block of " .. I(PR) .. ")") or "") rows r and n keys j (alpha: the online-softmax
 * rescale, applied to the accumulators as they load). P[r][j] is at pt[j * $(I(PKS)) + r * $(I(PRS))].
 * Column blocks of $(I(PVV * W)) floats keep $(I(LIVE * PVV)) accumulators in registers while V streams by. */
static ATTNGEN_NOINLINE $(attr)void $(mk.pv_name)($(kv.row_scale and "" or "const ")float *restrict pt$(PKS == "qs" and ", ptrdiff_t qs" or ""), const float *restrict alpha,
    int n, const $(kv.ctype) *restrict v, ptrdiff_t vs$(kv.scaled and ", const float *restrict vsc, ptrdiff_t vss" or ""), float *restrict o, ptrdiff_t os$(mk.D and "" or ", int d")$(mk.prefetch and (", const " .. kv.ctype .. " *pf, ptrdiff_t pfs, int pfn") or ""))
{
@ if LIVE == 1 then
  (void)os; /* one row per block */
@ end
@ -- column blocks (a tail narrower than a vector has none: its loop rescales as it goes)
@ if not (mk.D and mk.unroll) or mk.D >= W then
@   local ones = {}
@   for r = 0, LIVE - 1 do ones[#ones + 1] = "alpha[" .. I(r) .. "] != 1.0f" end
  /* O is rescaled only when a row's max moved: most tiles of a long sequence leave every max, so their alpha
   * is exactly 1 (x * 1 = x, the same bits either way) */
  const int rescale = $(table.concat(ones, " || "));
@ end
@ if kv.row_scale then
  /* one scale per V row (the vectors are the bare integers): each coefficient times its row's scale, once for
   * every column block, in place (this call is the last to read these rows of P) */
  for (int j = 0; j < n; ++j) {
    const float sj = $(kv.row_scale_of("(vsc + j * vss)"));
    for (int r = 0; r < $(I(LIVE)); ++r) pt[$(add(mul("j", PKS), mul("r", PRS)))] *= sj;
  }
@ end
@ if mk.D and mk.unroll then
@   -- the block at column c asks for the row ahead: each block its own columns' lines ("spread"), or the first all
@   local function asks(c) return mk.prefetch == "spread" and "spread" or (mk.prefetch and c == 0) end
@   local c = 0
@   while c + PVV * W <= mk.D do
@     pv_block(c, PVV, asks(c)); c = c + PVV * W
@   end
@   if c + W <= mk.D then
@     local nv = math.floor((mk.D - c) / W)
@     pv_block(c, nv, asks(c)); c = c + nv * W
@   end
@   if c < mk.D then
  /* last $(I(mk.D - c)) columns: head_dim is not a multiple of the vector width */
  for (int r = 0; r < $(I(LIVE)); ++r)
    for (int c = $(I(c)); c < $(I(mk.D)); ++c) {
      float acc = o[r * os + c] * alpha[r];
      for (int j = 0; j < n; ++j) acc += pt[$(add(mul("j", PKS), mul("r", PRS)))] * $(kv.elem("v", "j * vs + c", "c", not kv.row_scale and "(vsc + j * vss)" or nil));
      o[r * os + c] = acc;
    }
@   end
@ else
  int c0 = 0;
  for (; c0 + $(I(PVV * W)) <= $(DV); c0 += $(I(PVV * W)))
@   pv_block("c0", PVV)
@   if PVV > 1 then
  for (; c0 + $(I(W)) <= $(DV); c0 += $(I(W)))
@     pv_block("c0", 1)
@   end
  for (int r = 0; r < $(I(LIVE)); ++r)
    for (int c = c0; c < $(DV); ++c) {
      float acc = o[r * os + c] * alpha[r];
      for (int j = 0; j < n; ++j) acc += pt[$(add(mul("j", PKS), mul("r", PRS)))] * $(kv.elem("v", "j * vs + c", "c", not kv.row_scale and "(vsc + j * vss)" or nil));
      o[r * os + c] = acc;
    }
@ end
}


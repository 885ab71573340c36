@ -- SPDX-License-Identifier: MIT
@ -- Register-blocked microkernels for one (ISA, head_dim, blocking). `mk` comes from gen/plan.lua.
@ -- Inside C code, a number from Lua is printed with I(); an index that is a C variable stays a name.
@ local V, W = isa.vtype, isa.width
@ local RV, KB = mk.rv, mk.kb
@ local QS = mk.qs or "qs" -- row stride of the Qᵀ and S tiles: a constant in specialized kernels
@ local QTS = mk.qts or QS -- Qᵀ's own row stride when it differs (decode: panels of W rows)
@ local attr = isa.attr and (isa.attr .. " ") or ""
@ -- pf_rows (decode, rows in the lanes): the caller's pfn (at most pf_rows) rows of head_dim floats at pf (row stride
@ -- pfs) asked for in L2, a line every few steps of the FMAs: asked for at once before the call, a 32-row panel's
@ -- 64 requests waited for fill buffers while no FMA ran (a shared prefix's pass, 0.87x).
@ local PF = mk.pf_rows
@ local LINE = 16 -- floats a 64-byte line
@ local LPR = PF and mk.D and math.ceil(mk.D / LINE) -- lines a row
@ -- spread over the unrolled steps (LPI lines an iteration of the loop over head_dim), else asked for at once
@ local spread_full = PF and mk.D and mk.unroll and mk.D <= mk.unroll
@ local LPI = PF and mk.D and mk.unroll and mk.D % mk.unroll == 0 and (PF * LPR * mk.unroll) % mk.D == 0 and
@   math.floor(PF * LPR * mk.unroll / mk.D)
@ local spread_loop = PF and mk.D and mk.unroll and mk.D > mk.unroll and LPI
@ -- the requests of `lines` lines spread over `steps` steps: step u makes those from first(u) to first(u + 1) - 1
@ local function first_line(u, lines, steps) return math.floor((u * lines + steps - 1) / steps) end
@ -- the request of line t of the loop's iteration `it` (a C expression; nil: the fully unrolled steps' line t)
@ local function ask(indent, it, t)
@   local row, col
@   if not it then
@     row, col = math.floor(t / LPR), (t % LPR) * LINE
@   elseif LPI % LPR == 0 then -- an iteration asks for whole rows
@     row, col = add(mul(it, math.floor(LPI / LPR)), math.floor(t / LPR)), (t % LPR) * LINE
@   else
@     local li = "(" .. add(mul(it, LPI), t) .. ")"
@     row, col = li .. " / " .. I(LPR), li .. " % " .. I(LPR) .. " * " .. I(LINE)
@   end
$(indent)if ($(I(row)) < pfn) $(isa.prefetch_l2(I(add("pf", mul(row, "pfs"), col))))
@ end
@ -- the lines of step u of `steps` in a run of `lines` lines (of iteration `it`, as ask's)
@ local function asks(indent, u, lines, steps, it)
@   for t = first_line(u, lines, steps), first_line(u + 1, lines, steps) - 1 do ask(indent, it, t) end
@ end
/* ST[j][r] = Σ_k QT[k][r] · K_j[k] for KB=$(I(KB)) keys j and $(I(RV * W)) query rows r (QT is the scaled Q tile,
 * transposed so rows are vector lanes$(mk.qts and (", row stride " .. I(mk.qts)) or "")); K rows are read in place, each element broadcast once per row vector. */
static ATTNGEN_NOINLINE $(attr)void $(mk.qk_name)(const float *restrict qt$(mk.qs and "" or ", ptrdiff_t qs"),
    const float *const *restrict krow, float *restrict st$(mk.D and "" or ", int d")$(PF and ", const float *pf, ptrdiff_t pfs, int pfn" or ""))
{
@ for j = 0, KB - 1 do
  const float *restrict k$(I(j)) = krow[$(I(j))];
@ end
@ for j = 0, KB - 1 do
@   local decl = {}
@   for v = 0, RV - 1 do decl[#decl + 1] = string.format("acc%d_%d = %s", j, v, isa.zero()) end
  $(V) $(table.concat(decl, ", "));
@ end
@ -- one step of head_dim: RV vectors of Qᵀ, then one line per key (broadcast, RV FMAs); `{` opens the step's scope
@ local function qk_step(k, indent)
@   local qs = {}
@   for v = 0, RV - 1 do
@     qs[#qs + 1] = string.format("const %s q%d = %s;", V, v, isa.load(add("qt", mul(k, QTS), v * W)))
@   end
$(indent){ $(table.concat(qs, " "))
@   for j = 0, KB - 1 do
@     local fm = {}
@     for v = 0, RV - 1 do
@       fm[#fm + 1] = string.format("acc%d_%d = %s;", j, v, isa.fma(string.format("acc%d_%d", j, v), "q" .. I(v), "kb"))
@     end
$(indent)  { const $(V) kb = $(isa.bcast(add("k" .. I(j), k))); $(table.concat(fm, " ")) }$(j == KB - 1 and " }" or "")
@   end
@ end
@ if PF and not spread_full and not spread_loop then
  for (int j = 0; j < pfn; ++j)
    for (int c = 0; c < $(mk.D and I(mk.D) or "d"); c += $(I(LINE))) $(isa.prefetch_l2("pf + j * pfs + c"))
@ end
@ if mk.D and not mk.unroll then
@   -- no unrolling asked for (e.g. scalar): a loop with a constant bound
  for (int k = 0; k < $(I(mk.D)); ++k)
@   qk_step("k", "    ")
@ elseif mk.D and mk.D <= mk.unroll then
@   -- fully unrolled over head_dim
@   for k = 0, mk.D - 1 do
@     if spread_full then asks("  ", k, PF * LPR, mk.D, nil) end
@     qk_step(k, "  ")
@   end
@ elseif mk.D then
@   -- head_dim beyond the full-unroll limit: a loop over chunks of mk.unroll, then the rest unrolled
@   local U, body = mk.unroll, mk.D - mk.D % mk.unroll
  for (int k = 0; k < $(I(body)); k += $(I(U))) {
@   for u = 0, U - 1 do
@     if spread_loop then asks("    ", u, LPI, U, div("k", U)) end
@     qk_step(add("k", u), "    ")
@   end
  }
@   for k = body, mk.D - 1 do
@     qk_step(k, "  ")
@   end
@ else
  int k = 0;
  for (; k + 4 <= d; k += 4) {
@   for u = 0, 3 do
@     qk_step(add("k", u), "    ")
@   end
  }
  for (; k < d; ++k)
@   qk_step("k", "    ")
@ end
@ for j = 0, KB - 1 do
@   local sts = {}
@   for v = 0, RV - 1 do sts[#sts + 1] = isa.store(add("st", mul(j, QS), v * W), "acc" .. I(j) .. "_" .. I(v)) end
  $(table.concat(sts, " "))
@ end
}


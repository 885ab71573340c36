@ -- SPDX-License-Identifier: MIT
@ -- Decode's P·V with a kv head's rows in the vector lanes (a step of many rows: a shared prefix's pass), the form
@ -- of its Q·Kᵀ there: Oᵀ[c][r] += P[j][r] · V[j][c], each V element broadcast to a panel of rows. `mk` comes from
@ -- gen/plan.lua (mk.pv_lanes, or its edge block of fewer columns); fp32 V only, as that Q·Kᵀ.
@ local V, W = isa.vtype, isa.width
@ local RV, CB = mk.rv, mk.cols
@ local PW = RV * W -- rows a panel: Oᵀ's row stride
@ local PS = mk.qs -- P's key stride (every kv head's rows side by side), a constant
@ local attr = isa.attr and (isa.attr .. " ") or ""
@ local function acc(c, v) return "o" .. I(c) .. "_" .. I(v) end
/* Oᵀ[c][r] = alpha[r] · Oᵀ[c][r] + Σ_j P[j][r] · V_j[c] for $(I(CB)) columns c and $(I(PW)) rows r (a panel of rows in the
 * lanes; Oᵀ's row stride $(I(PW)), P's key stride $(I(PS))), n keys j: each V element is broadcast once for the panel, read
 * from its row in place. alpha applies as the accumulators load, when `rescale`. Row j of pf (row stride pfs) is
 * asked for in L2 as key j is read, for j < pfn: a line of the stream's step ahead per key. */
static ATTNGEN_NOINLINE $(attr)void $(mk.name)(const float *restrict pt, const float *restrict alpha, int rescale, int n,
    const float *restrict v, ptrdiff_t vs, float *restrict ot$(mk.pf and ", const float *pf, ptrdiff_t pfs, int pfn" or ""))
{
@ for c = 0, CB - 1 do
@   local decl = {}
@   for v = 0, RV - 1 do decl[#decl + 1] = string.format("%s = %s", acc(c, v), isa.load(add("ot", c * PW + v * W))) end
  $(V) $(table.concat(decl, ", "));
@ end
  if (rescale) {
@ local al = {}
@ for v = 0, RV - 1 do al[#al + 1] = string.format("a%d = %s", v, isa.load(add("alpha", v * W))) end
    const $(V) $(table.concat(al, ", "));
@ for c = 0, CB - 1 do
@   local ms = {}
@   for v = 0, RV - 1 do ms[#ms + 1] = string.format("%s = %s;", acc(c, v), isa.mul(acc(c, v), "a" .. I(v))) end
    $(table.concat(ms, " "))
@ end
  }
  for (int j = 0; j < n; ++j) {
    const float *restrict vj = v + j * vs;
@ local ps = {}
@ for v = 0, RV - 1 do ps[#ps + 1] = string.format("p%d = %s", v, isa.load(add("pt", mul("j", PS), v * W))) end
    const $(V) $(table.concat(ps, ", "));
@ if mk.pf then
    if (j < pfn) $(isa.prefetch_l2("pf + j * pfs"))
@ end
@ for c = 0, CB - 1 do
@   local fm = {}
@   for v = 0, RV - 1 do fm[#fm + 1] = string.format("%s = %s;", acc(c, v), isa.fma(acc(c, v), "p" .. I(v), "b")) end
    { const $(V) b = $(isa.bcast(add("vj", c))); $(table.concat(fm, " ")) }
@ end
  }
@ for c = 0, CB - 1 do
@   local sts = {}
@   for v = 0, RV - 1 do sts[#sts + 1] = isa.store(add("ot", c * PW + v * W), acc(c, v)) end
  $(table.concat(sts, " "))
@ end
}


@ -- SPDX-License-Identifier: MIT
@ -- One attention kernel: flash-style online softmax over KV tiles (the algorithm, written once).
@ -- `kern` holds what is specialized (nil = read at run time: generic kernel), `plan` the work cut and blocking
@ -- (gen/plan.lua): its numbers are constants here, or C expressions of g, d and kvh in a generic kernel.
@ local V, W = isa.vtype, isa.width
@ local D = kern.D and I(kern.D) or "d"
@ local G = kern.G and I(kern.G) or "g"
@ local NK, RQK, PR = plan.keys, (plan.rv or 0) * W, plan.pr
@ local PW = (plan.pvv or 0) * W -- prefill P·V panel width
@ local causal, padded = feature("causal"), feature("kv_lens") -- true/false, or nil when decided at run time
@ -- attention features: true/false, or nil in a generic kernel (its values then say: 0 / NULL = off)
@ local window, softcap, sinks, alibi = attn("window"), attn("softcap"), attn("sinks"), attn("alibi")
@ local decode = kern.phase == "decode"
@ local columns = not decode or plan.columns -- the softmax runs down the columns of a transposed S
@ -- S transposed: its key stride (decode ms, prefill mp), passed when not a constant
@ local qs_arg = columns and not mk.qs and (decode and ", ms" or ", mp") or ""
@ local attr = kvtype.attr(isa, kern.kv_dtype)
@ local kv = kvtype.words(isa, decode and kern.kv_dtype or "f32", kern.D) -- decode reads the cache as stored
@ local generic = not kern.D
@ -- A paged cache (decode only; a paged prefill reads the runtime's gathered copy): row x of sequence b is row
@ -- x % P of page block_table[b][x / P], pages a batch stride apart. PS: log2 of the page size P.
@ local paged = decode and kern.page_size or nil
@ local PS = paged and math.floor(math.log(paged, 2) + 0.5) or nil
@ -- The offset of key row x (a C expression) in a cache whose strides are `sb` (page) and `ss` (row).
@ local function page_row(x, sb, ss)
@   return string.format("(ptrdiff_t)pages[(%s) >> %d] * %s + (ptrdiff_t)((%s) & %d) * %s", x, PS, sb, x, paged - 1, ss)
@ end
@ -- Row x's page in the pool and its row in that page (`pg<s>`, `in_page<s>`): one block-table read, shared by the row
@ -- and its scales (as pg<s> * page stride + in_page<s> * row stride).
@ local function page_split(x, s)
@   return string.format("pg%s = pages[%s >> %d], in_page%s = %s & %d", s, x, PS, s, x, paged - 1)
@ end
@ local page_of_x = paged and "const ptrdiff_t " .. page_split("x", "") .. ";"
@ -- The offset of the Q·Kᵀ block's key j (block at j0; a short block repeats the tile's last key) from a head's rows
@ -- whose strides are `sb` (page) and `ss` (row): through the block table on a paged cache.
@ local function block_key(sb, ss)
@   local x = "(j0 + j < n ? j0 + j : n - 1)"
@   if paged then return page_row("kt + " .. x, sb, ss) end
@   return "(ptrdiff_t)" .. x .. " * " .. ss
@ end
@ -- The Q·Kᵀ block's KB key offsets from a head's rows, once a block for every head, as scalars (`<name><j>` for each
@ -- { name, page stride, row stride } of `parts`): kept in an array, written an element at a time and read back as
@ -- one vector, they made each head's block wait for the stores to retire (h14/kv2/d64 decode 1.02-1.08x slower,
@ -- Emerald Rapids); recomputed for every head, a paged int8 block read the block table twice a key (0.96x).
@ local function block_offsets(ind, KB, parts)
@   local xs = {}
@   for j = 0, KB - 1 do
@     local x = string.format("(j0 + %d < n ? j0 + %d : n - 1)", j, j)
@     xs[#xs + 1] = string.format("x%d = %s%s", j, paged and "kt + " or "", x)
@   end
$(ind)const int $(table.concat(xs, ", ")); /* the block's keys (a short block repeats its last) */
@   if paged then
@     local pg = {}
@     for j = 0, KB - 1 do pg[#pg + 1] = page_split("x" .. j, j) end
$(ind)const ptrdiff_t $(table.concat(pg, ", "));
@   end
@   for _, part in ipairs(parts) do
@     local o = {}
@     for j = 0, KB - 1 do
@       if paged then
@         o[#o + 1] = string.format("%s%d = pg%d * %s + in_page%d * %s", part[1], j, j, part[2], j, part[3])
@       else
@         o[#o + 1] = string.format("%s%d = (ptrdiff_t)x%d * %s", part[1], j, j, part[3])
@       end
@     end
$(ind)const ptrdiff_t $(table.concat(o, ", "));
@   end
@ end
@ -- `base` plus each offset `<name><j>`: an initializer list
@ local function offset_list(base, name, KB)
@   local l = {}
@   for j = 0, KB - 1 do l[#l + 1] = string.format("%s + %s%d", base, name, j) end
@   return "{ " .. table.concat(l, ", ") .. " }"
@ end
@ -- The step `ahead` steps on from step `step` (a C expression): its tile's first key tk, whether it reads V (hv),
@ -- and its kv head h.
@ local function step_ahead(ind, step)
$(ind)const int s = $(step) + ahead_steps, wrap = s >= 2 * nh, hs = s - wrap * 2 * nh, tk = kt + (ahead_tiles + wrap) * nk;
$(ind)const int hv = hs >= nh, h = it->kvh0 + hs - hv * nh;
@ end
@ -- One head's rows (or their scales) of that step's tile: `ptr` the pool, `st` its strides, `row` its row stride; on a
@ -- paged cache the head's rows in page 0 (each row is then found through the block table).
@ local function step_rows(ptr, st, row)
@   if paged then return ptr .. " + h * " .. st .. ".head" end
@   return ptr .. " + b * " .. st .. ".batch + h * " .. st .. ".head + (ptrdiff_t)tk * " .. row
@ end
@ -- Decode on token-major rows of several heads (contiguous or paged) reads a tile as a stream of steps: each kv
@ -- head's K rows (Q·Kᵀ, head after head), then each head's V rows (P·V). A head's part of a token row is a few lines
@ -- of a row 2-16 KiB long, and the hardware prefetchers do not follow rows a token apart (nor a jump to a page
@ -- elsewhere): the step `step` (a C expression, 0 .. 2 nh - 1) asks for rows j0 .. j0 + nj - 1 of the step `ahead`
@ -- steps on (the next tile's after this tile's last) in L2, so that plan.stream_prefetch bytes stay in flight.
@ -- Rows contiguous per head read the same stream of steps (a step: one head's rows of a tile), each Q·Kᵀ key block
@ -- asking for its rows of the step ahead. A head-major cache's V rows are one long run per head, which the hardware
@ -- prefetchers follow; its 16- and 8-bit P·V blocks ask for the step after them as they read them (`_pf`,
@ -- gen/plan.lua, pf_target; asking in runs of 32-64 keys instead was 1.1x slower for fp32). On head-major pages a
@ -- head's run in a page is short, and after a jump to a page elsewhere the hardware prefetchers start over: each P·V
@ -- run's `_pf` blocks ask for the same rows of the step ahead (plan.page_run_prefetch: the 16- and 8-bit types, and
@ -- fp32 on pages of short runs; a kernel without `_pf` blocks asks per run).
@ -- Where the vocabulary has its blocks ask (prefetch_in_blocks), a specialized kernel's token-major Q·Kᵀ and P·V
@ -- blocks are `_pf` too (mk.prefetch_in_blocks): the same rows, a line or so per vector step of their FMAs.
@ -- `guard`: the C condition for asking (nil: always).
@ local function prefetch_stream(ind, step, j0, nj, guard)
@   if not plan.stream_prefetch then return end
$(ind)$(guard and "if (" .. guard .. ") " or ""){
@   step_ahead(ind .. "  ", step)
$(ind)  const int j1 = kend - tk < $(j0) + $(nj) ? kend - tk : $(j0) + $(nj); /* rows past the sequence's end: none */
$(ind)  if ($(j0) < j1) {
$(ind)    const $(kv.ctype) *rb = hv ? $(step_rows(kv.v_ptr, "a->v_stride", "vs"))
$(ind)                         : $(step_rows(kv.k_ptr, "a->k_stride", "ks"));
$(ind)    const ptrdiff_t rs = hv ? vs : ks$(paged and ", rp = hv ? a->v_stride.batch : a->k_stride.batch" or "");
@   if kv.scaled then
$(ind)    const float *sb = hv ? $(step_rows("a->v_scale", "a->v_scale_stride", "a->v_scale_stride.seq"))
$(ind)                     : $(step_rows("a->k_scale", "a->k_scale_stride", "a->k_scale_stride.seq"));
$(ind)    const ptrdiff_t ss = hv ? a->v_scale_stride.seq : a->k_scale_stride.seq$(paged and ", sp = hv ? a->v_scale_stride.batch : a->k_scale_stride.batch" or "");
@   end
$(ind)    for (int jr = $(j0); jr < j1; ++jr) {
@   if paged then
@     -- one block-table read per row, for the row and its scale
$(ind)      const int x = tk + jr;
$(ind)      $(page_of_x)
@   end
$(ind)      const $(kv.ctype) *r = rb + $(paged and "pg * rp + in_page * rs" or "jr * rs");
$(ind)      for (int c = 0; c < $(D); c += 64 / (int)sizeof(*r)) $(isa.prefetch_l2("r + c"))
@   if kv.scaled then
$(ind)      $(isa.prefetch_l2("sb + " .. (paged and "pg * sp + in_page * ss" or "jr * ss")))
@   end
$(ind)    }
$(ind)  }
$(ind)}
@ end
@ -- A step of token-major rows (rows of several heads, `!contig`), unless the plan leaves them to the hardware.
@ local function prefetch_token_major(ind, step, j0, nj)
@   if plan.prefetch_token_major then prefetch_stream(ind, step, j0, nj, "!contig") end
@ end
@ -- Which rows a `_pf` target is set for (pf_target's `rows`): the C test that picks them at run time, and whether
@ -- their scales are asked for at once with them (a line holds a run's scales; on rows contiguous per head alone
@ -- the row blocks' own stream covers them).
@ local PF_ROWS = {
@   contiguous  = { test = "if (contig) ", scales = false }, -- rows contiguous per head only
@   token_major = { test = "if (!contig) ", scales = true }, -- token-major rows only
@   any         = { test = "", scales = true },              -- either layout
@ }
@ -- The `_pf` blocks' target (pf, pfs, pfn): rows j0 .. j0 + nj - 1 (C expressions) of the stream's step `step` on
@ -- (nil: the V step's, nh + hh), which the first row block asks for in L2 as it reads its own rows, set where the
@ -- cache's rows are of the layout `rows` names (PF_ROWS; elsewhere pfn stays 0). On a paged cache only those in the
@ -- page of row j0 (a run's rows), with their scales.
@ local function pf_target(ind, j0, nj, rows, step)
@   local mode = PF_ROWS[rows]
$(ind)const $(kv.ctype) *pf = NULL;
$(ind)int pfn = 0;
$(ind)ptrdiff_t pfs = 0;
$(ind)$(mode.test){
@   step_ahead(ind .. "  ", step or "nh + hh")
@   -- x: the first row asked for (a contiguous cache's from the tile's first, j0 on)
@   local x = (paged or j0 ~= "0") and "x" or "tk"
@   if not paged and j0 ~= "0" then
$(ind)  const int x = tk + $(j0);
@   end
@   -- the offset of row x from a head's rows in page 0 (paged), for the rows (`st` the strides, `row` the row stride)
@   local function in_pages(st, row)
@     if paged then return " + pg * " .. st .. ".batch + in_page * " .. row end
@     return j0 ~= "0" and (" + (ptrdiff_t)" .. j0 .. " * " .. row) or ""
@   end
@   if paged then
$(ind)  const int x = tk + $(j0), room = $(I(paged)) - (x & $(I(paged - 1)));
@   end
$(ind)  pfn = kend - $(x) < $(nj) ? kend - $(x) : $(nj); /* rows past the sequence's end: none */
@   if paged then
$(ind)  if (pfn > room) pfn = room;
@   end
$(ind)  if (pfn > 0) {
@   if paged then
$(ind)    $(page_of_x)
@   end
$(ind)    pf = hv ? $(step_rows(kv.v_ptr, "a->v_stride", "vs"))$(in_pages("a->v_stride", "vs"))
$(ind)            : $(step_rows(kv.k_ptr, "a->k_stride", "ks"))$(in_pages("a->k_stride", "ks"));
$(ind)    pfs = hv ? vs : ks;
@   if kv.scaled and (paged or mode.scales) then
$(ind)    const ptrdiff_t ss = hv ? a->v_scale_stride.seq : a->k_scale_stride.seq;
$(ind)    const float *sb = hv ? $(step_rows("a->v_scale", "a->v_scale_stride", "ss"))$(in_pages("a->v_scale_stride", "ss"))
$(ind)                         : $(step_rows("a->k_scale", "a->k_scale_stride", "ss"))$(in_pages("a->k_scale_stride", "ss"));
$(ind)    for (ptrdiff_t c = 0; c < pfn * ss; c += 16) $(isa.prefetch_l2("sb + c"))
@   end
$(ind)  }
$(ind)}
@ end
@ -- Whether decode's P·V blocks take a `_pf` target (token-major ones asking themselves, or those of rows contiguous
@ -- per head), and for which rows (pf_target's `rows`): both layouts, or the one whose blocks ask.
@ local pv_asks = mk and (mk.prefetch_in_blocks or (mk.pv_contig and mk.pv_contig.prefetch))
@ local pv_rows = "contiguous"
@ if mk and mk.prefetch_in_blocks then
@   pv_rows = (not mk.pv_contig or mk.pv_contig.prefetch) and "any" or "token_major"
@ end
@ -- Decode's row blocks of `block` rows over a kv head's `rows`: `name` while whole blocks fit, then the edge block of
@ -- the remainder (a specialized kernel has the one-query step's edge: other remainders, steps of 2-8 queries, run a
@ -- whole block over zero-padded rows). args: the call's arguments, r0 the block's first row; ind: indentation.
@ local function row_blocks(ind, block, name, edges, args)
$(ind)int r0 = 0;
$(ind)for (; r0 + $(I(block)) <= rows; r0 += $(I(block)))
$(ind)  $(name)$(args)
@   if #edges > 0 then
$(ind)switch (rows - r0) { /* the last rows: an edge block computes only those */
$(ind)case 0: break;
@     for _, e in ipairs(edges) do
$(ind)case $(I(e.live)): $(e.name)$(args) break;
@     end
$(ind)default: $(generic and "break; /* every remainder has its edge */" or (name .. args .. " break; /* zero-padded rows */"))
$(ind)}
@   end
@ end
@ -- A row of head_dim floats from src to dst (C expressions): whole vectors, then the last elements one by one.
@ local function copy_row(ind, dst_at, src)
$(ind)float *restrict dst = $(dst_at);
$(ind)int c = 0;
$(ind)for (; c + $(I(W)) <= $(D); c += $(I(W))) $(isa.store("dst + c", isa.load(src .. " + c")))
$(ind)for (; c < $(D); ++c) dst[c] = $(src)[c];
@ end
@ -- Rows in the lanes: P·V of kv head hh over keys j0 .. j0 + nj - 1 of the tile (C expressions), V rows from `vrow`
@ -- (row stride vs), into Oᵀ panel after panel, block of columns after block (mk.pv_lanes, then its edge block);
@ -- `first`: the C condition for the rescale (nil: always). With the stream prefetch, the first panel asks for those
@ -- rows of the step ahead, each block the line that starts in its columns (a line per key: spread over the blocks).
@ local function pvt_panels(ind, j0, nj, vrow, first)
@   local pvt, PWL = mk.pv_lanes, plan.lanes.panel
@   if pvt.pf then
@     pf_target(ind, j0, nj, "any") -- (called on token-major rows only)
@   end
$(ind)for (int r0 = 0; r0 < rows; r0 += $(I(PWL))) {
$(ind)  const float *restrict al = alpha + hh * rows_pv + r0;
$(ind)  int rescale = 0;
$(ind)  $(first and "if (" .. first .. ") " or "")for (int r = 0; r < $(I(PWL)); ++r) rescale |= al[r] != 1.0f;
$(ind)  const float *restrict pt = st + $(j0 == "0" and "" or j0 .. " * ms + ")hh * rows_pv + r0;
$(ind)  float *restrict op = ot + r0 * dp;
@   local function call(cols, name)
@     if pvt.pf then
$(ind)    const int line = (c0 + 15) / 16 * 16, asks = r0 == 0 && pfn > 0 && line < c0 + $(I(cols)); /* 16 floats a line */
$(ind)    $(name)(pt, al, rescale, $(nj), $(vrow) + c0, vs, op + c0 * $(I(PWL)), asks ? pf + line : NULL, pfs, asks ? pfn : 0);
@     else
$(ind)    $(name)(pt, al, rescale, $(nj), $(vrow) + c0, vs, op + c0 * $(I(PWL)));
@     end
@   end
$(ind)  int c0 = 0;
$(ind)  for (; c0 + $(I(pvt.cols)) <= $(D); c0 += $(I(pvt.cols))) {
@   call(pvt.cols, pvt.name)
$(ind)  }
@   if pvt.edge then
$(ind)  { /* the last $(I(pvt.edge.cols)) columns */
@     call(pvt.edge.cols, pvt.edge.name)
$(ind)  }
@   end
$(ind)}
@ end
@ -- The arguments of a decode P·V block call over `nkeys` keys of the tile from key j0 (nil: the tile's first), V
@ -- rows from vbase, or (packed: the C name of a packed tile, row stride dp) from that copy; pv_args adds the `_pf`
@ -- blocks' target: pf, the C arguments of the rows to ask for as V's rows are read (nil, or packed: none).
@ local function pv_head(j0, nkeys, packed)
@   local s_at = columns and ("st + " .. (j0 and j0 .. " * ms + " or "") .. "hh * rows_pv + r0")
@     or ("st + (hh * rows_pv + r0) * ss" .. (j0 and " + " .. j0 or ""))
@   return "(" .. s_at .. qs_arg .. ", alpha + hh * rows_pv + r0, " .. nkeys .. ", " .. (packed and (packed .. ", dp") or "vbase, vs") ..
@     (kv.scaled and ", vsbase, a->v_scale_stride.seq" or "") .. ", ot + r0 * dp, dp" .. (kern.D and "" or ", d")
@ end
@ local function pv_args(j0, nkeys, pf, packed)
@   return pv_head(j0, nkeys, packed) .. ((mk.prefetch_in_blocks and ", " .. ((not packed and pf) or "NULL, 0, 0")) or "") .. ");"
@ end
@ -- Decode's P·V of kv head hh over `nkeys` keys of the tile from key j0, V rows from vbase (as pv_args's): on rows
@ -- contiguous per head (contig) the blocks that read each V row whole, so the head's rows stay one sequential
@ -- stream, else the token-major blocks.
@ local function pv_blocks(ind, j0, nkeys, pf)
@   local head, args = pv_head(j0, nkeys), pv_args(j0, nkeys, pf)
@   if mk.pv_contig then
@     local args_contig = mk.pv_contig.prefetch and (head .. ", " .. (pf or "NULL, 0, 0") .. ");") or (head .. ");")
$(ind)if (contig) { /* each V row whole, in address order: the head's rows stay one sequential stream */
@     row_blocks(ind .. "  ", mk.pv_contig.pr, mk.pv_contig.name, mk.pv_contig.edges, args_contig)
$(ind)} else {
@     row_blocks(ind .. "  ", PR, mk.pv_name, mk.pv_edges, args)
$(ind)}
@   else
@     row_blocks(ind, PR, mk.pv_name, mk.pv_edges, args)
@   end
@ end
@ -- The online softmax over the rows of S: R rows (RV: R rounded up to whole vectors; SS: S's key stride when S is
@ -- transposed). Prefill emits it per kv head; decode once, over every kv head's rows side by side.
@ local function softmax(R, RV, SS)
@ if not columns then
      /* Online softmax along each row of S (keys along the lanes): new max, rescale, P = exp(S - max). */
      for (int r = 0; r < $(R); ++r) {
        float *restrict srow = st + r * ss;
@   if causal == false then
        const int vis = n;
@   elseif causal then
        const int vis = masked ? (int)lim[r] : n;
@   else
        const int vis = causal && masked ? (int)lim[r] : n;
@   end
        $(V) s_max = $(isa.set1("-INFINITY"));
        for (int j = 0; j < n; j += $(I(W))) {
          const $(V) s = $(isa.mask_lanes(isa.load("srow + j"), "j", "vis"));
          s_max = $(isa.max("s_max", "s"));
        }
        const float m_new = attngen_maxf_(m[r], $(isa.hmax("s_max")));
        const float m_use = m_new == -INFINITY ? 0.0f : m_new;
        const $(V) m_vec = $(isa.set1("m_use"));
        $(V) sum = $(isa.zero());
        for (int j = 0; j < n; j += $(I(W))) {
          const $(V) p = $(isa.exp(isa.sub(isa.mask_lanes(isa.load("srow + j"), "j", "vis"), "m_vec")));
          $(isa.store("srow + j", "p"))
          sum = $(isa.add("sum", "p"));
        }
        alpha[r] = expf(m[r] - m_use);
        l[r] = l[r] * alpha[r] + $(isa.hsum("sum"));
        m[r] = m_new;
      }
@ else
      /* Online softmax down each column of S (one lane per query row): new max, rescale, P = exp(S - max). */
      for (int r0 = 0; r0 < $(RV); r0 += $(I(W))) {
        const $(V) m_old = $(isa.load("m + r0"));
        $(V) s_max = $(isa.set1("-INFINITY"));
@ if causal ~= false then
        const $(V) vis = $(isa.load("lim + r0"));
@ end
        for (int j = 0; j < n; ++j) {
          $(V) s = $(isa.load("st + j * " .. SS .. " + r0"));
@ if causal ~= false then
          if (masked) s = $(isa.mask_keys("s", "j", "vis"));
@ end
          s_max = $(isa.max("s_max", "s"));
        }
        const $(V) m_new = $(isa.max("m_old", "s_max"));
        const $(V) m_use = $(isa.select_zero_if_neginf("m_new"));
        const $(V) a_r = $(isa.exp(isa.sub("m_old", "m_use")));
        $(V) sum = $(isa.zero());
        for (int j = 0; j < n; ++j) {
          $(V) s = $(isa.load("st + j * " .. SS .. " + r0"));
@ if causal ~= false then
          if (masked) s = $(isa.mask_keys("s", "j", "vis"));
@ end
          const $(V) p = $(isa.exp(isa.sub("s", "m_use")));
          $(isa.store("st + j * " .. SS .. " + r0", "p"))
          sum = $(isa.add("sum", "p"));
        }
        $(isa.store("m + r0", "m_new"))
        $(isa.store("l + r0", isa.fma("sum", isa.load("l + r0"), "a_r")))
        $(isa.store("alpha + r0", "a_r"))
      }

@ end
@ end
@ -- What the scores of a tile go through between Q·Kᵀ and the softmax: soft-cap, ALiBi bias, the window's lower edge.
@ -- form: "prefill" (S [keys][mp], one kv head), "columns" (decode, S [keys][ms]) or "rows" (decode, S [ms][keys]).
@ local function score_passes(form, ind)
@   local at = form == "rows" and "R * ss + j" or (form == "columns" and "j * ms + R" or "j * mp + R")
@   local nrows = form == "prefill" and "rows_qk" or (form == "columns" and "rows_all_v" or "rows_all")
@   if softcap ~= false then
$(ind)$(softcap and "{" or "if (softcap > 0.0f) {") /* soft-cap: s = softcap * tanh(s / softcap) */
$(ind)  const $(V) cap = $(isa.set1("softcap")), inv_cap = $(isa.set1("1.0f / softcap"));
@     if form == "rows" then
$(ind)  for (int R = 0; R < $(nrows); ++R)
$(ind)    for (int j = 0; j < n; j += $(I(W))) $(isa.store("st + " .. at, isa.mul("cap", isa.tanh(isa.mul(isa.load("st + " .. at), "inv_cap")))))
@     else
$(ind)  for (int j = 0; j < n; ++j)
$(ind)    for (int R = 0; R < $(nrows); R += $(I(W))) $(isa.store("st + " .. at, isa.mul("cap", isa.tanh(isa.mul(isa.load("st + " .. at), "inv_cap")))))
@     end
$(ind)}
@   end
@   if alibi ~= false then
$(ind)$(alibi and "{" or "if (a->alibi_slopes) {") /* ALiBi: s += slope of the row's head * (key - the row's position) */
@     if form == "rows" then
$(ind)  for (int R = 0; R < $(nrows); ++R)
$(ind)    for (int j = 0; j < n; ++j) st[$(at)] += slope[R] * ((float)(kt + j) - qpos[R]);
@     else
$(ind)  for (int j = 0; j < n; ++j) {
$(ind)    const $(V) key = $(isa.set1("(float)(kt + j)"));
$(ind)    for (int R = 0; R < $(nrows); R += $(I(W)))
$(ind)      $(isa.store("st + " .. at, isa.fma(isa.load("st + " .. at), isa.load("slope + R"), isa.sub("key", isa.load("qpos + R")))))
$(ind)  }
@     end
$(ind)}
@   end
@   if window ~= false then
$(ind)if (kt < win_last) /* a row's window starts inside this tile: its keys below it (not sink tokens) are hidden */
@     if form == "prefill" then
$(ind)  for (int R = 0; R < rows; ++R) {
$(ind)    const int lo = q0 + R / $(G) + offset + 1 - window;
@     else
$(ind)  for (int R0 = 0; R0 < rows_all; R0 += rows_pv)
$(ind)    for (int r = 0; r < rows; ++r) {
$(ind)    const int R = R0 + r, lo = q0 + r / $(G) + offset + 1 - window;
@     end
$(ind)    for (int j = kt < sink_keys ? sink_keys - kt : 0; j < n && kt + j < lo; ++j) st[$(at)] = -INFINITY;
$(ind)  }
@   end
@ end
@ if generic then
/* The work cut of $(kern.name) for a bound shape: the plan's formulas, evaluated at run time. */
static void $(kern.name)__work(const attngen_shape *shape, attngen_work *w)
{
  const int g = shape->heads / shape->kv_heads, d = shape->head_dim, kvh = shape->kv_heads;
  w->q_tile = $(I(plan.q_tile));
  w->kv_heads_per_item = $(I(plan.kv_heads_per_item));
  w->row_stride = $(I(plan.mp));
  w->keys_per_tile = $(I(plan.keys));
  w->scratch_floats = $(I(plan.scratch.total));
  w->split_max = $(I(plan.split.max));
  w->split_min_keys = $(I(plan.split.min_keys));
  w->split_align = $(I(plan.split.align));
  w->split_below_batch = $(I(plan.split.below_batch));
  w->pack_kv_min_q = $(I(plan.pack_kv_min_q));
  w->head_split_min_bytes = $(I(plan.head_split.min_bytes));
  w->head_split_min_flop = $(I(plan.head_split.min_flop));
@   if not decode then
  (void)kvh; /* a prefill item covers one kv head */
@   end
}

@ end
/* $(kern.name): $(plan.describe) */
static $(attr)void $(kern.name)(const attngen_kernel *kernel, const attngen_args *a, const attngen_item *it, float *scratch)
{
@ if generic then
  const int g = kernel->shape.heads / kernel->shape.kv_heads, d = kernel->shape.head_dim, kvh = kernel->shape.kv_heads;
  const unsigned features = attngen_mask_features(kernel->shape.mask);
  const int causal = (features & ATTNGEN_FEATURE_CAUSAL) != 0, padded = (features & ATTNGEN_FEATURE_KV_LENS) != 0;
  (void)kvh;
@ else
  (void)kernel; /* everything about the shape is a constant here */
@ end
@ if not decode then
  const ptrdiff_t mp = $(I(plan.mp)); /* row stride of the Qᵀ and S tiles (largest item, padded) */
@ end
  const int rows = $(G) * (it->q1 - it->q0);          /* row r = (query q0 + r / G, q head r % G of the group) */
@ if decode then
  const int rows_pv = (int)attngen_round_up((size_t)rows, $(I(plan.row_align))); /* rows computed (zero-padded) */
@   if not columns then
  const ptrdiff_t ss = $(I(plan.keys_padded));        /* S/P row stride: keys of a tile, padded */
@   end
@ else
  const int rows_pv = (int)attngen_round_up((size_t)rows, $(I(PR)));     /* P·V row blocks */
  const int rows_qk = (int)attngen_round_up((size_t)rows_pv, $(I(RQK))); /* Q·Kᵀ row blocks cover them */
@ end
  const ptrdiff_t dp = $(I(plan.dp));
  const int nh = it->kvh1 - it->kvh0;                 /* kv heads of this item, each with its own state */
@ if decode then
  /* Every kv head's rows side by side, row R = hh * rows_pv + r, so one softmax pass serves all heads (a group of
   * 4 fills half a vector alone): S, running max and sum, rescale, visible keys; per kv head: Q tile, O */
@   if columns then
  const ptrdiff_t ms = $(I(plan.scratch.ms));         /* rows of all the item's heads, padded: S's key stride */
@   end
  const int rows_all = nh * rows_pv;
@   if columns then
  const int rows_all_v = (int)attngen_round_up((size_t)rows_all, $(I(W))); /* the softmax's rows: whole vectors */
@   end
  float *restrict st = scratch;                       /* scores, then P: $(columns and "[keys][ms]" or "[ms][keys]") */
  float *restrict m_all = scratch + $(I(plan.scratch.m_offset)), *restrict l_all = scratch + $(I(plan.scratch.l_offset));
@ else
  /* shared: S tile, packed V tile, then per-row arrays; per kv head: Qᵀ tile, O accumulator, running max and sum */
  float *restrict st = scratch;                       /* scores, then P: [keys][mp] */
  float *restrict vt = scratch + $(I(plan.scratch.vt_offset)); /* packed V tile [keys][dp] */
@ end
  float *restrict alpha = scratch + $(I(plan.scratch.alpha_offset)); /* rescale per row */
@ if causal ~= false then
  float *restrict lim = scratch + $(I(plan.scratch.lim_offset)); /* visible keys of this tile per row */
  int *restrict lim_abs = (int *)(scratch + $(I(plan.scratch.lim_abs_offset))); /* exclusive key limit per row */
@ end
@ if alibi ~= false then
  float *restrict slope = scratch + $(I(plan.scratch.slope_offset)); /* ALiBi: each row's slope and position */
  float *restrict qpos = scratch + $(I(plan.scratch.qpos_offset));
@ end
  float *restrict state = scratch + $(I(plan.scratch.state_offset)); /* per kv head: Q tile, O$(decode and "" or ", max, sum") */
@ if decode then
  /* per kv head: Q, then O, of this item's rows. The scratch is sized for q_len = $(I(spec.phase.decode.max_q));
   * laid out for that, a one-query step put each head's Q and O 16-32 KiB apart, in the same cache sets
   * (h64/kv8: its per-call setup took twice as long) */
  const ptrdiff_t q_floats = (ptrdiff_t)attngen_round_up((size_t)rows_pv * (size_t)dp, 16);
  const ptrdiff_t state_floats = 2 * q_floats;
@   if plan.lanes then
  /* Q·Kᵀ with each kv head's rows in the vector lanes when they fill whole panels (no horizontal sums) */
  const int lanes = rows >= $(I(plan.lanes.min_rows)) && rows % $(I(plan.lanes.panel)) == 0 && rows_pv == rows;
@   end
@ else
  const ptrdiff_t state_floats = $(I(plan.scratch.state_floats));
  const ptrdiff_t q_floats = $(I(plan.scratch.q_floats));
@ end
  const float scale = a->scale; /* resolved by the runtime: args, else the table's params, else 1/sqrt(head_dim) */
  const int b = it->b, q0 = it->q0;
  const ptrdiff_t ks = a->k_stride.seq, vs = a->v_stride.seq;
@ if causal ~= false then
  const int offset = it->causal_offset; /* causal: query i sees keys j <= i + offset (the runtime: kv_len - q_len) */
@ end

@ local rows_used = decode and "rows_pv" or "rows_qk" -- rows packed: decode's dot products, prefill's Q·Kᵀ blocks
  /* Pack Q·scale per kv head ($(decode and "row-major, for dot products" or "transposed: rows along the lanes")). Rows past
   * `rows` up to the block size are zero so they stay finite; they are never stored. */
  for (int hh = 0; hh < nh; ++hh) {
    float *restrict qt = state + hh * state_floats, *restrict ot = qt + q_floats;
@ if not decode then
    float *restrict m = ot + mp * dp, *restrict l = m + mp;
@ end
    const float *qbase = a->q + b * a->q_stride.batch + (it->kvh0 + hh) * $(G) * a->q_stride.head;
@ local qix = decode and "r * dp + k" or "k * mp + r"
@ local qrow_at = "qbase + (q0 + r / " .. G .. ") * a->q_stride.seq + (r % " .. G .. ") * a->q_stride.head"
@ local tpack = not decode and isa.transpose_scaled -- Qᵀ by in-register transposes (an optional vocabulary word)
@ -- Row r of Q, rotated by RoPE and scaled, into y (row-major, contiguous); scale_v = scale in every lane.
@ local function rope_row(y)
        const attngen_rope *rope = &kernel->params.rope;
        const int half = rope->rotary_dim / 2;
        const float *qrow = $(qrow_at);
        const float *cs = it->rope_cs + (r / $(G)) * rope->rotary_dim, *sn = cs + half;
        float *restrict y = $(y);
        /* the half style's pairs a vector at a time, attngen_rope_rotate's arithmetic (gcc -O2 leaves its loop
         * scalar, which then cost more than the whole Q pack); it does the rest: the last pairs, the interleaved
         * style, the dims past rotary_dim */
        int p = 0;
        if (rope->style != ATTNGEN_ROPE_INTERLEAVED)
          for (; p + $(I(W)) <= half; p += $(I(W))) {
            const $(V) x0 = $(isa.load("qrow + p")), x1 = $(isa.load("qrow + half + p"));
            const $(V) c = $(isa.load("cs + p")), s = $(isa.load("sn + p"));
            $(isa.store("y + p", isa.mul(isa.sub(isa.mul("x0", "c"), isa.mul("x1", "s")), "scale_v")))
            $(isa.store("y + half + p", isa.mul(isa.add(isa.mul("x1", "c"), isa.mul("x0", "s")), "scale_v")))
          }
        attngen_rope_rotate(rope, cs, qrow, $(D), y, 1, scale, p);
@ end
@ if decode then
    const $(V) scale_v = $(isa.set1("scale"));
@ end
@ if tpack then
    /* Qᵀ by blocks of $(I(W)) rows x $(I(W)) columns, transposed in registers (element by element, each was a store of its
     * own: 6-10% of a head_dim-64 prefill at S=512). Lanes past `rows` are zeroed below. */
@   local src_scale = "scale"
@   if rope ~= false then
    /* With RoPE, each row is first rotated into O's space (row-major: the rotation's stores are contiguous; O is
     * cleared below), and the blocks are transposed from there. */
    if (it->rope_cs) {
      const $(V) scale_v = $(isa.set1("scale"));
      for (int r = 0; r < rows; ++r) {
@     rope_row("ot + r * dp")
      }
    }
    const float src_scale = it->rope_cs ? 1.0f : scale;
@     src_scale = "src_scale"
@   end
    for (int r0 = 0; r0 < rows; r0 += $(I(W))) {
      const float *src[$(I(W))];
      for (int i = 0; i < $(I(W)); ++i) {
        const int r = r0 + i < rows ? r0 + i : rows - 1;
        src[i] = $(rope ~= false and "it->rope_cs ? ot + r * dp : " or "")$(qrow_at);
      }
      int k0 = 0;
      for (; k0 + $(I(W)) <= $(D); k0 += $(I(W))) $(isa.transpose_scaled("src", "k0", src_scale, "qt + k0 * mp + r0", "mp"))
      for (; k0 < $(D); ++k0)
        for (int i = 0; i < $(I(W)); ++i) qt[k0 * mp + r0 + i] = src[i][k0] * $(src_scale);
    }
@ end
    for (int r = 0; r < $(rows_used); ++r) {
      if (r >= rows) { /* padding */
        for (int k = 0; k < $(D); ++k) qt[$(qix)] = 0.0f;
      }
@ if rope ~= false and decode then
      else if (it->rope_cs) { /* RoPE while packing: cos/sin of this query's position (the runtime's, once per token) */
@   rope_row("qt + r * dp")
      }
@ elseif rope ~= false and not tpack then
      else if (it->rope_cs) { /* RoPE while packing: cos/sin of this query's position (the runtime's, once per token) */
        const float *qrow = $(qrow_at);
        const float *cs = it->rope_cs + (r / $(G)) * kernel->params.rope.rotary_dim;
        attngen_rope_rotate(&kernel->params.rope, cs, qrow, $(D), qt + r, mp, scale, 0);
      }
@ end
@ if decode then
      else { /* row-major: a scaled copy, a vector at a time */
        const float *qrow = $(qrow_at);
        float *restrict y = qt + r * dp;
        int k = 0;
        for (; k + $(I(W)) <= $(D); k += $(I(W))) $(isa.store("y + k", isa.mul(isa.load("qrow + k"), "scale_v")))
        for (; k < $(D); ++k) y[k] = qrow[k] * scale;
      }
@ elseif not tpack then
      else {
        const float *qrow = $(qrow_at);
        for (int k = 0; k < $(D); ++k) qt[$(qix)] = qrow[k] * scale;
      }
@ end
@ if not decode then
      m[r] = -INFINITY;
      l[r] = 0.0f;
@ end
    }
@ if decode and plan.lanes then
@   local PW = plan.lanes.panel
    if (lanes) { /* rows in the lanes: Qᵀ in panels of $(I(PW)) rows (row stride $(I(PW))), through O's space */
@   if isa.transpose_scaled then
      for (int r0 = 0; r0 < rows; r0 += $(I(W))) { /* $(I(W)) rows x $(I(W)) columns a block, transposed in registers */
        const float *src[$(I(W))];
        for (int i = 0; i < $(I(W)); ++i) src[i] = qt + (r0 + i) * dp;
        float *restrict dst = ot + (r0 / $(I(PW))) * $(I(kern.D * PW)) + r0 % $(I(PW));
        int k0 = 0;
        for (; k0 + $(I(W)) <= $(D); k0 += $(I(W))) $(isa.transpose_scaled("src", "k0", "1.0f", "dst + k0 * " .. I(PW), I(PW)))
        for (; k0 < $(D); ++k0)
          for (int i = 0; i < $(I(W)); ++i) dst[k0 * $(I(PW)) + i] = src[i][k0];
      }
@   else
      for (int r = 0; r < rows; ++r)
        for (int k = 0; k < $(D); ++k) ot[(r / $(I(PW))) * $(I(kern.D * PW)) + k * $(I(PW)) + r % $(I(PW))] = qt[r * dp + k];
@   end
      memcpy(qt, ot, sizeof(float) * (size_t)rows * $(D));
    }
@ end
    memset(ot, 0, sizeof(float) * (size_t)rows_pv * (size_t)dp);
  }
@ if decode then
  for (int R = 0; R < $(columns and "rows_all_v" or "rows_all"); ++R) {
    m_all[R] = -INFINITY;
    l_all[R] = 0.0f;
@   if causal ~= false then
    lim_abs[R] = INT_MAX; /* padding rows of each head, and rows past rows_all: no limit */
@   end
  }
@   if causal ~= false then
  /* each kv head's rows, head by head (deriving a row's head and row from R % rows_pv cost an integer division
   * per row: h32/kv8/d128's per-call setup went from 7.2-8.7k to 5.6-6.1k TSC ticks without it) */
  for (int R0 = 0; R0 < rows_all; R0 += rows_pv)
    for (int r = 0; r < rows; ++r) lim_abs[R0 + r] = q0 + r / $(G) + offset + 1;
@   end
  /* The softmax reads every row of S$(columns and " (whole vectors of rows)" or ""): the rows no Q·Kᵀ block computes (each
   * head's rows past its last block$(columns and ", the lanes past rows_all" or "")) must hold numbers */
  {
@   if plan.rb_contig == plan.rb then
    const int rows_dot = (int)attngen_round_up((size_t)rows, $(I(plan.rb)));
@   else -- the rows both Q·Kᵀ forms compute (row-wise blocks are rb_contig rows)
    const int rows_tm = (int)attngen_round_up((size_t)rows, $(I(plan.rb))), rows_rw = (int)attngen_round_up((size_t)rows, $(I(plan.rb_contig)));
    const int rows_dot = rows_tm < rows_rw ? rows_tm : rows_rw;
@   end
    for (int j = 0; j < $(I(plan.keys_padded)); ++j) {
      for (int R0 = 0; R0 < rows_all; R0 += rows_pv)
        for (int r = rows_dot; r < rows_pv; ++r) st[$(columns and "j * ms + R0 + r" or "(R0 + r) * ss + j")] = 0.0f;
@   if columns then
      for (int R = rows_all; R < rows_all_v; ++R) st[j * ms + R] = 0.0f;
@   end
    }
  }
@ elseif causal ~= false then
  for (int r = 0; r < $(rows_used); ++r) lim_abs[r] = r < rows ? q0 + r / $(G) + offset + 1 : INT_MAX;
@ end

  /* Keys this item can see at all: its KV range, the sequence's valid length, the last row's causal limit. */
  int kend = it->k1;
@ if padded == nil then
  if (padded && a->kv_lens[b] < kend) kend = a->kv_lens[b];
@ elseif padded then
  if (a->kv_lens[b] < kend) kend = a->kv_lens[b];
@ end
@ if causal == nil then
  const int diag_first = q0 + offset + 1; /* keys below this are visible to every row of the item */
  if (causal && it->q1 + offset < kend) kend = it->q1 + offset;
@ elseif causal then
  const int diag_first = q0 + offset + 1; /* keys below this are visible to every row of the item */
  if (it->q1 + offset < kend) kend = it->q1 + offset;
@ end
@ if window ~= false then
  /* Sliding window (0: none): row r sees keys from its causal limit - window on, and the first sink_keys keys. The
   * keys [hide0, hide1) are outside every row's window: never read. Tiles from win_last down need the lower mask. */
  const int window = a->window, sink_keys = window ? a->sink_tokens : 0;
  int hide0 = it->k0 > sink_keys ? it->k0 : sink_keys;
  if (hide0 > kend) hide0 = kend;
  int hide1 = window ? q0 + offset + 1 - window : hide0;
  if (hide1 > kend) hide1 = kend;
  if (hide1 < hide0) hide1 = hide0;
  const int win_last = window ? it->q1 + offset - window : INT_MIN;
@ end
@ if softcap ~= false then
  const float softcap = a->softcap; /* resolved by the runtime: args, else the table's; 0: none */
@ end
@ if alibi ~= false then
  $(alibi and "{" or "if (a->alibi_slopes) {") /* ALiBi: each row's slope (of its q head) and position, as floats (exact below 2^24) */
    for (int R = 0; R < $(decode and (columns and "rows_all_v" or "rows_all") or "rows_qk"); ++R) {
@   if decode then
      const int hh = R / rows_pv, r = R % rows_pv;
@   else
      const int hh = 0, r = R; /* a prefill item holds one kv head */
@   end
      const int live = hh < nh && r < rows;
      slope[R] = live ? a->alibi_slopes[(it->kvh0 + hh) * $(G) + r % $(G)] : 0.0f;
      qpos[R] = live ? (float)(q0 + r / $(G) + it->causal_offset) : 0.0f;
    }
  }
@ end

@ local tile = I(NK) -- keys per tile: the plan's, or (decode) chosen by the layout below
@ if decode then
  /* K and V rows contiguous per kv head (seq strides = head_dim: a head-major cache, or one kv head): tiles of
   * $(I(plan.keys_contig)) keys, each head's K rows read in address order (row-wise Q·Kᵀ). Token-major rows of several heads:
   * tiles of $(I(NK)), read a vector of each key in turn (head-major cache, MHA h32/d128, kv_len 4096: 2x faster) */
  const int contig = ks == $(D) && vs == $(D);
@   if plan.lanes and plan.lanes.keys then
  const int nk = contig ? $(I(plan.keys_contig)) : lanes ? $(I(plan.lanes.keys)) : $(I(NK)); /* rows in the lanes: tiles of whole key blocks */
@   else
  const int nk = contig ? $(I(plan.keys_contig)) : $(I(NK));
@   end
@   if plan.stream_prefetch then
  /* steps of the token-major stream between a step and the rows it asks for (prefetch_stream): a step is one kv
   * head's rows of a tile, 2 nh steps a tile; as whole tiles and steps, so the hot loop does not divide */
  const int ahead = 1 + ($(I(plan.stream_prefetch)) - 1) / (nk * $(D) * (int)sizeof(*$(kv.k_ptr)));
  const int ahead_tiles = ahead / (2 * nh), ahead_steps = ahead % (2 * nh);
@   end
@   if paged then
  const int32_t *restrict pages = a->pages.block_table + (ptrdiff_t)b * a->pages.max_pages; /* this sequence's pages */
@   end
@   tile = "nk"
@ end
@ if window ~= false then
  for (int kt = it->k0 < hide0 ? it->k0 : hide1, n; kt < kend; kt = kt + n == hide0 ? hide1 : kt + n) {
    n = (kt < hide0 ? hide0 : kend) - kt;
    if (n > $(tile)) n = $(tile);
@ else
  for (int kt = it->k0; kt < kend; kt += $(tile)) {
    const int n = kend - kt < $(tile) ? kend - kt : $(tile);
@ end
@ if causal == nil then
    const int masked = causal && kt + n > diag_first; /* only tiles crossing the diagonal need a mask */
@ elseif causal then
    const int masked = kt + n > diag_first; /* only tiles crossing the diagonal need a mask */
@ end
@ if causal ~= false then
    if (masked)
      for (int r = 0; r < $(decode and (columns and "rows_all_v" or "rows_all") or rows_used); ++r) {
        const int vis = lim_abs[r] - kt;
        lim[r] = (float)(vis < 0 ? 0 : vis > n ? n : vis);
      }
@ end
@ if decode then
    /* S = Q·Kᵀ of every kv head, by blocks of keys; a short last block repeats its last key (masked below).
     * Contiguous rows: head after head, each head's blocks of $(I(plan.kb_contig)) in order. Else: blocks of $(I(plan.kb)), block after
     * block, each block's token rows head after head. */
@   local s_at = columns and "st + j0 * ms + hh * rows_pv + r0" or "st + (hh * rows_pv + r0) * ss + j0"
@   local function qk_call(extra) return "(qt + r0 * dp, krow, " .. (kv.scaled and "ksrow, " or "") .. s_at .. (kern.D and "" or ", d, dp") .. qs_arg .. (extra or "") .. ");" end
@   local qk_args = qk_call()
@   if paged then
    /* paged: each key's row from its page (below), so a tile spans pages and is cut as a contiguous cache's is */
    const $(kv.ctype) *kbase = $(kv.k_ptr) + it->kvh0 * a->k_stride.head;
@     if kv.scaled then
    const float *ksbase = a->k_scale + it->kvh0 * a->k_scale_stride.head;
@     end
@   else
    const $(kv.ctype) *kbase = $(kv.k_ptr) + b * a->k_stride.batch + it->kvh0 * a->k_stride.head + (ptrdiff_t)kt * ks;
@     if kv.scaled then
    /* the K rows' scales: int8 elements are converted and scaled as they are loaded */
    const float *ksbase = a->k_scale + b * a->k_scale_stride.batch + it->kvh0 * a->k_scale_stride.head + (ptrdiff_t)kt * a->k_scale_stride.seq;
@     end
@   end
@   if plan.lanes then
    if (lanes) { /* each kv head's rows in the lanes, a Qᵀ panel at a time; keys in blocks, head after head */
      for (int j0 = 0; j0 < n; j0 += $(I(plan.lanes.kb))) {
@   block_offsets("        ", plan.lanes.kb, { { "koff", "a->k_stride.batch", "ks" } })
        for (int hh = 0; hh < nh; ++hh) {
          const float *restrict qt = state + hh * state_floats;
          const float *kh = kbase + hh * a->k_stride.head;
          const float *krow[$(I(plan.lanes.kb))] = $(offset_list("kh", "koff", plan.lanes.kb));
@   if plan.prefetch_lanes then
          /* the first panel asks for the block's rows of the step ahead among its FMAs */
@     pf_target("          ", "j0", I(plan.lanes.kb), "token_major", "hh")
@   end
          for (int r0 = 0; r0 < rows; r0 += $(I(plan.lanes.panel)))
            $(mk.qk_lanes.name)(qt + r0 * $(I(kern.D)), krow, st + j0 * ms + hh * rows_pv + r0$(plan.prefetch_lanes and ", pf, pfs, r0 == 0 ? pfn : 0" or ""));
        }
      }
    } else
@   end
    if (contig) {
      for (int hh = 0; hh < nh; ++hh) {
        const float *restrict qt = state + hh * state_floats;
        const $(kv.ctype) *kh = kbase + hh * a->k_stride.head;
@   if kv.scaled then
        const float *ksh = ksbase + hh * a->k_scale_stride.head;
@   end
        for (int j0 = 0; j0 < n; j0 += $(I(plan.kb_contig))) {
@   prefetch_stream("          ", "hh", "j0", I(plan.kb_contig))
          const $(kv.ctype) *krow[$(I(plan.kb_contig))];
          for (int j = 0; j < $(I(plan.kb_contig)); ++j) krow[j] = kh + $(block_key("a->k_stride.batch", "ks"));
@   if kv.scaled then
          const float *ksrow[$(I(plan.kb_contig))];
          for (int j = 0; j < $(I(plan.kb_contig)); ++j) ksrow[j] = ksh + $(block_key("a->k_scale_stride.batch", "a->k_scale_stride.seq"));
@   end
@   row_blocks("          ", plan.rb_contig, mk.qk_rowwise.name, mk.qk_rowwise.edges, qk_args)
        }
      }
    } else {
      for (int j0 = 0; j0 < n; j0 += $(I(plan.kb))) {
@   block_offsets("        ", plan.kb, kv.scaled and { { "koff", "a->k_stride.batch", "ks" },
@     { "ksoff", "a->k_scale_stride.batch", "a->k_scale_stride.seq" } } or { { "koff", "a->k_stride.batch", "ks" } })
        for (int hh = 0; hh < nh; ++hh) {
          const float *restrict qt = state + hh * state_floats;
          /* each head's row pointers from its own base: stepping one past the last head could overflow with the
           * largest strides the runtime accepts (UBSan, make test-fuzz) */
          const $(kv.ctype) *kh = kbase + hh * a->k_stride.head;
          const $(kv.ctype) *krow[$(I(plan.kb))] = $(offset_list("kh", "koff", plan.kb));
@   if mk.prefetch_in_blocks then
@     pf_target("          ", "j0", I(plan.kb), "token_major", "hh")
@   else
@     prefetch_token_major("          ", "hh", "j0", I(plan.kb))
@   end
@   if kv.scaled then
          const float *ksh = ksbase + hh * a->k_scale_stride.head;
          const float *ksrow[$(I(plan.kb))] = $(offset_list("ksh", "ksoff", plan.kb));
@   end
@   row_blocks("          ", plan.rb, mk.qk_name, mk.qk_edges,
@     mk.prefetch_in_blocks and qk_call(", pf, pfs, r0 == 0 ? pfn : 0") or qk_args)
        }
      }
    }
@   score_passes(columns and "columns" or "rows", "    ")
    {
      float *restrict m = m_all, *restrict l = l_all;
@   softmax("rows_all", "rows_all_v", "ms")
    }
    /* Then P·V of every kv head. Q·Kᵀ above read the tile's K rows of every head, this reads its V rows: one
     * window of token rows at a time, not K and V alternating head by head (beyond the last-level cache that was
     * 1.08-1.15x slower for groups 4 and 8 and 1.28-1.36x for MHA; group 7 1.00-1.03x) */
    for (int hh = 0; hh < nh; ++hh) {
      float *restrict ot = state + hh * state_floats + q_floats;
@   if not mk.prefetch_in_blocks then
@     prefetch_token_major("      ", "nh + hh", "0", "nk")
@   end
@   if plan.lanes then
      if (lanes && !contig) {
        /* rows in the lanes: Oᵀ of each panel of rows += Pᵀ·V in Q·Kᵀ's form, each V element broadcast from its row
         * in place. Row blocks instead each re-read the tile's V rows, a token row apart and so in the same L1 sets,
         * copied side by side first: 8 queries of h32/kv8/d128, Intel Xeon (Emerald Rapids), 1.13-1.19x slower */
@     if paged then
        const float *vhead = a->v + (it->kvh0 + hh) * a->v_stride.head;
        for (int j0 = 0, jn; j0 < n; j0 += jn) { /* page run by page run, the rescale with the first */
          const int at = kt + j0;
          jn = $(I(paged)) - (at & $(I(paged - 1)));
          if (jn > n - j0) jn = n - j0;
          const float *vrun = vhead + $(page_row("at", "a->v_stride.batch", "vs"));
@       pvt_panels("          ", "j0", "jn", "vrun", "j0 == 0")
        }
@     else
        const float *vrun = a->v + b * a->v_stride.batch + (it->kvh0 + hh) * a->v_stride.head + (ptrdiff_t)kt * vs;
@       pvt_panels("        ", "0", "n", "vrun", nil)
@     end
        continue;
      }
@   end
@   if paged then
      /* paged: the tile's V rows page run by page run, each a P·V call over its keys; the rescale applies once
       * (alpha 1 after the first run), so the sums are those of one call over the whole tile, bit for bit */
      const $(kv.ctype) *vhead = $(kv.v_ptr) + (it->kvh0 + hh) * a->v_stride.head;
@     if kv.scaled then
      const float *vshead = a->v_scale + (it->kvh0 + hh) * a->v_scale_stride.head;
@     end
      for (int j0 = 0, jn; j0 < n; j0 += jn) {
        const int at = kt + j0;
        jn = $(I(paged)) - (at & $(I(paged - 1)));
        if (jn > n - j0) jn = n - j0;
@     if pv_asks then
        /* $(mk.prefetch_in_blocks and "" or "head-major pages: ")the run's first row block asks for the same rows of the stream's step ahead as it reads
         * these, a row per row read (asked for at once, a page's run of 64 rows ran 0.8x) */
@       pf_target("        ", "j0", "jn", pv_rows)
@     end
@     if plan.page_run_prefetch and not (mk.pv_contig and mk.pv_contig.prefetch) then
@       prefetch_stream("        ", "nh + hh", "j0", "jn", "contig")
@     end
        const $(kv.ctype) *vbase = vhead + $(page_row("at", "a->v_stride.batch", "vs"));
@     if kv.scaled then
        const float *vsbase = vshead + $(page_row("at", "a->v_scale_stride.batch", "a->v_scale_stride.seq"));
@     end
@     pv_blocks("        ", "j0", "jn", pv_asks and "pf, pfs, r0 == 0 ? pfn : 0" or nil)
        if (j0 == 0)
          for (int r = 0; r < rows_pv; ++r) alpha[hh * rows_pv + r] = 1.0f;
      }
@   else
      const $(kv.ctype) *vbase = $(kv.v_ptr) + b * a->v_stride.batch + (it->kvh0 + hh) * a->v_stride.head + (ptrdiff_t)kt * vs;
@   if kv.scaled then
      const float *vsbase = a->v_scale + b * a->v_scale_stride.batch + (it->kvh0 + hh) * a->v_scale_stride.head + (ptrdiff_t)kt * a->v_scale_stride.seq;
@   end
@   if pv_asks then
      /* $(mk.prefetch_in_blocks and "" or "rows contiguous per head: ")the first row block asks for the rows of the stream's step ahead (the next
       * head's V rows, or the next tile's K rows) as it reads this head's V rows */
@     pf_target("      ", "0", "nk", pv_rows)
@   end
      /* O = alpha·O + P·V (V rows read in place: a decode tile is read by few row blocks), for the live rows only */
@   pv_blocks("      ", nil, "n", "pf, pfs, r0 == 0 ? pfn : 0")
@   end
    }
@ else
    for (int hh = 0; hh < nh; ++hh) {
      const float *restrict qt = state + hh * state_floats;
      float *restrict ot = state + hh * state_floats + q_floats;
      float *restrict m = ot + mp * dp, *restrict l = m + mp;
      const float *kbase = a->k + b * a->k_stride.batch + (it->kvh0 + hh) * a->k_stride.head + (ptrdiff_t)kt * ks;
      const float *vbase = a->v + b * a->v_stride.batch + (it->kvh0 + hh) * a->v_stride.head + (ptrdiff_t)kt * vs;

      /* S = Q·Kᵀ: blocks of $(I(RQK)) rows (their Qᵀ slice stays in L1) x $(I(plan.kb)) keys; a short last block
       * repeats its last key (masked below). */
@   if causal ~= false then
      for (int r0 = 0; r0 < rows_qk; r0 += $(I(RQK))) {
        const int seen = masked ? attngen_keys_seen(lim, r0, $(I(RQK))) : n; /* key blocks past it are masked whole */
        for (int j0 = 0; j0 < seen; j0 += $(I(plan.kb))) {
@   else
      for (int r0 = 0; r0 < rows_qk; r0 += $(I(RQK)))
        for (int j0 = 0; j0 < n; j0 += $(I(plan.kb))) {
@   end
          const float *krow[$(I(plan.kb))];
          for (int j = 0; j < $(I(plan.kb)); ++j) krow[j] = kbase + $(block_key(nil, "ks"));
          $(mk.qk_name)(qt + r0$(qs_arg), krow, st + j0 * mp + r0$(kern.D and "" or ", d"));
        }
@   if causal ~= false then
      }
@   end

@   score_passes("prefill", "      ")
@   softmax("rows_pv", "rows_qk", "mp")
      /* The V tile: read in place when its rows are contiguous (the runtime's K/V repack), else packed: token-major
       * rows sit a token apart (the same cache sets, a page each), and every row block re-reads them. */
      const float *restrict vtile = vbase;
      ptrdiff_t vtile_stride = vs;
      if (vs != $(D)) {
        for (int j = 0; j < n; ++j) {
          const float *restrict src = vbase + (ptrdiff_t)j * vs;
@   copy_row("          ", "vt + j * dp", "src")
        }
        vtile = vt;
        vtile_stride = dp;
      }

      /* O = alpha·O + P·V, one panel of $(I(PW)) columns at a time: the panel's V rows stay in L1 while every row
       * block passes over them */
@   -- keys a P·V row block reads: in a masked tile, none past its rows' limits (their P is exactly 0)
@   local pv_n = causal ~= false and ("masked ? attngen_keys_seen(lim, r0, " .. I(PR) .. ") : n") or "n"
      for (int c0 = 0; c0 + $(I(PW)) <= $(D); c0 += $(I(PW)))
        for (int r0 = 0; r0 < rows_pv; r0 += $(I(PR)))
          $(mk.pv_panel.name)(st + r0$(qs_arg), alpha + r0, $(pv_n), vtile + c0, vtile_stride, ot + r0 * dp + c0, dp);
@   if mk.pv_tail then
@     local rest = mk.pv_tail.D and "" or (", " .. D .. " - c0")
      $(mk.pv_tail.D and "{" or string.format("if (%s %% %s != 0) {", D, I(PW))) /* the last columns */
        const int c0 = $(D) - $(D) % $(I(PW));
        for (int r0 = 0; r0 < rows_pv; r0 += $(I(PR)))
          $(mk.pv_tail.name)(st + r0$(qs_arg), alpha + r0, $(pv_n), vtile + c0, vtile_stride, ot + r0 * dp + c0, dp$(rest));
      }
@   end
    }
@ end
  }

@ if sinks ~= false then
  /* Sink logits join the denominator once: here, or in the split-KV merge (an item writing partials skips them). */
  if ($(sinks and "" or "a->sinks && ")!it->max_sum)
    for (int hh = 0; hh < nh; ++hh) {
      float *restrict ot = state + hh * state_floats + q_floats;
@   if decode then
      float *restrict m = m_all + hh * rows_pv, *restrict l = l_all + hh * rows_pv;
@   else
      float *restrict m = ot + mp * dp, *restrict l = m + mp;
@   end
      for (int r = 0; r < rows; ++r) {
        const float sink = a->sinks[(it->kvh0 + hh) * $(G) + r % $(G)], m_new = attngen_maxf_(m[r], sink);
        if (m_new == -INFINITY) continue; /* no key seen and a -inf sink: nothing joins */
        const float keep = expf(m[r] - m_new); /* 0 for a row that saw no key */
        l[r] = l[r] * keep + expf(sink - m_new);
        m[r] = m_new;
        for (int c = 0; c < $(D); ++c) ot[r * dp + c] *= keep;
      }
    }
@ end
@ local o_at = "q_floats"
@ if decode and plan.lanes then
@   local PW = plan.lanes.panel
@   o_at = "(lanes && !contig ? 0 : q_floats)"
  if (lanes && !contig) /* rows in the lanes: each panel's Oᵀ back to rows, in the Q tile's space (Q is read no more) */
    for (int hh = 0; hh < nh; ++hh) {
      const float *restrict ot = state + hh * state_floats + q_floats;
      float *restrict orow = state + hh * state_floats;
@   if isa.transpose_scaled then
      for (int r0 = 0; r0 < rows; r0 += $(I(PW))) {
        const float *restrict panel = ot + r0 * dp;
        int c0 = 0;
        for (; c0 + $(I(W)) <= $(D); c0 += $(I(W))) { /* $(I(W)) columns x $(I(W)) rows a block, transposed in registers */
          const float *src[$(I(W))];
          for (int i = 0; i < $(I(W)); ++i) src[i] = panel + (c0 + i) * $(I(PW));
          for (int rr = 0; rr < $(I(PW)); rr += $(I(W))) $(isa.transpose_scaled("src", "rr", "1.0f", "orow + (r0 + rr) * dp + c0", "dp"))
        }
        for (; c0 < $(D); ++c0)
          for (int r = 0; r < $(I(PW)); ++r) orow[(r0 + r) * dp + c0] = panel[c0 * $(I(PW)) + r];
      }
@   else
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < $(D); ++c) orow[r * dp + c] = ot[r / $(I(PW)) * $(I(PW)) * dp + c * $(I(PW)) + r % $(I(PW))];
@   end
    }
@ end
  /* Normalize and store; a row that saw no key outputs zeros and log-sum-exp -inf. */
  for (int hh = 0; hh < nh; ++hh) {
    const float *restrict ot = state + hh * state_floats + $(o_at);
@ if decode then
    const float *restrict m = m_all + hh * rows_pv, *restrict l = l_all + hh * rows_pv;
@ else
    const float *restrict m = ot + mp * dp, *restrict l = m + mp;
@ end
    for (int r = 0; r < rows; ++r) {
      const int i = q0 + r / $(G), h = hh * $(G) + r % $(G);
      float *restrict out = it->o + i * it->o_seq + h * it->o_head;
      if (l[r] != 0.0f) { /* a NaN sum (a NaN score) gives NaN, as in the reference */
        const float inv = 1.0f / l[r];
        const $(V) inv_v = $(isa.set1("inv"));
        int c = 0;
        for (; c + $(I(W)) <= $(D); c += $(I(W))) $(isa.store("out + c", isa.mul(isa.load("ot + r * dp + c"), "inv_v")))
        for (; c < $(D); ++c) out[c] = ot[r * dp + c] * inv;
      } else { /* zeros whatever K and V hold: O is 0 x V, NaN where V is not finite (make test-fuzz, poisoned rows) */
        for (int c = 0; c < $(D); ++c) out[c] = 0.0f;
      }
      if (it->lse) it->lse[h * it->lse_head + i] = l[r] != 0.0f ? m[r] + logf(l[r]) : -INFINITY;
      if (it->max_sum) {
        it->max_sum[2 * (h * it->lse_head + i)] = l[r] != 0.0f ? m[r] : -INFINITY;
        it->max_sum[2 * (h * it->lse_head + i) + 1] = l[r];
      }
    }
  }
}


@ -- One attention kernel: flash-style online softmax over KV tiles (the algorithm, written once).
@ -- `kern` holds what is specialized (nil = read at run time: generic kernel), `plan` the tiling (gen/plan.lua).
@ local V, W = isa.vtype, isa.width
@ local D = kern.D and I(kern.D) or "d"
@ local G = kern.G and I(kern.G) or "g"
@ local NK, RQK, PR = plan.keys, plan.rv * W, plan.pr
@ local causal, padded = kern.causal, kern.padded -- true/false, or nil when decided at run time
/* Work cut and scratch for $(kern.name): $(plan.describe) */
static void $(kern.name)__tile(const attngen_shape *shape, int q_len, int *q_tile, size_t *scratch_floats)
{
  const int g = shape->heads / shape->kv_heads, d = shape->head_dim;
  (void)g; (void)d;
@ if kern.phase == "decode" then
  const int qt = q_len < ATTNGEN_DECODE_MAX_Q ? q_len : ATTNGEN_DECODE_MAX_Q;
@ else
  const int qt_plan = $(G) >= $(I(plan.rows)) ? 1 : $(I(plan.rows)) / $(G);
  const int qt = q_len < qt_plan ? q_len : qt_plan;
@ end
  const size_t mp = attngen_round_up((size_t)$(G) * (size_t)(qt > 0 ? qt : 1), $(I(plan.row_align)));
  *q_tile = qt > 0 ? qt : 1;
  *scratch_floats = attngen_scratch_floats(mp, (size_t)$(D), $(I(plan.keys_padded)), $(I(W)));
}

static $(isa.attr) void $(kern.name)(const attngen_shape *shape, const attngen_args *a, const attngen_item *it,
    float *scratch)
{
@ if not kern.D then
  const int d = shape->head_dim;
@ end
@ if not kern.G then
  const int g = shape->heads / shape->kv_heads;
@ end
@ if causal == nil then
  const int causal = shape->mask == ATTNGEN_MASK_CAUSAL || shape->mask == ATTNGEN_MASK_CAUSAL_PADDING;
  const int padded = shape->mask != ATTNGEN_MASK_NONE && shape->mask != ATTNGEN_MASK_CAUSAL;
@ else
  (void)shape;
@ end
  const int rows = $(G) * (it->q1 - it->q0);          /* row r = (query q0 + r / G, q head r % G of this group) */
  int qt_max; size_t scratch_floats;
  $(kern.name)__tile(shape, a->q_len, &qt_max, &scratch_floats);
  (void)scratch_floats;
  const ptrdiff_t mp = (ptrdiff_t)attngen_round_up((size_t)$(G) * (size_t)qt_max, $(I(plan.row_align)));
  const int rows_pv = (int)attngen_round_up((size_t)rows, $(I(PR)));     /* P·V row blocks */
  const int rows_qk = (int)attngen_round_up((size_t)rows_pv, $(I(RQK))); /* Q·Kᵀ row blocks cover them */
  const ptrdiff_t dp = (ptrdiff_t)attngen_round_up((size_t)$(D), $(I(W)));
  float *restrict qt = scratch;                                  /* [d][mp]  scaled Q, transposed */
  float *restrict st = qt + attngen_round_up((size_t)$(D) * (size_t)mp, 16);  /* [keys][mp] scores, then P */
  float *restrict ot = st + attngen_round_up((size_t)$(I(plan.keys_padded)) * (size_t)mp, 16); /* [mp][dp] */
  float *restrict m = ot + attngen_round_up((size_t)mp * (size_t)dp, 16); /* running max per row */
  float *restrict l = m + mp;                                     /* running sum of exp per row */
  float *restrict alpha = l + mp;                                 /* rescale factor of this tile */
@ if causal ~= false then
  float *restrict lim = alpha + mp;                               /* visible keys of this tile per row */
  int *restrict lim_abs = (int *)(lim + mp);                      /* exclusive key limit per row */
@ end
  const float scale = a->scale != 0.0f ? a->scale : $(kern.scale and string.format("%.9gf", kern.scale) or ("1.0f / sqrtf((float)" .. D .. ")"));
  const int b = it->b, kvh = it->kvh, q0 = it->q0;
  const float *kbase = a->k + b * a->k_stride.batch + kvh * a->k_stride.head;
  const float *vbase = a->v + b * a->v_stride.batch + kvh * a->v_stride.head;
  const ptrdiff_t ks = a->k_stride.seq, vs = a->v_stride.seq;
@ if causal ~= false then
  const int offset = a->kv_len - a->q_len; /* causal: query i sees keys j <= i + offset */
@ end

  /* Pack Q·scale transposed; padding rows are zero so they stay finite and are never stored. */
  for (int r = 0; r < mp; ++r) {
    const int live = r < rows;
    const float *qrow = live ? a->q + b * a->q_stride.batch + (q0 + r / $(G)) * a->q_stride.seq +
                                   (kvh * $(G) + r % $(G)) * a->q_stride.head
                             : NULL;
    for (int k = 0; k < $(D); ++k) qt[k * mp + r] = live ? qrow[k] * scale : 0.0f;
    m[r] = -INFINITY;
    l[r] = 0.0f;
@ if causal ~= false then
    lim_abs[r] = live ? q0 + r / $(G) + offset + 1 : INT_MAX;
@ end
  }
  memset(ot, 0, sizeof(float) * (size_t)mp * (size_t)dp);

  /* Keys this item can see at all: its KV range, the sequence's valid length, the last row's causal limit. */
  int kend = it->k1;
@ if padded ~= false then
@   if padded == nil then
  if (padded && a->kv_lens[b] < kend) kend = a->kv_lens[b];
@   else
  if (a->kv_lens[b] < kend) kend = a->kv_lens[b];
@   end
@ end
@ if causal ~= false then
  const int diag_first = q0 + offset + 1; /* keys below this are visible to every row of the item */
@   if causal == nil then
  if (causal && it->q1 - 1 + offset + 1 < kend) kend = it->q1 - 1 + offset + 1;
@   else
  if (it->q1 - 1 + offset + 1 < kend) kend = it->q1 - 1 + offset + 1;
@   end
@ end

  for (int kt = it->k0; kt < kend; kt += $(I(NK))) {
    const int n = kend - kt < $(I(NK)) ? kend - kt : $(I(NK));
@ if causal == nil then
    const int masked = causal && kt + n > diag_first; /* only tiles crossing the diagonal need a mask */
@ elseif causal then
    const int masked = kt + n > diag_first; /* only tiles crossing the diagonal need a mask */
@ end
@ if causal ~= false then
    if (masked)
      for (int r = 0; r < rows_qk; ++r) {
        const int vis = lim_abs[r] - kt;
        lim[r] = (float)(vis < 0 ? 0 : vis > n ? n : vis);
      }
@ end

    /* S = Q·Kᵀ: blocks of $(I(plan.kb)) keys; a short last block repeats its last key (masked below). */
    for (int j0 = 0; j0 < n; j0 += $(I(plan.kb))) {
      const float *krow[$(I(plan.kb))];
      for (int j = 0; j < $(I(plan.kb)); ++j) krow[j] = kbase + (ptrdiff_t)(kt + (j0 + j < n ? j0 + j : n - 1)) * ks;
      for (int r0 = 0; r0 < rows_qk; r0 += $(I(RQK)))
        $(mk.qk_name)(qt + r0, mp, krow, st + j0 * mp + r0$(kern.D and "" or ", d"));
    }

    /* Online softmax down each column of S (one lane per query row): new max, rescale, P = exp(S - max). */
    for (int r0 = 0; r0 < rows_qk; r0 += $(I(W))) {
      const $(V) m_old = $(isa.load("m + r0"));
      $(V) s_max = $(isa.set1("-INFINITY"));
@ if causal ~= false then
      const $(V) vis = $(isa.load("lim + r0"));
@ end
      for (int j = 0; j < n; ++j) {
        $(V) s = $(isa.load("st + j * mp + r0"));
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
        $(V) s = $(isa.load("st + j * mp + r0"));
@ if causal ~= false then
        if (masked) s = $(isa.mask_keys("s", "j", "vis"));
@ end
        const $(V) p = $(isa.exp(isa.sub("s", "m_use")));
        $(isa.store("st + j * mp + r0", "p"))
        sum = $(isa.add("sum", "p"));
      }
      $(isa.store("m + r0", "m_new"))
      $(isa.store("l + r0", isa.fma("sum", isa.load("l + r0"), "a_r")))
      $(isa.store("alpha + r0", "a_r"))
    }
    for (int r = 0; r < rows_pv; ++r)
      if (alpha[r] != 1.0f) {
        float *restrict orow = ot + r * dp;
        for (int c = 0; c < $(D); ++c) orow[c] *= alpha[r];
      }

    /* O += P·V */
    for (int r0 = 0; r0 < rows_pv; r0 += $(I(PR)))
      $(mk.pv_name)(st + r0, mp, n, vbase + (ptrdiff_t)kt * vs, vs, ot + r0 * dp, dp$(kern.D and "" or ", d"));
  }

  /* Normalize and store; a row that saw no key outputs zeros and log-sum-exp -inf. */
  for (int r = 0; r < rows; ++r) {
    const int i = q0 + r / $(G), h = r % $(G);
    float *restrict out = it->o + i * it->o_seq + h * it->o_head;
    const float inv = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
    for (int c = 0; c < $(D); ++c) out[c] = ot[r * dp + c] * inv;
    if (it->lse) it->lse[h * it->lse_head + i] = l[r] > 0.0f ? m[r] + logf(l[r]) : -INFINITY;
  }
}


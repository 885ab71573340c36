/* SPDX-License-Identifier: MIT */
/* attngen runtime: RoPE cos/sin per token, for a plan's queries and the cache append's keys. */
#include "attngen_internal.h"

/* A kernel's RoPE descriptor (its table's params.rope) must be usable before inv_freq is read. */
int attngen_rope_check(const attngen_kernel *k)
{
  const attngen_rope *r = &k->params.rope;
  if (r->style == ATTNGEN_ROPE_NONE) return ATTNGEN_OK;
  if ((unsigned)r->style >= ATTNGEN_ROPE_COUNT_ || !r->inv_freq || r->rotary_dim < 2 || r->rotary_dim % 2 != 0 ||
      r->rotary_dim > k->shape.head_dim || !(r->cs_scale > 0.0 && r->cs_scale < 1e30))
    return attngen_fail(ATTNGEN_ERR_SHAPE,
                        "attngen: kernel %s has a bad RoPE descriptor (style %d, rotary_dim %d, inv_freq %s, "
                        "head_dim %d, cs_scale %g)",
                        k->info->name, (int)r->style, r->rotary_dim, r->inv_freq ? "set" : "NULL", k->shape.head_dim,
                        r->cs_scale);
  return ATTNGEN_OK;
}

/* RoPE cos/sin of n tokens, in the layout attngen_rope_rotate reads: for token t, cs[t * rotary_dim + p] =
 * cos(pos_t * inv_freq[p]) and cs[t * rotary_dim + rotary_dim / 2 + p] = sin(...), each times cs_scale (YaRN's
 * attention factor, else 1: so rotated q and k both carry it) in float64, rounded to float, where
 * pos_t = pos[t] if pos is given, else base + t. The angle is float64: pos_t * inv_freq[p] carries a relative
 * error of one ulp (2^-53, so ~1e-10 rad at 2^20 rad) and libm's cos and sin reduce it exactly. Along a run of
 * consecutive positions the next cos/sin come from the angle-addition formulas in float64 (4 multiplies instead
 * of a libm cos and sin, ~25x cheaper), restarted from an exact cos/sin every ROPE_EXACT_EVERY tokens: the drift
 * stays below ROPE_EXACT_EVERY * 4e-16, far under the float rounding of the result (3e-8).
 * w: scratch of 2 * rotary_dim doubles. */
#define ROPE_EXACT_EVERY 32
void attngen_rope_cos_sin(const attngen_rope *r, const int32_t *pos, long long base, int n, float *cs, double *w)
{
  const int half = r->rotary_dim / 2;
  double *c = w, *s = w + half, *cw = w + 2 * half, *sw = w + 3 * half;
  long long prev = 0;
  int t, p, run = 0, have_step = 0;
  for (t = 0; t < n; ++t) {
    const long long x = pos ? (long long)pos[t] : base + t;
    float *out = cs + (size_t)t * (size_t)r->rotary_dim;
    if (t > 0 && x == prev + 1 && run < ROPE_EXACT_EVERY) {
      if (!have_step) {
        for (p = 0; p < half; ++p) {
          cw[p] = cos(r->inv_freq[p]);
          sw[p] = sin(r->inv_freq[p]);
        }
        have_step = 1;
      }
      for (p = 0; p < half; ++p) {
        const double c1 = c[p] * cw[p] - s[p] * sw[p];
        s[p] = s[p] * cw[p] + c[p] * sw[p];
        c[p] = c1;
      }
      ++run;
    } else {
      for (p = 0; p < half; ++p) {
        const double angle = (double)x * r->inv_freq[p];
        c[p] = cos(angle);
        s[p] = sin(angle);
      }
      run = 1;
    }
    for (p = 0; p < half; ++p) {
      out[p] = (float)(c[p] * r->cs_scale);
      out[half + p] = (float)(s[p] * r->cs_scale);
    }
    prev = x;
  }
}

/* The cos/sin of every query of a plan, once per token (shared by all its heads and items), and each item's
 * pointer into them. Positions: args.q_pos, else kv_len - q_len + i. Nothing for kernels without RoPE. */
int attngen_plan_rope(attngen_plan *p)
{
  const attngen_rope *r = &p->kernel.params.rope;
  const attngen_args *a = &p->args;
  size_t rows, floats, i;
  double *w;
  int st, b;
  if (r->style == ATTNGEN_ROPE_NONE) return ATTNGEN_OK;
  if ((st = attngen_rope_check(&p->kernel))) return st;
  if (mul_size((size_t)a->batch, (size_t)a->q_len, &rows) || mul_size(rows, (size_t)r->rotary_dim, &floats) ||
      floats > ATTNGEN_MAX_FLOATS)
    return attngen_fail(ATTNGEN_ERR_SIZE,
                        "attngen: RoPE cos/sin (batch %d x q_len %d x rotary_dim %d floats) span more than "
                        "PTRDIFF_MAX bytes",
                        a->batch, a->q_len, r->rotary_dim);
  p->rope_cs = (float *)malloc(floats * sizeof(float));
  w = (double *)malloc(2 * (size_t)r->rotary_dim * sizeof(double));
  if (!p->rope_cs || !w) {
    free(w);
    return attngen_fail(ATTNGEN_ERR_NOMEM, "attngen: out of memory for the RoPE cos/sin");
  }
  for (b = 0; b < a->batch; ++b)
    attngen_rope_cos_sin(r, a->q_pos ? a->q_pos + (size_t)b * (size_t)a->q_len : NULL, (long long)a->kv_len - a->q_len,
                         a->q_len, p->rope_cs + (size_t)b * (size_t)a->q_len * (size_t)r->rotary_dim, w);
  free(w);
  for (i = 0; i < p->n_items; ++i) {
    attngen_item *it = &p->items[i];
    it->rope_cs = p->rope_cs + ((size_t)it->b * (size_t)a->q_len + (size_t)it->q0) * (size_t)r->rotary_dim;
  }
  p->bytes += floats * sizeof(float);
  return ATTNGEN_OK;
}

/* SPDX-License-Identifier: MIT */
/* K/V cache storage types in the tests (see kv_types.h).
 *
 * CK_CONVERT checks the public conversions of attngen.h bit for bit against references written here from the IEEE
 * 754 definitions in float64 (scaling by powers of two and rounding with floor, no bit manipulation shared with
 * runtime/attngen_convert.h):
 *   f16, bf16: to_float of all 65536 patterns (exact value, NaN stays NaN, the sign of zero) and the round trip
 *   from_float(to_float(h)) == h for every non-NaN pattern; from_float of every pattern's value, of every midpoint
 *   between neighbours (ties go to the even one), of the floats one ulp either side of each midpoint, of
 *   2^20 random floats of every exponent (subnormal floats, the overflow threshold and the subnormal halves
 *   included) and of the special values (+-0, +-Inf, NaNs of any payload: a quiet NaN, never Inf).
 *   int8 (attngen_int8_quantize): an all-zero row (also -0.0) gives scale 0 and zeros; every row of random lengths
 *   1 .. 512 and magnitudes 2^-100 .. 2^120 gives the scale max|x| / 127 and the elements the reference computes,
 *   its largest element +-127 with its sign, every element read back within scale / 2 (+ rounding) of x; a row of
 *   subnormals so small that max|x| / 127 underflows reads back within 2^-142 of x, never NaN; a row holding +-Inf or
 *   NaN anywhere gives scale NaN. */
#include "kv_types.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint32_t KVT_POISON_F32 = 0x7FC0DEADu; /* quiet NaN, as cases.c poisons fp32 inputs */
static const uint16_t KVT_POISON_F16 = 0x7E00u, KVT_POISON_BF16 = 0x7FC0u;
static const int8_t KVT_POISON_I8 = 0x7F;

int kvt_bytes(attngen_kv_dtype t) {
  switch (t) {
  case ATTNGEN_KV_F32: return 4;
  case ATTNGEN_KV_F16:
  case ATTNGEN_KV_BF16: return 2;
  default: return 1;
  }
}

int kvt_group(attngen_kv_dtype t, int d) {
  switch (t) {
  case ATTNGEN_KV_INT8: return d;
  case ATTNGEN_KV_INT8_G64: return 64;
  case ATTNGEN_KV_INT8_G32: return 32;
  default: return 0;
  }
}

int kvt_fits(attngen_kv_dtype t, int d) {
  const int g = kvt_group(t, d);
  return g == 0 || d % g == 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* references */

static double rne(double n) { /* n >= 0, exact: round to nearest, ties to even */
  double f = floor(n);
  const double r = n - f;
  if (r > 0.5 || (r == 0.5 && fmod(f, 2.0) != 0.0)) f += 1.0;
  return f;
}

uint16_t kvt_ref_f16_bits(float x) {
  if (isnan(x)) return 0x7E00u;
  const uint16_t sign = signbit(x) ? 0x8000u : 0u;
  const double a = fabs((double)x);
  if (a >= 65520.0) return sign | 0x7C00u; /* 65504 + half an ulp (2^4 / 2): ties to even go up, to Inf */
  if (a < 0x1p-14) return (uint16_t)(sign | (uint16_t)rne(a * 0x1p24)); /* subnormal quanta 2^-24 (1024 = 2^-14) */
  int e;
  (void)frexp(a, &e);
  int E = e - 1; /* a in [2^E, 2^(E+1)) */
  double m = rne(ldexp(a, 10 - E)); /* 11 significant bits: [1024, 2048] */
  if (m == 2048.0) m = 1024.0, E++;
  if (E > 15) return sign | 0x7C00u;
  return (uint16_t)(sign | (uint16_t)((E + 15) << 10) | (uint16_t)(m - 1024.0));
}

uint16_t kvt_ref_bf16_bits(float x) {
  if (isnan(x)) return 0x7FC0u;
  const uint16_t sign = signbit(x) ? 0x8000u : 0u;
  const double a = fabs((double)x);
  if (isinf(a)) return sign | 0x7F80u;
  if (a < 0x1p-126) return (uint16_t)(sign | (uint16_t)rne(a * 0x1p133)); /* subnormal quanta 2^-133 */
  int e;
  (void)frexp(a, &e);
  int E = e - 1;
  double m = rne(ldexp(a, 7 - E)); /* 8 significant bits: [128, 256] */
  if (m == 256.0) m = 128.0, E++;
  if (E > 127) return sign | 0x7F80u;
  return (uint16_t)(sign | (uint16_t)((E + 127) << 7) | (uint16_t)(m - 128.0));
}

double kvt_ref_f16_value(uint16_t h) {
  const int ex = (h >> 10) & 31, man = h & 1023;
  const double s = (h & 0x8000u) ? -1.0 : 1.0;
  if (ex == 31) return man ? NAN : s * INFINITY;
  if (ex == 0) return s * ldexp((double)man, -24);
  return s * ldexp((double)(1024 + man), ex - 25);
}

double kvt_ref_bf16_value(uint16_t h) {
  const int ex = (h >> 7) & 255, man = h & 127;
  const double s = (h & 0x8000u) ? -1.0 : 1.0;
  if (ex == 255) return man ? NAN : s * INFINITY;
  if (ex == 0) return s * ldexp((double)man, -133);
  return s * ldexp((double)(128 + man), ex - 134);
}

float kvt_ref_quantize(const float *x, int n, int8_t *q) {
  float amax = 0.0f;
  int bad = 0;
  for (int i = 0; i < n; i++) {
    if (isnan(x[i]) || isinf(x[i])) bad = 1;
    else if (fabsf(x[i]) > amax) amax = fabsf(x[i]);
  }
  if (bad || amax == 0.0f) {
    for (int i = 0; i < n; i++) q[i] = 0;
    return bad ? NAN : 0.0f;
  }
  const float scale = amax / 127.0f; /* fp32, as documented */
  for (int i = 0; i < n; i++) {
    const float t = x[i] / scale; /* fp32 division */
    double r = rne(fabs((double)t));
    if (r > 127.0) r = 127.0;
    q[i] = (int8_t)(t < 0 ? -r : r);
  }
  return scale;
}

/* ------------------------------------------------------------------------------------------------ */
/* typed caches */

static uint16_t get16(const unsigned char *p, size_t e) {
  uint16_t h;
  memcpy(&h, p + 2 * e, 2);
  return h;
}

static void poison_buf(attngen_kv_dtype t, unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++) switch (t) {
    case ATTNGEN_KV_F32: memcpy(p + 4 * i, &KVT_POISON_F32, 4); break;
    case ATTNGEN_KV_F16: memcpy(p + 2 * i, &KVT_POISON_F16, 2); break;
    case ATTNGEN_KV_BF16: memcpy(p + 2 * i, &KVT_POISON_BF16, 2); break;
    default: p[i] = (unsigned char)KVT_POISON_I8; break;
    }
}

void kvt_poison(kvt_cache *c) {
  poison_buf(c->t, c->k, c->nk);
  poison_buf(c->t, c->v, c->nv);
  for (size_t i = 0; i < c->nks; i++) memcpy(&c->ks[i], &KVT_POISON_F32, 4);
  for (size_t i = 0; i < c->nvs; i++) memcpy(&c->vs[i], &KVT_POISON_F32, 4);
}

int kvt_alloc(kvt_cache *c, attngen_kv_dtype t, int d, size_t nk, size_t nv, size_t nks, size_t nvs) {
  memset(c, 0, sizeof *c);
  c->t = t, c->d = d, c->group = kvt_group(t, d);
  c->nk = nk, c->nv = nv;
  c->nks = c->group ? nks : 0, c->nvs = c->group ? nvs : 0;
  const size_t b = (size_t)kvt_bytes(t);
  /* exact sizes (AddressSanitizer sees any read past them); never 0 bytes */
  c->k = malloc(nk * b + (nk == 0)), c->v = malloc(nv * b + (nv == 0));
  c->ks = c->nks ? malloc(c->nks * sizeof(float)) : NULL, c->vs = c->nvs ? malloc(c->nvs * sizeof(float)) : NULL;
  if (!c->k || !c->v || (c->nks && !c->ks) || (c->nvs && !c->vs)) {
    kvt_free(c);
    return -1;
  }
  kvt_poison(c);
  return 0;
}

void kvt_free(kvt_cache *c) {
  free(c->k), free(c->v), free(c->ks), free(c->vs);
  c->k = c->v = NULL, c->ks = c->vs = NULL;
}

int kvt_clone(kvt_cache *dst, const kvt_cache *src) {
  if (kvt_alloc(dst, src->t, src->d, src->nk, src->nv, src->nks, src->nvs)) return -1;
  const size_t b = (size_t)kvt_bytes(src->t);
  memcpy(dst->k, src->k, src->nk * b), memcpy(dst->v, src->v, src->nv * b);
  if (src->nks) memcpy(dst->ks, src->ks, src->nks * sizeof(float));
  if (src->nvs) memcpy(dst->vs, src->vs, src->nvs * sizeof(float));
  return 0;
}

int kvt_same(const kvt_cache *a, const kvt_cache *b) {
  const size_t by = (size_t)kvt_bytes(a->t);
  return a->t == b->t && a->nk == b->nk && a->nv == b->nv && a->nks == b->nks && a->nvs == b->nvs &&
         !memcmp(a->k, b->k, a->nk * by) && !memcmp(a->v, b->v, a->nv * by) &&
         (!a->nks || !memcmp(a->ks, b->ks, a->nks * sizeof(float))) &&
         (!a->nvs || !memcmp(a->vs, b->vs, a->nvs * sizeof(float)));
}

/* Through the runtime's own setters (attngen_args_set_kv, attngen_append_args_set_kv), which every numeric case thus
 * checks: a field set wrong there would read another type's bytes and fail against the reference. */
void kvt_set_args(attngen_args *a, const kvt_cache *c, size_t ek, size_t ev, size_t eks, size_t evs) {
  const size_t by = (size_t)kvt_bytes(c->t);
  if (attngen_args_set_kv(a, c->t, c->k + ek * by, c->v + ev * by, c->group ? c->ks + eks : NULL,
                          c->group ? c->vs + evs : NULL) != ATTNGEN_OK) {
    fprintf(stderr, "attngen_args_set_kv(%s): %s\n", attngen_kv_dtype_name(c->t), attngen_last_error());
    abort();
  }
}

void kvt_set_append(attngen_append_args *a, kvt_cache *c, size_t ek, size_t ev, size_t eks, size_t evs) {
  const size_t by = (size_t)kvt_bytes(c->t);
  if (attngen_append_args_set_kv(a, c->t, c->k + ek * by, c->v + ev * by, c->group ? c->ks + eks : NULL,
                                 c->group ? c->vs + evs : NULL) != ATTNGEN_OK) {
    fprintf(stderr, "attngen_append_args_set_kv(%s): %s\n", attngen_kv_dtype_name(c->t), attngen_last_error());
    abort();
  }
}

float kvt_value(const kvt_cache *c, int which, size_t e, size_t s, int col) {
  const unsigned char *p = which ? c->v : c->k;
  switch (c->t) {
  case ATTNGEN_KV_F32: {
    float x;
    memcpy(&x, p + 4 * e, 4);
    return x;
  }
  case ATTNGEN_KV_F16: return (float)kvt_ref_f16_value(get16(p, e));
  case ATTNGEN_KV_BF16: return (float)kvt_ref_bf16_value(get16(p, e));
  default: {
    const float *sc = which ? c->vs : c->ks;
    return (float)(int8_t)p[e] * sc[s + (size_t)(col / c->group)];
  }
  }
}

int kvt_row_check(const kvt_cache *c, int which, size_t e, size_t s, const float *x, char *why, size_t nwhy) {
  const unsigned char *p = which ? c->v : c->k;
  const char *w = which ? "V" : "K";
  for (int col = 0; col < c->d; col++) {
    switch (c->t) {
    case ATTNGEN_KV_F32:
      if (memcmp(p + 4 * (e + col), &x[col], 4)) {
        snprintf(why, nwhy, "%s element %d is not the appended float %.9g", w, col, (double)x[col]);
        return 1;
      }
      break;
    case ATTNGEN_KV_F16:
    case ATTNGEN_KV_BF16: {
      const int f16 = c->t == ATTNGEN_KV_F16;
      const uint16_t got = get16(p, e + col), want = f16 ? kvt_ref_f16_bits(x[col]) : kvt_ref_bf16_bits(x[col]);
      const double gv = f16 ? kvt_ref_f16_value(got) : kvt_ref_bf16_value(got);
      if (isnan(x[col]) ? !isnan(gv) : got != want) {
        snprintf(why, nwhy, "%s element %d: stored %s 0x%04x for %.9g, the reference rounds to 0x%04x", w, col,
                 f16 ? "f16" : "bf16", got, (double)x[col], want);
        return 1;
      }
      break;
    }
    default:
      break;
    }
  }
  if (c->group) {
    const float *sc = which ? c->vs : c->ks;
    int8_t q[ATTNGEN_MAX_HEAD_DIM];
    for (int g0 = 0; g0 < c->d; g0 += c->group) {
      const float want = kvt_ref_quantize(x + g0, c->group, q), got = sc[s + (size_t)(g0 / c->group)];
      if (isnan(want) ? !isnan(got) : memcmp(&got, &want, sizeof got) != 0) {
        snprintf(why, nwhy, "%s scale of columns %d..%d: stored %.9g, the reference %.9g", w, g0, g0 + c->group - 1,
                 (double)got, (double)want);
        return 1;
      }
      if (isnan(want)) continue;
      for (int i = 0; i < c->group; i++)
        if ((int8_t)p[e + (size_t)(g0 + i)] != q[i]) {
          snprintf(why, nwhy, "%s element %d: stored %d for %.9g (scale %.9g), the reference %d", w, g0 + i,
                   (int)(int8_t)p[e + (size_t)(g0 + i)], (double)x[g0 + i], (double)want, (int)q[i]);
          return 1;
        }
    }
  }
  return 0;
}

int kvt_row_poisoned(const kvt_cache *c, int which, size_t e, size_t s) {
  const unsigned char *p = which ? c->v : c->k;
  for (int col = 0; col < c->d; col++) switch (c->t) {
    case ATTNGEN_KV_F32:
      if (memcmp(p + 4 * (e + col), &KVT_POISON_F32, 4)) return 0;
      break;
    case ATTNGEN_KV_F16:
      if (get16(p, e + col) != KVT_POISON_F16) return 0;
      break;
    case ATTNGEN_KV_BF16:
      if (get16(p, e + col) != KVT_POISON_BF16) return 0;
      break;
    default:
      if ((int8_t)p[e + col] != KVT_POISON_I8) return 0;
      break;
    }
  if (c->group) {
    const float *sc = which ? c->vs : c->ks;
    for (int g = 0; g < c->d / c->group; g++)
      if (memcmp(&sc[s + (size_t)g], &KVT_POISON_F32, 4)) return 0;
  }
  return 1;
}

double kvt_store_bound(attngen_kv_dtype t, double y, double m, double err_in) {
  const double r = fabs(y) + err_in;
  switch (t) {
  case ATTNGEN_KV_F32: return err_in;
  case ATTNGEN_KV_F16: return err_in + 0x1p-11 * r + 0x1p-25; /* half an ulp: relative (normal) or 2^-25 */
  case ATTNGEN_KV_BF16: return err_in + 0x1p-8 * r + 0x1p-134;
  default: /* half a quantum of the group's scale (m + err_in) / 127, the fp32 division and product roundings */
    return err_in + (m + err_in) / 127.0 * (0.5 + 127.0 * 0x1p-23) + 0x1p-22 * r;
  }
}

int kvt_names_field(const char *m, const char *field) {
  const size_t n = strlen(field);
  for (const char *p = m; (p = strstr(p, field)) != NULL; p++) {
    const char before = p == m ? ' ' : p[-1], after = p[n];
    const int idb = (before >= 'a' && before <= 'z') || (before >= '0' && before <= '9') || before == '_';
    const int ida = (after >= 'a' && after <= 'z') || (after >= '0' && after <= '9') || after == '_';
    if (!idb && !ida) return 1;
  }
  return 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* CK_CONVERT */

static uint64_t mix(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static float bits_f(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}
static uint32_t f_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}

/* one from_float check: x must round to the reference's pattern (a NaN to a quiet NaN) */
static int check_from(int f16, float x, case_result *r, long *n) {
  const uint16_t got = f16 ? attngen_f16_from_float(x).bits : attngen_bf16_from_float(x).bits;
  (*n)++;
  if (isnan(x)) {
    const int nan = f16 ? ((got & 0x7C00u) == 0x7C00u && (got & 0x3FFu)) : ((got & 0x7F80u) == 0x7F80u && (got & 0x7Fu));
    const int quiet = f16 ? (got & 0x200u) != 0 : (got & 0x40u) != 0;
    if (!nan || !quiet)
      return case_failf(r, "%s_from_float(NaN 0x%08x) = 0x%04x, not a quiet NaN", f16 ? "f16" : "bf16",
                        (unsigned)f_bits(x), got);
    return 0;
  }
  const uint16_t want = f16 ? kvt_ref_f16_bits(x) : kvt_ref_bf16_bits(x);
  if (got != want)
    return case_failf(r, "%s_from_float(%.9g = 0x%08x) = 0x%04x, the float64 reference rounds to 0x%04x",
                      f16 ? "f16" : "bf16", (double)x, (unsigned)f_bits(x), got, want);
  return 0;
}

static int run_16(int f16, case_result *r) {
  long n = 0;
  /* 1. every pattern: exact value, and back to the same pattern */
  for (uint32_t h = 0; h < 65536; h++) {
    float x;
    double want;
    if (f16) {
      attngen_f16 v = {(uint16_t)h};
      x = attngen_f16_to_float(v), want = kvt_ref_f16_value((uint16_t)h);
    } else {
      attngen_bf16 v = {(uint16_t)h};
      x = attngen_bf16_to_float(v), want = kvt_ref_bf16_value((uint16_t)h);
    }
    n++;
    if (isnan(want) ? !isnan(x) : ((double)x != want || !signbit(x) != !signbit(want)))
      return case_failf(r, "%s_to_float(0x%04x) = %.9g, the pattern's value is %.9g", f16 ? "f16" : "bf16",
                        (unsigned)h, (double)x, want);
    if (isnan(want)) {
      if (check_from(f16, x, r, &n)) return 1;
      continue;
    }
    const uint16_t back = f16 ? attngen_f16_from_float(x).bits : attngen_bf16_from_float(x).bits;
    if (back != h)
      return case_failf(r, "%s_from_float(%s_to_float(0x%04x) = %.9g) = 0x%04x: the round trip changed the pattern",
                        f16 ? "f16" : "bf16", f16 ? "f16" : "bf16", (unsigned)h, (double)x, back);
  }
  /* 2. midpoints between neighbouring finite values (ties: to even) and one float ulp either side; the midpoint
   * above the largest finite value is the overflow threshold */
  const uint32_t maxfin = f16 ? 0x7BFFu : 0x7F7Fu;
  for (uint32_t h = 0; h <= maxfin; h++) {
    const double lo = f16 ? kvt_ref_f16_value((uint16_t)h) : kvt_ref_bf16_value((uint16_t)h);
    const double hi = h < maxfin ? (f16 ? kvt_ref_f16_value((uint16_t)(h + 1)) : kvt_ref_bf16_value((uint16_t)(h + 1)))
                                 : (f16 ? 65536.0 : 0x1p128);
    const double mid = (lo + hi) / 2; /* 12 (f16) or 9 (bf16) significant bits: exact in fp32 */
    if (mid >= 0x1p128) continue; /* bf16: beyond FLT_MAX (every float there already rounds to Inf, checked below) */
    const float m = (float)mid;
    if ((double)m != mid) return case_failf(r, "test bug: midpoint %.17g not a float", mid);
    const float xs[6] = {m, nextafterf(m, 0.0f), nextafterf(m, INFINITY), -m, -nextafterf(m, 0.0f),
                         -nextafterf(m, INFINITY)};
    for (int i = 0; i < 6; i++)
      if (check_from(f16, xs[i], r, &n)) return 1;
  }
  /* 3. random floats of every exponent (sign, exponent and mantissa uniform), and special values */
  uint64_t s = f16 ? 0xF16F16ull : 0xBF16BF16ull;
  for (int i = 0; i < (1 << 20); i++)
    if (check_from(f16, bits_f((uint32_t)(mix(&s) >> 32)), r, &n)) return 1;
  static const uint32_t special[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u,
                                     0x7F800001u, 0x7FBFFFFFu, 0xFFFFFFFFu, 0x00000001u, 0x80000001u, 0x007FFFFFu,
                                     0x00800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x33000000u, 0x33000001u, 0x337FFFFFu,
                                     0x33400000u, 0x387FC000u, 0x387FE000u, 0x387FF000u, 0x477FE000u, 0x477FEFFFu,
                                     0x477FF000u, 0x477FFFFFu, 0x47800000u, 0x3F800000u, 0x3F808000u, 0x3F818000u,
                                     0x3F80C000u, 0x7F7F8000u, 0x7F7F7FFFu};
  for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
    if (check_from(f16, bits_f(special[i]), r, &n)) return 1;
  /* the rounding direction of every 2^k-spaced float in a binade holding subnormal halves and in the top binade */
  for (uint32_t u = f16 ? 0x33000000u : 0x00000000u; u < (f16 ? 0x38800000u : 0x00800000u); u += 97)
    if (check_from(f16, bits_f(u), r, &n)) return 1;
  for (uint32_t u = f16 ? 0x47000000u : 0x7F000000u; u < (f16 ? 0x47800000u : 0x7F800000u); u += 89)
    if (check_from(f16, bits_f(u), r, &n)) return 1;
  r->checked = 0;
  (void)n;
  return 0;
}

static int run_int8(case_result *r) {
  int8_t q[512], qr[512];
  float x[512];
  uint64_t s = 0x1A8ull;
  /* all-zero rows, +0 and -0 */
  for (int n = 1; n <= 512; n *= 8) {
    for (int i = 0; i < n; i++) x[i] = (i & 1) ? -0.0f : 0.0f, q[i] = 55;
    const float sc = attngen_int8_quantize(x, n, q);
    if (sc != 0.0f || signbit(sc)) return case_failf(r, "attngen_int8_quantize(%d zeros) returned scale %g, not 0", n, (double)sc);
    for (int i = 0; i < n; i++)
      if (q[i] != 0) return case_failf(r, "attngen_int8_quantize(%d zeros): element %d is %d, not 0", n, i, q[i]);
  }
  /* random rows */
  for (int it = 0; it < 20000; it++) {
    const int n = it < 512 ? it + 1 : 1 + (int)(mix(&s) % 512);
    const int ex = (int)(mix(&s) % 221) - 100; /* magnitudes 2^-100 .. 2^120: normal scales */
    const int kind = (int)(mix(&s) % 4);
    for (int i = 0; i < n; i++) {
      float v = ldexpf((float)((double)(int64_t)(mix(&s) >> 40) / (double)(1 << 23) - 1.0), ex);
      if (kind == 1) v = (float)((int)(mix(&s) % 9) - 4) * ldexpf(1.0f, ex);  /* few distinct values */
      if (kind == 2 && (mix(&s) % 3) == 0) v = 0.0f;                          /* sparse */
      x[i] = v;
    }
    if (kind == 3 && n > 1) x[mix(&s) % (uint64_t)n] = -ldexpf(1.0f, ex + 1); /* a single negative maximum */
    float amax = 0.0f;
    int imax = 0;
    for (int i = 0; i < n; i++)
      if (fabsf(x[i]) > amax) amax = fabsf(x[i]), imax = i;
    const float sc = attngen_int8_quantize(x, n, q), want = kvt_ref_quantize(x, n, qr);
    if (memcmp(&sc, &want, sizeof sc) != 0)
      return case_failf(r, "attngen_int8_quantize(row %d, n %d): scale %.9g, max|x| / 127 is %.9g", it, n, (double)sc,
                        (double)want);
    for (int i = 0; i < n; i++)
      if (q[i] != qr[i])
        return case_failf(r, "attngen_int8_quantize(row %d, n %d): element %d = %d for %.9g / %.9g, the reference %d",
                          it, n, i, q[i], (double)x[i], (double)sc, qr[i]);
    if (amax > 0.0f && q[imax] != (x[imax] < 0 ? -127 : 127))
      return case_failf(r, "attngen_int8_quantize(row %d): the largest element %.9g maps to %d, not %+d", it,
                        (double)x[imax], q[imax], x[imax] < 0 ? -127 : 127);
    for (int i = 0; i < n; i++) { /* reads back within half a quantum (+ the fp32 roundings) */
      const double back = (double)q[i] * (double)sc, err = fabs(back - (double)x[i]);
      if (!(err <= (double)sc * (0.5 + 127.0 * 0x1p-23)))
        return case_failf(r, "attngen_int8_quantize(row %d): element %d reads back %.9g for %.9g (scale %.9g)", it, i,
                          back, (double)x[i], (double)sc);
    }
  }
  /* a row of subnormal floats so small that max|x| / 127 underflows: whatever the elements, each reads back within
   * max|x| (< 2^-142) of x, never NaN */
  {
    static const uint32_t tiny[] = {0x00000001u, 0x00000000u, 0x80000001u, 0x00000003u, 0x0000007Eu};
    for (int i = 0; i < 5; i++) x[i] = bits_f(tiny[i]);
    const float sc = attngen_int8_quantize(x, 5, q);
    for (int i = 0; i < 5; i++) {
      const double back = (double)q[i] * (double)sc;
      if (!(fabs(back - (double)x[i]) <= 0x1p-142))
        return case_failf(r, "attngen_int8_quantize(subnormal row): element %d reads back %g for %g (scale %g)", i, back,
                          (double)x[i], (double)sc);
    }
  }
  /* Inf or NaN anywhere in the row: scale NaN */
  static const uint32_t bad[] = {0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00001u, 0x7F800001u};
  for (size_t bi = 0; bi < sizeof bad / sizeof bad[0]; bi++)
    for (int n = 1; n <= 64; n += 21)
      for (int at = 0; at < n; at += 1 + n / 3) {
        for (int i = 0; i < n; i++) x[i] = (float)(i % 7) - 3.0f;
        x[at] = bits_f(bad[bi]);
        const float sc = attngen_int8_quantize(x, n, q);
        if (!isnan(sc))
          return case_failf(r, "attngen_int8_quantize(n %d, 0x%08x at %d): scale %.9g, not NaN", n, (unsigned)bad[bi], at,
                            (double)sc);
      }
  return 0;
}

static int rint_in(uint64_t *s, int lo, int hi) { return lo + (int)(mix(s) % (uint64_t)(hi - lo + 1)); }

/* attngen_kv_from_float / attngen_kv_to_float, every spec type: rows of random length (whole groups) and magnitude
 * stored as the reference rounds or quantizes them (kvt_row_check: every element and scale, bit for bit) and read
 * back as kvt_value reads the stored values; then every refusal, each leaving the output as it was. */
static int run_rows(case_result *r) {
  enum { MAXN = 512 };
  static float x[MAXN], back[MAXN], scales[MAXN], scales0[MAXN];
  static unsigned char y[4 * MAXN], y0[4 * MAXN];
  uint64_t s = 0x5EEDull;
  char why[200];
#define ROW_TYPE_(E, name, api, bytes, group) ATTNGEN_KV_##E,
  static const attngen_kv_dtype types[] = {ATTNGEN_KV_DTYPE_LIST(ROW_TYPE_)};
  for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
    const attngen_kv_dtype t = types[ti];
    const int gfix = kvt_group(t, 3) == 3 ? 0 : kvt_group(t, 3); /* a fixed group's size, else 0 */
    for (int rep = 0; rep < 300; rep++) {
      const int unit = gfix ? gfix : 1; /* whole groups; int8 (a scale per row) and the float types: any n */
      const int n = unit * rint_in(&s, 1, MAXN / unit);
      const double mag = ldexp(1.0, rint_in(&s, -20, 20));
      for (int i = 0; i < n; i++) x[i] = (float)(mag * ((double)(int64_t)(mix(&s) >> 40) / (double)(1 << 23) - 1.0));
      if (rep == 0) memset(x, 0, sizeof x); /* an all-zero row: scale 0, elements 0 */
      const int g = kvt_group(t, n);
      if (attngen_kv_from_float(t, x, n, y, g ? scales : NULL) != ATTNGEN_OK)
        return case_failf(r, "attngen_kv_from_float(%s, n %d): %s", attngen_kv_dtype_name(t), n, attngen_last_error());
      kvt_cache c;
      memset(&c, 0, sizeof c);
      c.t = t, c.d = n, c.group = g, c.k = y, c.ks = scales;
      if (kvt_row_check(&c, 0, 0, 0, x, why, sizeof why))
        return case_failf(r, "attngen_kv_from_float(%s, n %d): %s", attngen_kv_dtype_name(t), n, why);
      if (attngen_kv_to_float(t, y, g ? scales : NULL, n, back) != ATTNGEN_OK)
        return case_failf(r, "attngen_kv_to_float(%s, n %d): %s", attngen_kv_dtype_name(t), n, attngen_last_error());
      for (int i = 0; i < n; i++) {
        const float want = kvt_value(&c, 0, (size_t)i, 0, i);
        if (memcmp(&back[i], &want, sizeof want) && !(isnan(back[i]) && isnan(want)))
          return case_failf(r, "attngen_kv_to_float(%s, n %d)[%d] = %.9g, the stored value is %.9g",
                            attngen_kv_dtype_name(t), n, i, (double)back[i], (double)want);
      }
    }
    /* refusals: nothing written; a NULL argument named */
    const int g = kvt_group(t, 64);
    if (attngen_kv_to_float(t, y, g ? scales : NULL, 64, NULL) != ATTNGEN_ERR_NULL ||
        !strstr(attngen_last_error(), "floats"))
      return case_failf(r, "attngen_kv_to_float(%s, x NULL): \"%s\" does not name the floats", attngen_kv_dtype_name(t),
                        attngen_last_error());
    if (attngen_kv_from_float(t, x, 64, NULL, g ? scales : NULL) != ATTNGEN_ERR_NULL ||
        !strstr(attngen_last_error(), "elements"))
      return case_failf(r, "attngen_kv_from_float(%s, out NULL): \"%s\" does not name the elements",
                        attngen_kv_dtype_name(t), attngen_last_error());
    memset(y, 0xA5, sizeof y), memset(scales, 0xA5, sizeof scales);
    memcpy(y0, y, sizeof y), memcpy(scales0, scales, sizeof scales);
    struct {
      const char *what;
      int st, want;
    } bad[] = {
        {"n 0", attngen_kv_from_float(t, x, 0, y, g ? scales : NULL), ATTNGEN_ERR_SIZE},
        {"out NULL", attngen_kv_from_float(t, x, 64, NULL, g ? scales : NULL), ATTNGEN_ERR_NULL},
        {"x NULL", attngen_kv_to_float(t, y, g ? scales : NULL, 64, NULL), ATTNGEN_ERR_NULL},
        {"kv_dtype not a type", attngen_kv_from_float((attngen_kv_dtype)ATTNGEN_KV_COUNT_, x, 64, y, scales),
         ATTNGEN_ERR_DTYPE},
        {g ? "scales NULL" : "scales given", attngen_kv_from_float(t, x, 64, y, g ? NULL : scales),
         g ? ATTNGEN_ERR_NULL : ATTNGEN_ERR_DTYPE},
        {"n not whole groups", gfix ? attngen_kv_from_float(t, x, gfix + gfix / 2, y, scales) : ATTNGEN_ERR_SIZE,
         ATTNGEN_ERR_SIZE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
      if (bad[i].st != bad[i].want)
        return case_failf(r, "attngen_kv_*_float(%s, %s) returned %s, expected %s", attngen_kv_dtype_name(t),
                          bad[i].what, attngen_status_name(bad[i].st), attngen_status_name(bad[i].want));
    if (memcmp(y, y0, sizeof y) || memcmp(scales, scales0, sizeof scales))
      return case_failf(r, "a refused attngen_kv_*_float(%s) wrote its output", attngen_kv_dtype_name(t));
  }
  return 0;
}

const char *kvt_convert_name(int variant) {
  static const char *names[CONV_COUNT_] = {"f16 (attngen_f16_from_float, attngen_f16_to_float)",
                                           "bf16 (attngen_bf16_from_float, attngen_bf16_to_float)",
                                           "int8 (attngen_int8_quantize)",
                                           "rows of every type (attngen_kv_from_float, attngen_kv_to_float)"};
  return variant >= 0 && variant < CONV_COUNT_ ? names[variant] : "?";
}

int kvt_run_convert(const test_case *c, case_result *r) {
  memset(r, 0, sizeof *r);
  switch (c->variant) {
  case CONV_F16: return run_16(1, r);
  case CONV_BF16: return run_16(0, r);
  case CONV_INT8: return run_int8(r);
  case CONV_ROWS: return run_rows(r);
  }
  return case_failf(r, "unknown conversion variant %d", c->variant);
}

/* ------------------------------------------------------------------------------------------------ */
/* typed refusals of the append and the step */

typedef struct {
  kvt_cache c, c0;          /* the cache and its snapshot */
  float *o, *o0, *lse, *lse0;
  size_t no, nl;
  case_result *r;
  int fail;
} aerr;

static void aexpect(aerr *x, const char *what, int st, const int *want, int nwant, const char *field) {
  if (x->fail) return;
  int ok = 0;
  for (int i = 0; i < nwant; i++) ok |= st == want[i];
  if (!ok) {
    x->fail = case_failf(x->r, "%s: returned %s (%d), expected %s", what, attngen_status_name(st), st,
                         attngen_status_name(want[0]));
    return;
  }
  const char *m = attngen_last_error();
  if (!m || !m[0]) x->fail = case_failf(x->r, "%s: %s without a message", what, attngen_status_name(st));
  else if (field && !kvt_names_field(m, field))
    x->fail = case_failf(x->r, "%s: the message does not name %s: \"%s\"", what, field, m);
  else if (!kvt_same(&x->c, &x->c0))
    x->fail = case_failf(x->r, "%s: returned %s but changed the cache", what, attngen_status_name(st));
  else if (memcmp(x->o, x->o0, x->no * sizeof(float)) || memcmp(x->lse, x->lse0, x->nl * sizeof(float)))
    x->fail = case_failf(x->r, "%s: returned %s but wrote o or lse", what, attngen_status_name(st));
}

/* the 10 K/V fields of attngen_append_args, in the runtime's order */
/* attngen_append_args' K/V cache fields in attngen.h's order: k_cache, v_cache, k_cache_<field> and v_cache_<field> of
 * each encoding (attngen_spec.h's ATTNGEN_KV_ENCODING_LIST), then the scales; field i < APPEND_SCALES belongs to
 * encoding i / 2, the scales to every type with scale groups. */
enum { APPEND_SCALES = 2 * ATTNGEN_KV_ENC_COUNT_, APPEND_FIELDS = APPEND_SCALES + 2 };
static void **append_field(attngen_append_args *a, int i) {
#define APPEND_FIELD_ADDRS_(F, f, api, stored, scale_max) (void **)&a->k_cache_##f, (void **)&a->v_cache_##f,
  void **p[APPEND_FIELDS] = {(void **)&a->k_cache, (void **)&a->v_cache,
                             ATTNGEN_KV_ENCODING_LIST(APPEND_FIELD_ADDRS_)(void **)&a->k_cache_scale,
                             (void **)&a->v_cache_scale};
  return p[i];
}
#define APPEND_FIELD_NAMES_(F, f, api, stored, scale_max) "k_cache_" #f, "v_cache_" #f,
static const char *const append_field_names[APPEND_FIELDS] = {
    "k_cache", "v_cache", ATTNGEN_KV_ENCODING_LIST(APPEND_FIELD_NAMES_) "k_cache_scale", "v_cache_scale"};
static int type_owns(attngen_kv_dtype t, int i) {
  return i < APPEND_SCALES ? i / 2 == (int)attngen_kv_dtype_encoding(t) : kvt_group(t, 64) != 0;
}

int kvt_append_errors(const attngen_kernel *k, case_result *r) {
  const attngen_kv_dtype t = k->shape.kv_dtype;
  const int H = k->shape.heads, KVH = k->shape.kv_heads, D = k->shape.head_dim, B = 2, CAP = 5, N = 2;
  const int g = kvt_group(t, D), G = g ? D / g : 0;
  const size_t krow = (size_t)KVH * D, ncache = (size_t)B * CAP * krow, nsc = (size_t)B * CAP * KVH * G;
  aerr x;
  memset(&x, 0, sizeof x);
  x.r = r;
  x.no = (size_t)B * N * H * D, x.nl = (size_t)B * H * N;
  float *kn = malloc(sizeof(float) * B * N * krow), *vn = malloc(sizeof(float) * B * N * krow);
  float *q = malloc(sizeof(float) * x.no);
  float *junk = malloc(sizeof(float) * (ncache + 16)); /* what a wrong field points at: never read or written */
  x.o = malloc(sizeof(float) * x.no), x.o0 = malloc(sizeof(float) * x.no);
  x.lse = malloc(sizeof(float) * x.nl), x.lse0 = malloc(sizeof(float) * x.nl);
  if (!kn || !vn || !q || !junk || !x.o || !x.o0 || !x.lse || !x.lse0 || kvt_alloc(&x.c, t, D, ncache, ncache, nsc, nsc)) {
    x.fail = case_failf(r, "out of memory");
    goto done;
  }
  uint64_t s = 0xE44ull ^ (uint64_t)t;
  for (size_t i = 0; i < (size_t)B * N * krow; i++)
    kn[i] = (float)((double)(int64_t)(mix(&s) >> 40) / (double)(1 << 23) - 1.0),
    vn[i] = (float)((double)(int64_t)(mix(&s) >> 40) / (double)(1 << 23) - 1.0);
  for (size_t i = 0; i < x.no; i++) q[i] = (float)((double)(int64_t)(mix(&s) >> 40) / (double)(1 << 23) - 1.0);
  for (size_t i = 0; i < ncache + 16; i++) junk[i] = 3.0f;
  for (size_t i = 0; i < x.no; i++) x.o[i] = NAN;
  for (size_t i = 0; i < x.nl; i++) x.lse[i] = NAN;
  memcpy(x.o0, x.o, x.no * sizeof(float)), memcpy(x.lse0, x.lse, x.nl * sizeof(float));
  if (kvt_clone(&x.c0, &x.c)) {
    x.fail = case_failf(r, "out of memory");
    goto done;
  }
  const int32_t len[2] = {1, 3};
  attngen_append_args base, a;
  memset(&base, 0, sizeof base);
  base.batch = B, base.n_new = N, base.kv_capacity = CAP, base.cache_len = len, base.k_new = kn, base.v_new = vn;
  kvt_set_append(&base, &x.c, 0, 0, 0, 0);
  static const int W_DTYPE[] = {ATTNGEN_ERR_DTYPE}, W_NULL[] = {ATTNGEN_ERR_NULL}, W_STRIDE[] = {ATTNGEN_ERR_STRIDE},
                   W_ALIAS[] = {ATTNGEN_ERR_ALIAS}, W_WRONG[] = {ATTNGEN_ERR_DTYPE};
  char what[160];
  for (int i = 0; i < APPEND_FIELDS && !x.fail; i++) {
    a = base;
    void **f = append_field(&a, i);
    if (type_owns(t, i)) { /* a field of the type missing */
      *f = NULL;
      snprintf(what, sizeof what, "attngen_kv_append(%s cache, %s = NULL)", attngen_kv_dtype_name(t), append_field_names[i]);
      aexpect(&x, what, attngen_kv_append(k, &a), W_NULL, 1, append_field_names[i]);
    } else { /* another type's field set as well */
      *f = junk;
      snprintf(what, sizeof what, "attngen_kv_append(%s cache, %s set too)", attngen_kv_dtype_name(t), append_field_names[i]);
      aexpect(&x, what, attngen_kv_append(k, &a), W_DTYPE, 1, append_field_names[i]);
    }
  }
  /* a cache of another type in place of this one (its fields only): refused with ERR_DTYPE, the wrong type named
   * before the kernel's missing fields */
  {
    a = base;
    kvt_cache other;
    memset(&other, 0, sizeof other);
    other.t = t == ATTNGEN_KV_F32 ? ATTNGEN_KV_F16 : ATTNGEN_KV_F32;
    other.k = (unsigned char *)junk, other.v = (unsigned char *)(junk + 8), other.ks = junk, other.vs = junk + 8;
    kvt_set_append(&a, &other, 0, 0, 0, 0);
    snprintf(what, sizeof what, "attngen_kv_append(%s kernel, a %s cache)", attngen_kv_dtype_name(t),
             attngen_kv_dtype_name(other.t));
    aexpect(&x, what, attngen_kv_append(k, &a), W_WRONG, 1, NULL);
  }
  if (g && !x.fail) { /* the scales' strides and ranges */
    a = base;
    a.k_cache_scale_stride.seq = -1;
    aexpect(&x, "attngen_kv_append(k_cache_scale_stride.seq = -1)", attngen_kv_append(k, &a), W_STRIDE, 1, NULL);
    if (KVH * G > 1) {
      a = base;
      a.v_cache_scale_stride.seq = 1; /* row t + 1 starts at row t's second scale */
      aexpect(&x, "attngen_kv_append(v_cache_scale_stride.seq = 1: scale rows overlap)", attngen_kv_append(k, &a),
              W_STRIDE, 1, NULL);
    }
    a = base;
    a.k_cache_scale = x.c.vs + 1;
    aexpect(&x, "attngen_kv_append(k_cache_scale inside v_cache_scale)", attngen_kv_append(k, &a), W_ALIAS, 1, NULL);
    a = base;
    a.v_cache_scale = kn;
    aexpect(&x, "attngen_kv_append(v_cache_scale == k_new)", attngen_kv_append(k, &a), W_ALIAS, 1, NULL);
    a = base;
    a.k_cache_scale = (float *)(void *)x.c.k;
    aexpect(&x, "attngen_kv_append(k_cache_scale == k_cache_i8)", attngen_kv_append(k, &a), W_ALIAS, 1, NULL);
  }
  /* the step: the same refusals, before its attention or its append writes anything */
  if (!x.fail && (attngen_mask_features(k->shape.mask) & ATTNGEN_FEATURE_CAUSAL)) {
    attngen_step_args s0, st;
    memset(&s0, 0, sizeof s0);
    static const float zero_sinks[ATTNGEN_MAX_HEADS]; /* sink logits of 0: a kernel with SINKS needs some */
    s0.kv = base, s0.q = q, s0.o = x.o, s0.lse = x.lse;
    if (k->shape.features & ATTNGEN_ATTN_SINKS) s0.sinks = zero_sinks;
    for (int i = 0; i < 10 && !x.fail; i++) {
      st = s0;
      void **f = append_field(&st.kv, i);
      if (type_owns(t, i)) {
        if (i >= 8 && !g) continue;
        *f = NULL;
        snprintf(what, sizeof what, "attngen_step(%s cache, %s = NULL)", attngen_kv_dtype_name(t), append_field_names[i]);
        aexpect(&x, what, attngen_step(k, &st), W_NULL, 1, append_field_names[i]);
      } else {
        *f = junk;
        snprintf(what, sizeof what, "attngen_step(%s cache, %s set too)", attngen_kv_dtype_name(t), append_field_names[i]);
        aexpect(&x, what, attngen_step(k, &st), W_DTYPE, 1, append_field_names[i]);
      }
    }
    if (g && !x.fail) {
      st = s0;
      st.o = x.c.ks; /* o over the K scales */
      aexpect(&x, "attngen_step(o == k_cache_scale)", attngen_step(k, &st), W_ALIAS, 1, NULL);
    }
    /* then a valid step on top of the untouched cache: it appends exactly the new rows, as the references say */
    if (!x.fail) {
      st = s0;
      int rc = attngen_step(k, &st);
      if (rc != ATTNGEN_OK)
        x.fail = case_failf(r, "attngen_step after the refusals: %s (%s)", attngen_status_name(rc), attngen_last_error());
    }
  } else if (!x.fail) {
    int rc = attngen_kv_append(k, &base);
    if (rc != ATTNGEN_OK)
      x.fail = case_failf(r, "attngen_kv_append after the refusals: %s (%s)", attngen_status_name(rc), attngen_last_error());
  }
  if (!x.fail && k->params.rope.style == ATTNGEN_ROPE_NONE) {
    char why[256];
    for (int b = 0; b < B && !x.fail; b++)
      for (int row = 0; row < CAP && !x.fail; row++)
        for (int h = 0; h < KVH && !x.fail; h++) {
          const size_t e = ((size_t)b * CAP + row) * krow + (size_t)h * D, sc = (((size_t)b * CAP + row) * KVH + h) * G;
          const int i = row - len[b];
          for (int w = 0; w < 2 && !x.fail; w++) {
            if (i < 0 || i >= N) {
              if (!kvt_row_poisoned(&x.c, w, e, sc))
                x.fail = case_failf(r, "append wrote row %d of sequence %d (length %d, %d new)", row, b, len[b], N);
            } else if (kvt_row_check(&x.c, w, e, sc, (w ? vn : kn) + ((size_t)b * N + i) * krow + (size_t)h * D, why,
                                     sizeof why))
              x.fail = case_failf(r, "row %d head %d of sequence %d: %s", row, h, b, why);
          }
        }
  }
done:
  kvt_free(&x.c), kvt_free(&x.c0);
  free(kn), free(vn), free(q), free(junk), free(x.o), free(x.o0), free(x.lse), free(x.lse0);
  return x.fail;
}

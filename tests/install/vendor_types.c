/* SPDX-License-Identifier: MIT */
/* tests/install/vendor_types.c: run by tests/test_install.sh on `attngen configs/gpt2.lua --vendor`, whose config lists
 * fp32 caches only, so the vendored runtime's generic kernels read fp32 only. Checks, for a shape outside gpt2's
 * table (head_dim 48):
 *   1. an fp32 cache falls back to a generic kernel, and that kernel matches a float64 reference;
 *   2. an int8 cache (attngen_select and attngen_select_generic alike) is refused with ATTNGEN_ERR_UNSUPPORTED and a
 *      message that names int8 and the types the build does read.
 * Exit status 0 when both hold. Plain C99. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attngen.h"
#include "attngen_gpt2.h"

#define HEADS 4
#define KV_HEADS 2
#define HEAD_DIM 48
#define KV_LEN 7

static int failures;

static void check(int ok, const char *what)
{
  printf("  %-66s %s\n", what, ok ? "ok" : "FAILED");
  if (!ok) failures++;
}

static attngen_shape decode_shape(attngen_kv_dtype t)
{
  attngen_shape s;
  memset(&s, 0, sizeof s);
  s.heads = HEADS, s.kv_heads = KV_HEADS, s.head_dim = HEAD_DIM;
  s.mask = ATTNGEN_MASK_NONE, s.phase = ATTNGEN_PHASE_DECODE, s.kv_dtype = t;
  return s;
}

/* One query of every head against KV_LEN dense fp32 rows, through the generic fallback; the float64 reference is
 * written here from the definition. Tolerance 1e-5: fp32 products summed over 48 terms and 7 keys. */
static void fp32_falls_back(void)
{
  static float q[HEADS * HEAD_DIM], k[KV_LEN * KV_HEADS * HEAD_DIM], v[KV_LEN * KV_HEADS * HEAD_DIM], o[HEADS * HEAD_DIM];
  const attngen_shape s = decode_shape(ATTNGEN_KV_F32);
  attngen_kernel kern;
  attngen_args a;
  double worst = 0.0;
  int i, h, j, d;
  for (i = 0; i < HEADS * HEAD_DIM; ++i) q[i] = (float)sin(0.37 * i);
  for (i = 0; i < KV_LEN * KV_HEADS * HEAD_DIM; ++i) k[i] = (float)cos(0.11 * i), v[i] = (float)sin(0.23 * i + 1.0);
  check(attngen_select(&attngen_table_gpt2, &s, &kern) == ATTNGEN_OK, "fp32 cache, head_dim 48: a generic kernel");
  if (failures) {
    printf("  %s\n", attngen_last_error());
    return;
  }
  check(strstr(kern.info->name, "generic") != NULL, kern.info->name);
  memset(&a, 0, sizeof a);
  a.batch = 1, a.q_len = 1, a.kv_len = KV_LEN, a.q = q, a.k = k, a.v = v, a.o = o;
  check(attngen_run(&kern, &a) == ATTNGEN_OK, "it runs");
  for (h = 0; h < HEADS; ++h) {
    const int g = h / (HEADS / KV_HEADS);
    double s_[KV_LEN], m = -INFINITY, sum = 0.0;
    for (j = 0; j < KV_LEN; ++j) {
      double dot = 0.0;
      for (d = 0; d < HEAD_DIM; ++d) dot += (double)q[h * HEAD_DIM + d] * k[(j * KV_HEADS + g) * HEAD_DIM + d];
      s_[j] = dot / sqrt((double)HEAD_DIM);
      if (s_[j] > m) m = s_[j];
    }
    for (j = 0; j < KV_LEN; ++j) sum += s_[j] = exp(s_[j] - m);
    for (d = 0; d < HEAD_DIM; ++d) {
      double acc = 0.0, err;
      for (j = 0; j < KV_LEN; ++j) acc += s_[j] * v[(j * KV_HEADS + g) * HEAD_DIM + d];
      err = fabs(acc / sum - o[h * HEAD_DIM + d]);
      if (!(err <= worst)) worst = err; /* NaN too */
    }
  }
  printf("  fp32 generic kernel: max |err| %.3g against float64 (tolerance 1e-5)\n", worst);
  check(worst <= 1e-5, "it matches the float64 reference");
}

static void int8_refused(int generic)
{
  const attngen_shape s = decode_shape(ATTNGEN_KV_INT8);
  attngen_kernel kern;
  const int st = generic ? attngen_select_generic(&s, ATTNGEN_ISA_SCALAR, &kern)
                         : attngen_select(&attngen_table_gpt2, &s, &kern);
  const char *msg = attngen_last_error();
  printf("  %s: %s\n", generic ? "attngen_select_generic" : "attngen_select", msg);
  check(st == ATTNGEN_ERR_UNSUPPORTED, "int8 cache: refused as unsupported");
  check(strstr(msg, "no generic kernel reads kv_dtype int8:") != NULL && strstr(msg, "read f32 (") != NULL,
        "the message names int8 and the type the build reads");
}

int main(void)
{
  printf("vendored runtime of an fp32-only model:\n");
  fp32_falls_back();
  int8_refused(0);
  int8_refused(1);
  printf(failures ? "%d check(s) failed\n" : "all checks passed\n", failures);
  return failures ? 1 : 0;
}

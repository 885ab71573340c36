/* SPDX-License-Identifier: MIT */
/* K/V cache storage types in the tests: independent float64 references of the conversions (f16, bf16, int8 with
 * fp32 scales), typed cache buffers with poison in every element no call may read or write, and the CK_CONVERT and
 * typed-refusal checks. The numeric, thread, error and step cases of cases.c and rope_cases.c fill their typed
 * caches through attngen_kv_append, check every stored element against these references bit for bit, and compute
 * the float64 reference on the dequantized stored values (what the kernels read), so CASE_TOL applies unchanged. */
#ifndef ATTNGEN_TEST_KV_TYPES_H
#define ATTNGEN_TEST_KV_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "cases.h"

/* CK_CONVERT variants */
enum { CONV_F16, CONV_BF16, CONV_INT8, CONV_ROWS, CONV_COUNT_ };
const char *kvt_convert_name(int variant);
int kvt_run_convert(const test_case *c, case_result *r);

/* bytes per element; elements per scale (0: the type has no scales; int8: head_dim) */
int kvt_bytes(attngen_kv_dtype t);
int kvt_group(attngen_kv_dtype t, int head_dim);
/* may a generic kernel of type t run head_dim d (grouped types need whole groups) */
int kvt_fits(attngen_kv_dtype t, int head_dim);

/* The references, written from the IEEE 754 definitions in float64 (no bit tricks shared with the runtime):
 * binary32 -> binary16 / bfloat16 rounded to nearest, ties to even, overflow to Inf; a NaN gives some quiet NaN
 * (callers check NaN-ness, not the payload). The value of a 16-bit pattern, as a double (NaN for NaN patterns). */
uint16_t kvt_ref_f16_bits(float x);
uint16_t kvt_ref_bf16_bits(float x);
double kvt_ref_f16_value(uint16_t h);
double kvt_ref_bf16_value(uint16_t h);
/* attngen.h's int8 rule: scale = max|x| / 127 (fp32), q[i] = x[i] / scale (fp32) rounded to nearest even; an
 * all-zero group gives scale 0 and zeros, a group holding Inf or NaN scale NaN (its q are not specified). */
float kvt_ref_quantize(const float *x, int n, int8_t *q);

/* A typed K and V cache (f32 included): element buffers and, for int8 types, fp32 scale buffers. */
typedef struct {
  attngen_kv_dtype t;
  int d, group;          /* group 0: no scales */
  unsigned char *k, *v;  /* nk, nv elements of kvt_bytes(t) */
  float *ks, *vs;        /* nks, nvs scales */
  size_t nk, nv, nks, nvs;
} kvt_cache;

/* Allocates and poisons (NaN patterns; int8 elements 0x7F with NaN scales). Returns -1 when out of memory. */
int kvt_alloc(kvt_cache *c, attngen_kv_dtype t, int d, size_t nk, size_t nv, size_t nks, size_t nvs);
void kvt_free(kvt_cache *c);
void kvt_poison(kvt_cache *c);
/* a deep copy (for before/after comparisons), and whether two caches hold the same bytes */
int kvt_clone(kvt_cache *dst, const kvt_cache *src);
int kvt_same(const kvt_cache *a, const kvt_cache *b);
/* Points the attngen_args / attngen_append_args fields of type c->t at element offsets ek, ev and scale offsets eks,
 * evs (and leaves every field of the other types NULL). */
void kvt_set_args(attngen_args *a, const kvt_cache *c, size_t ek, size_t ev, size_t eks, size_t evs);
void kvt_set_append(attngen_append_args *a, kvt_cache *c, size_t ek, size_t ev, size_t eks, size_t evs);
/* Element e of K (which 0) or V (1), dequantized in fp32 as the kernels read it (int8: (float)q * scale), with its
 * row's scales at scale offset s (element e is column `col` of its row). */
float kvt_value(const kvt_cache *c, int which, size_t e, size_t s, int col);
/* Does the row at element offset e (scales at s) hold the conversion of x, bit for bit? 0 yes; else 1 and why. */
int kvt_row_check(const kvt_cache *c, int which, size_t e, size_t s, const float *x, char *why, size_t nwhy);
/* Is the row at element offset e (scales at s) still all poison? */
int kvt_row_poisoned(const kvt_cache *c, int which, size_t e, size_t s);
/* Largest |stored - y| a row of type t may hold for x = y + (up to err_in) after rounding / quantizing (for rows the
 * runtime computed in fp32 before storing, e.g. rotated K): per element of value |y| in a row of max |y| = m. */
double kvt_store_bound(attngen_kv_dtype t, double y, double m, double err_in);

/* Every typed-field refusal of attngen_kv_append and attngen_step for kernel k (a cache of k's type): another type's
 * field set, a field of the type NULL, int8 scales missing; each returns its code, a message naming the field,
 * and leaves caches, o and lse byte-identical. 0 = pass. */
int kvt_append_errors(const attngen_kernel *k, case_result *r);

/* Does message m name `field` as a word (not inside a longer identifier)? */
int kvt_names_field(const char *m, const char *field);

#endif

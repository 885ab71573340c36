/* SPDX-License-Identifier: MIT */
/* A paged KV cache as a serving engine keeps it: one pool of pages of 16 rows for every sequence, a block table per
 * sequence, and a small page allocator with reference counts.
 *   1. A 40-token prompt is prefilled once, into sequence 0's pages (attngen_step, paged prefill kernel).
 *   2. Sequence 1 starts from the same prompt: its block table names the prompt's 2 full pages (shared, reference
 *      count 2) and a copy of the partly filled third page (copy on write: both sequences append to it).
 *   3. 30 decode steps for both sequences in one batch (attngen_step, paged decode kernel): each new row goes to
 *      its sequence's page, a new page is taken from the pool when a sequence crosses a page boundary.
 * Checked: every step's output is the same bits as the same calls on two contiguous caches, and the last step is
 * within 1e-5 of a float64 reference written here. Exit status 0 = all match. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attngen.h"
#include "attngen_paged_example.h"

enum { H = 8, KVH = 2, D = 64, PAGE = 16, POOL = 16, PROMPT = 40, STEPS = 30, MAX_PAGES = 8, CAP = MAX_PAGES * PAGE };
#define ROW (KVH * D) /* floats per cache row */

/* ---- the page allocator: a free list and a reference count per page */
typedef struct {
  int32_t free_list[POOL];
  int n_free;
  int refs[POOL];
} page_pool;

static void pool_init(page_pool *p) {
  p->n_free = POOL;
  for (int i = 0; i < POOL; i++) p->free_list[i] = POOL - 1 - i, p->refs[i] = 0;
}
static int32_t page_take(page_pool *p) {
  if (p->n_free == 0) {
    fprintf(stderr, "page pool exhausted\n");
    exit(2);
  }
  const int32_t page = p->free_list[--p->n_free];
  p->refs[page] = 1;
  return page;
}
static void page_share(page_pool *p, int32_t page) { p->refs[page]++; }
static void page_drop(page_pool *p, int32_t page) {
  if (--p->refs[page] == 0) p->free_list[p->n_free++] = page;
}

static uint32_t rng = 2024u;
static float uniform(void) { /* [-1, 1), 24 bits */
  rng = rng * 1664525u + 1013904223u;
  return (float)(rng >> 8) / 8388608.0f - 1.0f;
}
static void fill(float *x, size_t n) {
  for (size_t i = 0; i < n; i++) x[i] = uniform();
}

static int select_kernel(attngen_phase phase, int page_size, attngen_kernel *k) {
  attngen_shape s = {0};
  s.heads = H, s.kv_heads = KVH, s.head_dim = D, s.mask = ATTNGEN_MASK_CAUSAL, s.phase = phase, s.page_size = page_size;
  if (attngen_select(&attngen_table_paged_example, &s, k) != ATTNGEN_OK) {
    fprintf(stderr, "select: %s\n", attngen_last_error());
    return 1;
  }
  return 0;
}

/* One step of n tokens per sequence for `batch` sequences at lengths len, on the paged and on the contiguous
 * caches; the two outputs must be the same bits. */
static int step(const attngen_kernel *kp, const attngen_kernel *kc, int batch, int n, const int32_t *len,
                const float *q, const float *k, const float *v, float *kpool, float *vpool, const int32_t *table,
                float *kcont, float *vcont, float *o) {
  static float oc[2 * PROMPT * H * D];
  attngen_step_args s;
  memset(&s, 0, sizeof s);
  s.kv.batch = batch, s.kv.n_new = n, s.kv.cache_len = len, s.kv.k_new = k, s.kv.v_new = v, s.q = q;
  s.kv.k_cache = kpool, s.kv.v_cache = vpool, s.o = o;
  s.kv.pages.block_table = table, s.kv.pages.max_pages = MAX_PAGES, s.kv.pages.num_pages = POOL;
  s.kv.pages.page_size = PAGE;
  if (attngen_step(kp, &s) != ATTNGEN_OK) return fprintf(stderr, "paged step: %s\n", attngen_last_error()), 1;
  memset(&s.kv.pages, 0, sizeof s.kv.pages);
  s.kv.kv_capacity = CAP, s.kv.k_cache = kcont, s.kv.v_cache = vcont, s.o = oc;
  if (attngen_step(kc, &s) != ATTNGEN_OK) return fprintf(stderr, "contiguous step: %s\n", attngen_last_error()), 1;
  if (memcmp(o, oc, sizeof(float) * (size_t)batch * n * H * D)) {
    fprintf(stderr, "step at %d: the paged cache's output differs from the contiguous cache's\n", (int)len[0]);
    return 1;
  }
  return 0;
}

int main(void) {
  static float kpool[POOL * PAGE * ROW], vpool[POOL * PAGE * ROW];
  static float kcont[2 * CAP * ROW], vcont[2 * CAP * ROW];
  static float tokens_k[2][CAP * ROW], tokens_v[2][CAP * ROW]; /* every row each sequence was given, for the check */
  static float q[2 * PROMPT * H * D], k[2 * PROMPT * ROW], v[2 * PROMPT * ROW], o[2 * PROMPT * H * D];
  int32_t table[2 * MAX_PAGES], len[2] = {0, 0};
  attngen_kernel prefill, prefill_c, decode, decode_c;
  page_pool pool;
  if (select_kernel(ATTNGEN_PHASE_PREFILL, PAGE, &prefill) || select_kernel(ATTNGEN_PHASE_PREFILL, 0, &prefill_c) ||
      select_kernel(ATTNGEN_PHASE_DECODE, PAGE, &decode) || select_kernel(ATTNGEN_PHASE_DECODE, 0, &decode_c))
    return 1;
  printf("paged example: %s, %s (pages of %d rows, a pool of %d)\n", prefill.info->name, decode.info->name, PAGE, POOL);
  pool_init(&pool);
  for (int i = 0; i < 2 * MAX_PAGES; i++) table[i] = -1; /* no page yet */

  /* 1. the prompt, once, into sequence 0's pages (both contiguous caches get it, as two sequences would) */
  for (int p = 0; p < (PROMPT + PAGE - 1) / PAGE; p++) table[p] = page_take(&pool);
  fill(q, (size_t)PROMPT * H * D), fill(k, (size_t)PROMPT * ROW), fill(v, (size_t)PROMPT * ROW);
  memcpy(tokens_k[0], k, sizeof(float) * PROMPT * ROW), memcpy(tokens_v[0], v, sizeof(float) * PROMPT * ROW);
  memcpy(tokens_k[1], k, sizeof(float) * PROMPT * ROW), memcpy(tokens_v[1], v, sizeof(float) * PROMPT * ROW);
  if (step(&prefill, &prefill_c, 1, PROMPT, len, q, k, v, kpool, vpool, table, kcont, vcont, o)) return 1;
  {
    attngen_append_args a; /* the prompt into sequence 1's contiguous cache too */
    memset(&a, 0, sizeof a);
    a.batch = 1, a.n_new = PROMPT, a.kv_capacity = CAP, a.cache_len = len, a.k_new = k, a.v_new = v;
    a.k_cache = kcont + CAP * ROW, a.v_cache = vcont + CAP * ROW;
    if (attngen_kv_append(&decode_c, &a) != ATTNGEN_OK) return fprintf(stderr, "append: %s\n", attngen_last_error()), 1;
  }
  len[0] = len[1] = PROMPT;

  /* 2. sequence 1 shares the full pages and copies the partly filled one */
  for (int p = 0; p < PROMPT / PAGE; p++) table[MAX_PAGES + p] = table[p], page_share(&pool, table[p]);
  {
    const int p = PROMPT / PAGE, copy = page_take(&pool);
    memcpy(kpool + (size_t)copy * PAGE * ROW, kpool + (size_t)table[p] * PAGE * ROW, sizeof(float) * PAGE * ROW);
    memcpy(vpool + (size_t)copy * PAGE * ROW, vpool + (size_t)table[p] * PAGE * ROW, sizeof(float) * PAGE * ROW);
    table[MAX_PAGES + p] = copy;
  }
  printf("prompt of %d tokens in %d pages; sequence 1 shares %d of them (%d pages taken of %d)\n", PROMPT,
         (PROMPT + PAGE - 1) / PAGE, PROMPT / PAGE, POOL - pool.n_free, POOL);

  /* 3. decode both, taking a page whenever a sequence's next row starts one */
  for (int t = 0; t < STEPS; t++) {
    for (int b = 0; b < 2; b++)
      if (len[b] % PAGE == 0) table[b * MAX_PAGES + len[b] / PAGE] = page_take(&pool);
    fill(q, 2 * H * D), fill(k, 2 * ROW), fill(v, 2 * ROW);
    for (int b = 0; b < 2; b++) {
      memcpy(tokens_k[b] + (size_t)len[b] * ROW, k + b * ROW, sizeof(float) * ROW);
      memcpy(tokens_v[b] + (size_t)len[b] * ROW, v + b * ROW, sizeof(float) * ROW);
    }
    if (step(&decode, &decode_c, 2, 1, len, q, k, v, kpool, vpool, table, kcont, vcont, o)) return 1;
    len[0]++, len[1]++;
  }

  /* the last step against float64: query b at position len[b] - 1 sees rows 0 .. len[b] - 1 */
  double worst = 0.0;
  for (int b = 0; b < 2; b++)
    for (int h = 0; h < H; h++) {
      const int kh = h / (H / KVH);
      double s[CAP], m = -INFINITY, sum = 0.0;
      for (int j = 0; j < len[b]; j++) {
        double dot = 0.0;
        for (int c = 0; c < D; c++) dot += (double)q[(b * H + h) * D + c] * tokens_k[b][(size_t)j * ROW + kh * D + c];
        s[j] = dot / sqrt((double)D);
        m = s[j] > m ? s[j] : m;
      }
      for (int j = 0; j < len[b]; j++) sum += exp(s[j] - m);
      for (int c = 0; c < D; c++) {
        double acc = 0.0;
        for (int j = 0; j < len[b]; j++) acc += exp(s[j] - m) / sum * tokens_v[b][(size_t)j * ROW + kh * D + c];
        const double e = fabs(acc - o[(b * H + h) * D + c]);
        worst = e > worst ? e : worst;
      }
    }
  for (int i = 0; i < 2 * MAX_PAGES; i++)
    if (table[i] >= 0) page_drop(&pool, table[i]);
  printf("%d decode steps: the same bits as contiguous caches; last step vs float64: max error %.3g; pages back in the "
         "pool: %d of %d\n", STEPS, worst, pool.n_free, POOL);
  if (!(worst <= 1e-5) || pool.n_free != POOL) return fprintf(stderr, "paged example: FAILED\n"), 1;
  printf("paged example: all results agree\n");
  return 0;
}

/* SPDX-License-Identifier: MIT */
/* Criterion suite over the shared case list (cases.c): one parameterized test whose parameters are groups of
 * consecutive cases, each a kernel's, or several kernels' of one table until the group holds GROUP_MIN_CASES (one
 * process per group: each process builds the case list again, about as long as 30 cases take); groups run in
 * parallel (criterion --jobs N; default: all CPUs). Every case of a group runs, each with its own cr_expect.
 *
 * A failing case reports its index and description (kernel name, lengths, mask, layout) and the reason
 * (max error with its position, the wrong status, ...). Environment:
 *   ATTNGEN_TEST_FILTER=substr   only the cases whose description contains substr
 *   ATTNGEN_TEST_SAMPLE=n        every n-th case of each kernel (its first included): every kernel still runs, in
 *                                1/n of the time (make test runs the clang build so: the gcc build runs them all)
 * After the run, the maximum error over all numeric cases is printed (children append their results to
 * a temporary file that the POST_ALL hook reads). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <criterion/logging.h>
#include <criterion/parameterized.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cases.h"

static test_case *g_cases;
static int *g_sel, g_nsel = -1;

typedef struct {
  int begin, end; /* [begin, end) into g_sel */
} case_group;
static case_group *g_groups;
static int g_ngroups;

enum { GROUP_MIN_CASES = 32 };

static int same_kernel(const test_case *a, const test_case *b) {
  return a->kind == b->kind && a->table == b->table && a->kernel_index == b->kernel_index && a->isa == b->isa &&
         a->shape.heads == b->shape.heads && a->shape.kv_heads == b->shape.kv_heads &&
         a->shape.head_dim == b->shape.head_dim && a->shape.mask == b->shape.mask && a->shape.phase == b->shape.phase &&
         a->shape.kv_dtype == b->shape.kv_dtype && a->shape.page_size == b->shape.page_size;
}

static void ensure_cases(void) {
  if (g_nsel >= 0) return;
  int n = cases_build(CASES_FULL, &g_cases);
  const char *filter = getenv("ATTNGEN_TEST_FILTER");
  g_sel = malloc(sizeof(int) * (size_t)(n + 1));
  g_nsel = 0;
  for (int i = 0; i < n; i++) {
    char name[256];
    case_name(&g_cases[i], name, sizeof name);
    if (!filter || !filter[0] || strstr(name, filter)) g_sel[g_nsel++] = i;
  }
  const char *sample_env = getenv("ATTNGEN_TEST_SAMPLE");
  const int sample = sample_env && atoi(sample_env) > 1 ? atoi(sample_env) : 1;
  g_groups = malloc(sizeof(case_group) * (size_t)(g_nsel + 1));
  g_ngroups = 0;
  int kept = 0;
  for (int s = 0, pos = 0, prev = -1; s < g_nsel; s++, pos++) {
    const int idx = g_sel[s];
    const test_case *c = &g_cases[idx];
    if (prev < 0 || !same_kernel(c, &g_cases[prev])) pos = 0; /* the kernel's first case */
    prev = idx;
    if (pos % sample) continue; /* the kernel's other cases: left to the full run */
    g_sel[kept] = idx;
    const case_group *last = g_ngroups > 0 ? &g_groups[g_ngroups - 1] : NULL;
    const test_case *first = last ? &g_cases[g_sel[last->begin]] : NULL;
    if (last && (same_kernel(c, first) || (c->table == first->table && last->end - last->begin < GROUP_MIN_CASES)))
      g_groups[g_ngroups - 1].end = kept + 1;
    else
      g_groups[g_ngroups++] = (case_group){kept, kept + 1};
    kept++;
  }
  g_nsel = kept;
}

#define ERRLOG_ENV "ATTNGEN_TEST_ERRLOG"
static char g_errlog[256];

ReportHook(PRE_ALL)(struct criterion_test_set *set) {
  (void)set;
  snprintf(g_errlog, sizeof g_errlog, "/tmp/attngen_test_errlog_XXXXXX");
  int fd = mkstemp(g_errlog);
  if (fd < 0) {
    g_errlog[0] = 0;
    return;
  }
  close(fd);
  setenv(ERRLOG_ENV, g_errlog, 1);
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats) {
  (void)stats;
  if (!g_errlog[0]) return;
  FILE *f = fopen(g_errlog, "r");
  double max_err = 0.0, max_lse = 0.0, wide_err = 0.0, wide_ratio = 0.0;
  int n = 0, nwide = 0;
  char worst[300] = "-", wide_worst[300] = "-";
  if (f) {
    char line[400];
    while (fgets(line, sizeof line, f)) {
      double e, l, tol;
      int consumed = 0;
      if (sscanf(line, "%lg %lg %lg %n", &e, &l, &tol, &consumed) < 3) continue;
      if (tol > CASE_TOL) { /* RANGE_WIDE: its own tolerance (cases.c), reported apart */
        nwide++;
        if (e > wide_err) wide_err = e;
        if (e / tol > wide_ratio) {
          wide_ratio = e / tol;
          snprintf(wide_worst, sizeof wide_worst, "%s", line + consumed);
          wide_worst[strcspn(wide_worst, "\n")] = 0;
        }
        continue;
      }
      n++;
      if (e > max_err) {
        max_err = e;
        snprintf(worst, sizeof worst, "%s", line + consumed);
        worst[strcspn(worst, "\n")] = 0;
      }
      if (l > max_lse) max_lse = l;
    }
    fclose(f);
  }
  unlink(g_errlog);
  if (nwide)
    fprintf(stderr,
            "[attngen] large scores (range=wide, |scores| up to %g): max error %.3g over %d checks; worst relative to "
            "its tolerance CASE_TOL_WIDE(head_dim): %.3f (%s)\n",
            CASE_WIDE_SMAX, wide_err, nwide, wide_ratio, wide_worst);
  fprintf(stderr,
          "[attngen] max |out - ref| / max(1, max|ref|) = %.3g over %d numeric checks (worst: %s); "
          "max lse error %.3g; tolerance %.0e\n",
          max_err, n, worst, max_lse, CASE_TOL);
}

static void log_error(const test_case *c, const case_result *r) {
  const char *path = getenv(ERRLOG_ENV);
  if (!path || !r->checked) return;
  char name[256], line[400];
  case_name(c, name, sizeof name);
  int len = snprintf(line, sizeof line, "%.6g %.6g %.6g %s\n", r->max_err, r->max_lse_err, r->tol, name);
  if (len <= 0) return;
  if (len >= (int)sizeof line) len = (int)sizeof line - 1;
  int fd = open(path, O_WRONLY | O_APPEND);
  if (fd < 0) return;
  ssize_t w = write(fd, line, (size_t)len); /* one short O_APPEND write: atomic between processes */
  (void)w;
  close(fd);
}

static void free_params(struct criterion_test_params *p) { cr_free(p->params); }

ParameterizedTestParameters(attngen, cases) {
  ensure_cases();
  size_t n = g_ngroups > 0 ? (size_t)g_ngroups : 1;
  case_group *p = cr_malloc(sizeof(case_group) * n);
  for (size_t i = 0; i < n; i++) p[i] = g_ngroups > 0 ? g_groups[i] : (case_group){0, 0};
  return cr_make_param_array(case_group, p, n, free_params);
}

ParameterizedTest(case_group *g, attngen, cases, .timeout = 600.0) {
  ensure_cases();
  if (g->begin >= g->end) cr_skip_test("no test cases selected");
  for (int s = g->begin; s < g->end; s++) {
    const int idx = g_sel[s];
    const test_case *c = &g_cases[idx];
    char name[256];
    case_name(c, name, sizeof name);
    case_result r;
    int fail = case_run(c, &r);
    log_error(c, &r);
    cr_expect(!fail, "case %d: %s: %s", idx, name, r.msg);
    if (!fail && r.checked) cr_log_info("case %d: %s: max error %.3g, lse %.3g", idx, name, r.max_err, r.max_lse_err);
  }
}

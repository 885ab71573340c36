/* SPDX-License-Identifier: MIT */
/* A plain runner over the shared case list (cases.c), for builds where Criterion is unavailable or unusable:
 * aarch64 under qemu-user (Criterion hangs there), or natively.
 *
 *   run_cases [-v] [-q|--qemu] [-j N] [--no-fork] [--list] [FILTER...]
 *
 *   -q, --qemu   the reduced subset (every kernel, mask and phase; fewer lengths)
 *   -j N         run N cases at once (each case in its own forked process; default 1)
 *   --no-fork    run the cases in this process (a crash then ends the run)
 *   -v           also print each passing case's timing
 *   FILTER       run only cases whose description contains one of these substrings
 *
 * Prints one line per case, then the maximum error observed, then exactly "N passed, N failed";
 * exits 1 if any case failed. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cases.h"

#define CASE_TIMEOUT_S 300

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
  int passed, failed, numeric;
  double max_err, max_lse_err;
  char worst[256];
  int wide;                          /* RANGE_WIDE cases, checked against their own tolerance (see cases.c) */
  double wide_err, wide_ratio; /* largest error, largest error / tolerance */
  char wide_worst[256];
} totals;

static void report(totals *t, const test_case *c, int idx, int fail, const case_result *r, double secs, int verbose) {
  char name[256];
  case_name(c, name, sizeof name);
  if (fail) {
    t->failed++;
    printf("FAIL %5d %s: %s\n", idx, name, r->msg[0] ? r->msg : "(no message)");
  } else {
    t->passed++;
    if (verbose)
      printf("ok   %5d %s  err=%.3g lse_err=%.3g (%.3fs)\n", idx, name, r->checked ? r->max_err : 0.0,
             r->max_lse_err, secs);
    else
      printf("ok   %5d %s  err=%.3g\n", idx, name, r->checked ? r->max_err : 0.0);
  }
  if (r->checked && r->tol > CASE_TOL) {
    t->wide++;
    if (r->max_err > t->wide_err) t->wide_err = r->max_err;
    if (r->max_err / r->tol > t->wide_ratio) {
      t->wide_ratio = r->max_err / r->tol;
      snprintf(t->wide_worst, sizeof t->wide_worst, "%s", name);
    }
  } else if (r->checked) {
    t->numeric++;
    if (r->max_err > t->max_err) {
      t->max_err = r->max_err;
      snprintf(t->worst, sizeof t->worst, "%s", name);
    }
    if (r->max_lse_err > t->max_lse_err) t->max_lse_err = r->max_lse_err;
  }
  fflush(stdout);
}

typedef struct {
  pid_t pid;
  int fd, idx;
  double t0;
} slot;

int main(int argc, char **argv) {
  int verbose = 0, jobs = 1, fork_cases = 1, list = 0;
  case_subset subset = CASES_FULL;
  const char *filters[64];
  int nfilters = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-v")) verbose = 1;
    else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--qemu")) subset = CASES_QEMU;
    else if (!strcmp(argv[i], "--no-fork")) fork_cases = 0;
    else if (!strcmp(argv[i], "--list")) list = 1;
    else if (!strcmp(argv[i], "-j") && i + 1 < argc) jobs = atoi(argv[++i]);
    else if (!strncmp(argv[i], "-j", 2) && argv[i][2]) jobs = atoi(argv[i] + 2);
    else if (argv[i][0] == '-') {
      fprintf(stderr, "usage: %s [-v] [-q|--qemu] [-j N] [--no-fork] [--list] [FILTER...]\n", argv[0]);
      return 2;
    } else if (nfilters < 64) filters[nfilters++] = argv[i];
  }
  if (jobs < 1) jobs = 1;

  test_case *cases;
  int n = cases_build(subset, &cases);
  int *sel = malloc(sizeof(int) * (size_t)(n + 1)), nsel = 0;
  for (int i = 0; i < n; i++) {
    char name[256];
    case_name(&cases[i], name, sizeof name);
    int keep = nfilters == 0;
    for (int f = 0; f < nfilters && !keep; f++) keep = strstr(name, filters[f]) != NULL;
    if (keep) sel[nsel++] = i;
  }
  if (list) {
    for (int s = 0; s < nsel; s++) {
      char name[256];
      case_name(&cases[sel[s]], name, sizeof name);
      printf("%5d %s\n", sel[s], name);
    }
    printf("%d cases\n", nsel);
    return 0;
  }
  unsigned isas = attngen_cpu_isas();
  printf("attngen run_cases: %d cases (%s subset), ISAs:", nsel, subset == CASES_QEMU ? "qemu" : "full");
#define PRINT_ISA(E, name, ...) if ((isas >> ATTNGEN_ISA_##E) & 1u) printf(" %s", #name);
  ATTNGEN_ISA_LIST(PRINT_ISA)
#undef PRINT_ISA
  printf(", tolerance %.0e\n", CASE_TOL);
  fflush(stdout);

  totals t;
  memset(&t, 0, sizeof t);
  const double start = now_s();
  if (!fork_cases) {
    for (int s = 0; s < nsel; s++) {
      case_result r;
      double t0 = now_s();
      int fail = case_run(&cases[sel[s]], &r);
      report(&t, &cases[sel[s]], sel[s], fail, &r, now_s() - t0, verbose);
    }
  } else {
    slot *slots = calloc((size_t)jobs, sizeof(slot));
    int next = 0, running = 0;
    while (next < nsel || running > 0) {
      while (running < jobs && next < nsel) {
        int fds[2];
        if (pipe(fds) != 0) {
          perror("pipe");
          return 2;
        }
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) {
          perror("fork");
          return 2;
        }
        if (pid == 0) {
          close(fds[0]);
          alarm(CASE_TIMEOUT_S);
          case_result r;
          int fail = case_run(&cases[sel[next]], &r);
          ssize_t w = write(fds[1], &r, sizeof r);
          _exit(w == (ssize_t)sizeof r ? (fail ? 1 : 0) : 3);
        }
        close(fds[1]);
        for (int k = 0; k < jobs; k++)
          if (slots[k].pid == 0) {
            slots[k] = (slot){pid, fds[0], sel[next], now_s()};
            break;
          }
        next++;
        running++;
      }
      int status;
      pid_t pid = waitpid(-1, &status, 0);
      if (pid < 0) {
        if (errno == EINTR) continue;
        perror("waitpid");
        return 2;
      }
      for (int k = 0; k < jobs; k++) {
        if (slots[k].pid != pid) continue;
        case_result r;
        memset(&r, 0, sizeof r);
        ssize_t got = read(slots[k].fd, &r, sizeof r);
        close(slots[k].fd);
        int fail;
        if (WIFSIGNALED(status)) {
          fail = 1;
          snprintf(r.msg, sizeof r.msg, "crashed with signal %d%s", WTERMSIG(status),
                   WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
          r.checked = 0;
        } else if (got != (ssize_t)sizeof r) {
          fail = 1;
          snprintf(r.msg, sizeof r.msg, "exited with status %d without a result", WEXITSTATUS(status));
          r.checked = 0;
        } else {
          fail = WEXITSTATUS(status) != 0;
        }
        report(&t, &cases[slots[k].idx], slots[k].idx, fail, &r, now_s() - slots[k].t0, verbose);
        slots[k].pid = 0;
        running--;
        break;
      }
    }
    free(slots);
  }
  if (t.wide)
    printf("large scores (range=wide, |scores| up to %g): max error %.3g over %d checks; worst relative to its "
           "tolerance CASE_TOL_WIDE(head_dim): %.3f (%s)\n",
           CASE_WIDE_SMAX, t.wide_err, t.wide, t.wide_ratio, t.wide_worst);
  printf("max |out - ref| / max(1, max|ref|) = %.3g over %d numeric checks (worst: %s); max lse error %.3g; "
         "tolerance %.0e; %.1fs\n",
         t.max_err, t.numeric, t.worst[0] ? t.worst : "-", t.max_lse_err, CASE_TOL, now_s() - start);
  printf("%d passed, %d failed\n", t.passed, t.failed);
  free(sel);
  free(cases);
  return t.failed ? 1 : 0;
}

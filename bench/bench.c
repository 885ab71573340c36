/* SPDX-License-Identifier: MIT */
/* bench/bench.c: attngen benchmark.
 *
 * For each case (shape, mask, phase, lengths; batch 1) it times, in one run of this program:
 *   select   what attngen_select picks from the model's generated table (specialized kernel, or the
 *            generic fallback when the table has none for the shape: the row says so), 1 thread;
 *   generic  attngen_select_generic(shape, best ISA of this CPU), 1 thread (skipped when select already ran it);
 *   select   again with attngen_run_parallel(..., 2);
 *   naive    a plain C triple loop (bench/naive.c), small sizes only, for the plots.
 * Machine numbers (FMA peak of one core, 1- and 2-thread read bandwidth) are measured at the start of the
 * same run (bench/machine.c); percentages are against them, except decode timed cold (see below): there the
 * case's own K/V bytes are also read plainly (1 and 2 threads, bench_reader: streams in K and V read in turn, in the
 * pattern that read fastest at the start: 2, 4 or 8 streams, 512 bytes or 64 KiB a visit) in the same interleaved
 * rounds as the kernels, and %bw is the median of the per-round ratios read time / kernel time (the machine's
 * bandwidth drifts with its neighbours; the start-of-run figure stays in the CSV). The machine is shared and noisy:
 * compare ratios inside one run, not numbers across runs.
 *
 * Time: the three kernel variants of a case are timed interleaved (one sample of each per round), so a slow
 * spell of this shared machine hits them alike. A sample is `inner` back-to-back calls timed with
 * clock_gettime(CLOCK_MONOTONIC) (inner chosen so a sample lasts >= 1 ms); the reported time is the median
 * per-call time over the rounds; the ratios spec/gen and 2T/1T are medians of the per-round ratios. The number
 * of rounds adapts so each variant takes about BENCH_CASE_SECONDS/3 (quick 0.07 s, full 0.3 s, i.e. ~0.2 s /
 * ~1 s per case), at least 7 (quick: 3; naive, timed on its own: 1), after two warm-up calls.
 * Decode K/V up to a quarter of the last-level cache is timed warm (repeated on the same buffers); up to the whole
 * cache, cold: before every call (one call per sample) a 2-thread read of a buffer twice the cache, untimed, evicts
 * it; beyond the cache every call streams it from memory. The K/V column says which (kv_state_of).
 *
 * Limits: the FMA peak loop is measured and run in this process, at the width (256 or 512 bits) that gives the
 * most flop/s here; the bandwidth in a child. A percentage of a limit above 100 is flagged '!' (a measurement
 * error), a specialized kernel slower than the generic one or than the next ISA's '*'.
 *
 * Useful flops = 4 * head_dim * heads * batch * (visible query/key pairs per head), the pairs counted
 * exactly for the mask (causal: query i sees keys j <= i + kv_len - q_len). Decode bandwidth counts the K and
 * V bytes once: 2 * kv_len * kv_heads * head_dim * 4 * batch.
 *
 * Environment: BENCH_MODE=quick|full (default full), BENCH_CASE_SECONDS (per case, split over its 3 variants),
 * BENCH_FILTER (only cases whose label contains it, e.g. "decode h32"), BENCH_BW_MIB, BENCH_FMA_BITS=256|512 (the
 * peak loop's width, forced; machine.c), BENCH_PAGED_HND=1 (the paged section on head-major pages and cache).
 * Usage: bench [OUTDIR]   (default build/bench; writes OUTDIR/results.csv and OUTDIR/machine.csv) */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h> /* madvise: the 4 KiB-page copies of the huge-page comparison */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attngen.h"
#include "machine.h"
#include "naive.h"

/* The generated tables the cases use, listed by the generator (attngen --registry bench, see bench.mk):
 * llama-3-8b, gpt2 and bert-base (h12/kv12/d64 like GPT-2, masks none/padding: the specialized d64 "none"
 * prefill kernel that gpt2's causal-only config lacks), plus bench/configs/ (llama's shape with "none"). */
#include "attngen_registry_bench.h"

static const attngen_table *find_table(const char *model) {
  for (const attngen_table *const *t = attngen_registry_bench; *t; t++)
    if (strcmp((*t)->model, model) == 0) return *t;
  return NULL;
}

/* The best ISA this CPU runs (the spec lists them best first): what specialized and generic kernels are
 * compared on. */
static attngen_isa best_isa(void) {
#define FIRST_USABLE(E, ...) if ((attngen_cpu_isas() >> ATTNGEN_ISA_##E) & 1u) return ATTNGEN_ISA_##E;
  ATTNGEN_ISA_LIST(FIRST_USABLE)
#undef FIRST_USABLE
  return ATTNGEN_ISA_SCALAR;
}

/* The next SIMD ISA this CPU runs after best_isa() (AVX2 on an AVX-512 CPU), or scalar when there is none: the
 * bench also times the specialized kernel there, so a CPU with two SIMD ISAs shows what the better one gains. */
static attngen_isa next_isa(void) {
  int seen_best = 0;
#define NEXT_USABLE(E, ...)                                                                  \
  if ((attngen_cpu_isas() >> ATTNGEN_ISA_##E) & 1u) {                                        \
    if (seen_best && ATTNGEN_ISA_##E != ATTNGEN_ISA_SCALAR) return ATTNGEN_ISA_##E;          \
    seen_best = 1;                                                                           \
  }
  ATTNGEN_ISA_LIST(NEXT_USABLE)
#undef NEXT_USABLE
  return ATTNGEN_ISA_SCALAR;
}

/* ------------------------------------------------------------------------------------------------ */


/* Tensors come from attngen_alloc, as the README tells users to allocate a KV cache: from 2 MiB up on huge pages
 * where the OS gives them. Free with attngen_free. */
static float *alloc_floats(size_t n) {
  size_t bytes = (n * sizeof(float) + 63) & ~(size_t)63;
  float *p = (float *)attngen_alloc(bytes ? bytes : 64);
  if (!p) {
    fprintf(stderr, "bench: %s\n", attngen_last_error());
    exit(2);
  }
  memset(p, 0, bytes); /* touch every page before timing */
  return p;
}

/* A copy of n floats on 4 KiB pages (Linux: madvise MADV_NOHUGEPAGE, whatever the THP setting; elsewhere plain
 * memory, NULL), for the decode cases' huge-page comparison. Free with free(). */
static float *copy_small_pages(const float *src, size_t n) {
#if defined(__linux__) && defined(MADV_NOHUGEPAGE)
  const size_t page = 4096, bytes = (n * sizeof(float) + page - 1) / page * page;
  float *p = (float *)aligned_alloc(page, bytes);
  if (!p) return NULL;
  (void)madvise(p, bytes, MADV_NOHUGEPAGE);
  memcpy(p, src, n * sizeof(float));
  return p;
#else
  (void)src, (void)n;
  return NULL;
#endif
}

/* Deterministic values in [-1, 1] (xorshift64*). */
static void fill_random(float *p, size_t n, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
  for (size_t i = 0; i < n; i++) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    uint64_t r = x * 0x2545F4914F6CDD1Dull;
    p[i] = (float)((double)(r >> 40) * (2.0 / 16777216.0) - 1.0);
  }
}

static double max_abs_diff(const float *a, const float *b, size_t n) {
  double m = 0.0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - (double)b[i]);
    if (d > m || d != d) m = d;
  }
  return m;
}

/* Visible (query, key) pairs of one head of one sequence. */
static double visible_pairs(attngen_mask mask, int q_len, int kv_len) {
  /* (the bench runs every sequence at full length, so only the causal feature removes pairs) */
  if (!(attngen_mask_features(mask) & ATTNGEN_FEATURE_CAUSAL)) return (double)q_len * (double)kv_len;
  double pairs = 0.0;
  for (int i = 0; i < q_len; i++) {
    long lim = (long)i + (kv_len - q_len) + 1;
    pairs += (double)(lim < 0 ? 0 : (lim > kv_len ? kv_len : lim));
  }
  return pairs;
}

/* ------------------------------------------------------------------------------------------------ */

typedef enum { RUN_KERNEL, RUN_PARALLEL, RUN_NAIVE, RUN_STEP, RUN_READ, RUN_PEAK, RUN_CASCADE, RUN_EACH,
               RUN_ROWS_READ } run_kind;

/* A plain read of a decode call's K and V rows in the order it reads them: tiles of `tile` token rows, the tile's K
 * rows then its V rows, each row found through the block table (table NULL: rows in order, a contiguous cache),
 * asking for the rows ahead_bytes further on in that order as it goes, as the decode kernels do (a core
 * that reads plainly reads less: 11.5 against 13.7 GB/s on an Emerald Rapids core, where an MHA decode then read
 * 102% of this read). Its paged ÷ contiguous time is what the memory itself charges for the pages' order. */
typedef struct {
  const unsigned char *k, *v;
  const int32_t *table;
  int page_size, rows, tile;
  size_t row_bytes;
  long ahead_bytes; /* stream_prefetch_bytes() of the kernel whose order this reads */
} rows_read;

/* How far a decode kernel of `isa` asks ahead: its vocabulary's stream_prefetch (gen/isa/avx512.lua, avx2.lua) */
static long stream_prefetch_bytes(attngen_isa isa) { return isa == ATTNGEN_ISA_AVX512 ? 32768 : 65536; }

static volatile uint64_t rows_read_sink;

static const unsigned char *rows_read_row(const rows_read *r, int which, int x) {
  const size_t row = r->table ? (size_t)r->table[x / r->page_size] * r->page_size + x % r->page_size : (size_t)x;
  return (which ? r->v : r->k) + row * r->row_bytes;
}

static void rows_read_run(const rows_read *r) {
  uint64_t acc[4] = {0, 0, 0, 0};
  const long ahead = (long)((r->ahead_bytes + (long)r->row_bytes - 1) / (long)r->row_bytes); /* rows of the stream */
  const long span = 2L * r->tile;                                                 /* a tile's K and V rows */
  for (int t0 = 0; t0 < r->rows; t0 += r->tile)
    for (int which = 0; which < 2; which++)
      for (int x = t0; x < r->rows && x < t0 + r->tile; x++) {
        /* the row `ahead` rows on in the stream (whole tiles, as the kernels count it) */
        const long s = (long)t0 * 2 + (long)which * r->tile + (x - t0) + ahead;
        const int ahead_which = (int)(s % span >= r->tile);
        const long ahead_x = s / span * r->tile + s % span % r->tile;
        if (ahead_x < r->rows) {
          const unsigned char *f = rows_read_row(r, ahead_which, (int)ahead_x);
          for (size_t i = 0; i < r->row_bytes; i += 64) __builtin_prefetch(f + i, 0, 2);
        }
        const unsigned char *p = rows_read_row(r, which, x);
        for (size_t i = 0; i + 32 <= r->row_bytes; i += 32) {
          uint64_t w[4];
          memcpy(w, p + i, sizeof w);
          acc[0] += w[0], acc[1] += w[1], acc[2] += w[2], acc[3] += w[3];
        }
      }
  rows_read_sink = acc[0] + acc[1] + acc[2] + acc[3];
}

typedef struct {
  run_kind kind;
  const attngen_kernel *kernel;
  const attngen_shape *shape;
  const attngen_args *args;
  int threads;
  const attngen_step_args *step; /* RUN_STEP */
  bench_reader *reader;           /* RUN_READ: a streaming read of the case's K and V (machine.h) */
  bench_peak *peak;               /* RUN_PEAK: the FMA peak loop on `threads` threads (machine.h) */
  int match; /* RUN_PEAK: a pass lasts as long as a sample of this (earlier) job: the host takes its cores in
              * spells, and a 1 ms loop beside a 400 ms kernel sample measured a moment, not the same window */
  bench_reader *evict; /* non-NULL: timed cold, every call after a pass of this reader over a buffer twice the
                        * last-level cache (untimed), one call per sample */
  const attngen_cascade_args *cascade; /* RUN_CASCADE */
  const rows_read *rows;                /* RUN_ROWS_READ */
} job;

static int job_run(const job *j);

/* Seconds of `calls` back-to-back runs of j, after its eviction pass when it is timed cold (then calls is 1). A
 * limit's pass (the read, the peak loop) counts its capacity time (machine.h), a kernel its wall time. */
static double job_time(const job *j, int calls, int *status) {
  if (j->evict) (void)bench_reader_pass(j->evict);
  double capacity = 0.0;
  const double t0 = bench_now();
  for (int i = 0; i < calls; i++) {
    if (j->kind == RUN_READ || j->kind == RUN_PEAK) {
      capacity += j->kind == RUN_READ ? bench_reader_pass(j->reader) : bench_peak_pass(j->peak);
      *status = ATTNGEN_OK;
    } else {
      *status = job_run(j);
    }
  }
  const double wall = bench_now() - t0;
  return capacity > 0 ? capacity : wall;
}

static int job_run(const job *j) {
  switch (j->kind) {
  case RUN_KERNEL: return attngen_run(j->kernel, j->args);
  case RUN_PARALLEL: return attngen_run_parallel(j->kernel, j->args, j->threads);
  case RUN_NAIVE: return naive_attention(j->shape, j->args) == 0 ? ATTNGEN_OK : ATTNGEN_ERR_NOMEM;
  case RUN_STEP: return attngen_step(j->kernel, j->step);
  case RUN_READ: (void)bench_reader_pass(j->reader); return ATTNGEN_OK;
  case RUN_PEAK: (void)bench_peak_pass(j->peak); return ATTNGEN_OK;
  case RUN_CASCADE: return attngen_cascade_decode(j->kernel, j->cascade, j->threads);
  case RUN_ROWS_READ: rows_read_run(j->rows); return ATTNGEN_OK;
  case RUN_EACH: /* each sequence on its own, all reading the same K/V (batch 1 calls) */
    for (int b = 0, st; b < j->args->batch; b++) {
      attngen_args one = *j->args;
      const size_t rows = (size_t)one.q_len * j->shape->heads * j->shape->head_dim;
      one.batch = 1, one.q += b * rows, one.o += b * rows;
      if ((st = attngen_run(j->kernel, &one))) return st;
    }
    return ATTNGEN_OK;
  }
  return ATTNGEN_ERR_UNSUPPORTED;
}

/* How a decode case's K/V stood in the caches when timed (kv_state_of). */
typedef enum { KV_NA, KV_WARM, KV_COLD_EVICTED, KV_COLD_BEYOND } kv_state;

typedef struct {
  int status;    /* ATTNGEN_OK or the failing status */
  double sec;    /* median seconds per call */
  int calls;     /* timed calls behind the median */
  int samples;
  /* decode beyond the last-level cache: the plain read of the case's K/V bytes timed in the same rounds (same
   * thread count): its GB/s, and the median of per-round (read time / this job's time) in %. 0: not measured */
  double read_gbs, pct_bw_read;
  /* the FMA peak loop timed in the same rounds (same thread count): the median of per-round (this job's GFLOP/s /
   * the loop's) in %. 0: not measured */
  double pct_peak_rounds;
  /* the 2-thread row: the peak loop's own 2-thread / 1-thread rate in the same rounds (median of per-round
   * ratios), what the host gave two threads then; 0: not measured */
  double peak_2t_over_1t;
  kv_state kvs; /* decode: timed warm or cold */
} timing;

#define MAX_SAMPLES 301

#define MAX_JOBS 16

/* Times n jobs (at most MAX_JOBS) interleaved: each round runs one sample of every job, in an order drawn per
 * round, so a slow spell of this shared machine hits all of them alike and their ratios (taken per round, see
 * paired_ratio) stay meaningful.
 * Each job: two warm-up calls (the first produces the output that is compared), then samples of `inner`
 * back-to-back calls (inner such that a sample lasts >= 1 ms). Rounds: enough for ~budget seconds per job,
 * at least min_samples. samples[j][r] = seconds per call of job j in round r. */
static void measure_set(const job *jobs, int n, double budget, int min_samples, timing *out,
                        double samples[][MAX_SAMPLES]) {
  double tw[MAX_JOBS];
  int inner[MAX_JOBS];
  int rounds = MAX_SAMPLES;
  for (int j = 0; j < n; j++) {
    out[j].status = ATTNGEN_OK;
    out[j].sec = 0.0;
    out[j].calls = out[j].samples = 0;
    out[j].read_gbs = out[j].pct_bw_read = out[j].pct_peak_rounds = out[j].peak_2t_over_1t = 0.0;
    const int m = jobs[j].match;
    if (jobs[j].kind == RUN_PEAK && m >= 0 && m < j && out[m].status == ATTNGEN_OK)
      bench_peak_set_seconds(jobs[j].peak, tw[m] * inner[m]);
    tw[j] = job_time(&jobs[j], 1, &out[j].status);
    if (out[j].status != ATTNGEN_OK) continue;
    if (tw[j] < budget / 4) { /* warm-up 2, for calibration with warm caches (or evicted ones, timed cold) */
      int st2;
      tw[j] = job_time(&jobs[j], 1, &st2);
    }
    if (tw[j] < 1e-7) tw[j] = 1e-7;
    inner[j] = tw[j] < 1e-3 && !jobs[j].evict ? (int)ceil(1e-3 / tw[j]) : 1;
    if (inner[j] > 100000) inner[j] = 100000;
    int r = (int)(budget / (tw[j] * inner[j]));
    if (r < rounds) rounds = r;
  }
  if (rounds < min_samples) rounds = min_samples;
  uint64_t x = 0x9E3779B97F4A7C15ull; /* the order of each round: a fixed order beat in step with the host's time
                                       * slices, and the in-round peak loop read 135-266% for the first cases */
  for (int r = 0; r < rounds; r++) {
    int order[MAX_JOBS];
    for (int j = 0; j < n; j++) order[j] = j;
    for (int j = n - 1; j > 0; j--) { /* Fisher-Yates, xorshift64 */
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      const int k = (int)(x % (uint64_t)(j + 1)), t = order[j];
      order[j] = order[k], order[k] = t;
    }
    for (int i = 0; i < n; i++) {
      const int j = order[i];
      if (out[j].status != ATTNGEN_OK) continue;
      int st2;
      samples[j][r] = job_time(&jobs[j], inner[j], &st2) / inner[j];
    }
  }
  for (int j = 0; j < n; j++) {
    if (out[j].status != ATTNGEN_OK) continue;
    double tmp[MAX_SAMPLES];
    memcpy(tmp, samples[j], sizeof(double) * (size_t)rounds);
    out[j].sec = bench_median(tmp, rounds);
    out[j].samples = rounds;
    out[j].calls = rounds * inner[j];
  }
}

/* The limit of a 2-thread job in each round: best[r] = min(t2[r], t1[r] x work2 / work1), the better of the 2-thread
 * pass and the 1-thread one scaled to the same work. A host that takes the second vCPU for a while stalls a pass
 * split evenly between two threads, while a kernel's pool gives the work to the thread that runs: against the
 * 2-thread pass alone such rounds read 103-134% of the limit. Returns best. */
static const double *best_of_1t_2t(const double *t1, const double *t2, double work_ratio, int rounds, double *best) {
  for (int r = 0; r < rounds; r++) best[r] = fmin(t2[r], t1[r] * work_ratio);
  return best;
}

/* Median over rounds of num[r] / den[r]. */
static double paired_ratio(const double *num, const double *den, int rounds) {
  double tmp[MAX_SAMPLES];
  for (int r = 0; r < rounds; r++) tmp[r] = num[r] / den[r];
  return bench_median(tmp, rounds);
}

/* ------------------------------------------------------------------------------------------------ */

typedef struct {
  const char *model; /* model whose table the kernel comes from */
  const attngen_table *table;
  attngen_shape shape;
  int q_len, kv_len, batch;
  int in_quick;
  int head_major; /* K/V [batch][kv_heads][kv_len][head_dim] (as in HF's and ONNX Runtime's caches), not token-major */
} bcase;

typedef struct {
  bench_machine m;
  int quick;
  double budget;
  double naive_max_flop;
  FILE *csv;
  int rows;
  /* summaries */
  double log_spec_gen_sum;
  int spec_gen_n;
  double log_isa_gain_sum; /* best ISA over the next one (specialized kernels, 1 thread) */
  int isa_gain_n;
  double log_huge_gain_sum; /* decode beyond the cache: K/V from attngen_alloc over the same on 4 KiB pages */
  int huge_gain_n;
  int fallbacks;
  int errors;
  double worst_err_naive, worst_err_generic, worst_err_parallel;
  double llc; /* bytes of the last-level cache, read once (llc_bytes); 0 if unknown */
  bench_reader *evict; /* the eviction pass of cold timing (kv_state), made on first use */
  float *evict_buf;
  int over_limit; /* cells printed above 100% of a measured limit, flagged '!' */
  int slower;     /* specialized kernels slower than what they are compared with, flagged '*' */
  int min_rounds; /* interleaved rounds per case at least (a ratio needs more than one sample) */
} bench_state;

/* The read that bounds a decode (one thread): the plain read timed in the same rounds, or the one at the start of the
 * run when that was faster. The host's pace moves during a run, and a read it slowed in some rounds is not a limit a
 * kernel cannot pass (a decode with prefetches once read at 105% of such a read). */
static double read_limit(const bench_state *st, double same_rounds_gbs)
{
  return fmax(same_rounds_gbs, st->m.bw1_gbs);
}

static const char *short_mask(attngen_mask m) { return attngen_mask_name(m); }

/* A percentage of a measured limit (the FMA peak, the read bandwidth) as printed: a value above 100% cannot be a
 * kernel beating the limit, only the limit or the kernel mismeasured, so it carries a '!' (counted for the
 * footnote). */
static const char *pct_cell(bench_state *st, char *buf, size_t n, double pct, int decimals) {
  snprintf(buf, n, "%.*f%%", decimals, pct);
  const int over = atof(buf) > 100.0; /* as printed: 100.0% is not above */
  if (over) strncat(buf, "!", n - strlen(buf) - 1);
  st->over_limit += over;
  return buf;
}

/* A ratio of a specialized kernel's speed over what it is compared with: below 1.00x carries a '*'. */
static const char *ratio_cell(bench_state *st, char *buf, size_t n, double ratio) {
  snprintf(buf, n, "%.2fx", ratio);
  const int slower = atof(buf) < 1.0; /* as printed: 1.00x is not below */
  if (slower) strncat(buf, "*", n - strlen(buf) - 1);
  st->slower += slower;
  return buf;
}

/* The footnotes of the marks printed since the counts were over0 / slower0. */
static void print_footnotes(const bench_state *st, int over0, int slower0) {
  if (st->over_limit > over0)
    printf("!  above the measured limit: measurement error (%d cell(s); the limit or the kernel was mismeasured, "
           "repeat the case)\n", st->over_limit - over0);
  if (st->slower > slower0)
    printf("*  specialized kernel slower than what it is compared with in the same rounds (%d; spec/gen: the generic "
           "kernel, ISA line: the same shape's kernel on the next ISA)\n", st->slower - slower0);
}

/* The policy: K/V up to a quarter of the last-level cache stays resident between the interleaved jobs and is timed
 * warm (repeated on the same buffers); up to the whole cache it would stay in part, so the caches are evicted before
 * every call (cold); beyond it every call streams from memory (cold by size). */
static kv_state kv_state_of(const bench_state *st, const bcase *c, double kv_bytes) {
  if (c->shape.phase != ATTNGEN_PHASE_DECODE) return KV_NA;
  const double llc = st->llc > 0 ? st->llc : 32.0 * 1024 * 1024;
  return kv_bytes <= llc / 4 ? KV_WARM : kv_bytes <= llc ? KV_COLD_EVICTED : KV_COLD_BEYOND;
}

static const char *kv_state_name(kv_state k) { return k == KV_NA ? "-" : k == KV_WARM ? "warm" : "cold"; }

/* The 2-thread read of a buffer twice the last-level cache that evicts a cold case's K/V from both cores' caches. */
static bench_reader *evictor(bench_state *st) {
  if (!st->evict) {
    const size_t n = (size_t)(2.0 * (st->llc > 0 ? st->llc : 32.0 * 1024 * 1024) / sizeof(float));
    st->evict_buf = alloc_floats(n);
    st->evict = bench_reader_new(st->evict_buf, NULL, n, 2);
  }
  return st->evict;
}

static void case_label(const bcase *c, char *buf, size_t n) {
  if (c->shape.phase == ATTNGEN_PHASE_DECODE)
    snprintf(buf, n, "decode h%d/kv%d/d%d %s q=%d kv=%d b=%d%s", c->shape.heads, c->shape.kv_heads,
             c->shape.head_dim, short_mask(c->shape.mask), c->q_len, c->kv_len, c->batch,
             c->head_major ? " head-major" : "");
  else
    snprintf(buf, n, "prefill h%d/kv%d/d%d %s S=%d", c->shape.heads, c->shape.kv_heads, c->shape.head_dim,
             short_mask(c->shape.mask), c->q_len);
}

static void print_header(void) {
  printf("%-38s %-9s %-46s %3s %4s %10s %8s %7s %7s %6s %8s %6s %9s\n", "case", "variant", "kernel (what ran)", "thr",
         "K/V", "median ms", "GFLOP/s", "%peak", "GB/s", "%bw", "spec/gen", "2T/1T", "maxerr");
}

/* One table row + one CSV row. ratio_sg / ratio_par < 0: not applicable. err < 0: not compared. */
static void emit(bench_state *st, const bcase *c, const char *label, const char *variant, const char *kname,
                 int specialized, const char *isa, int threads, const timing *t, double ratio_sg, double ratio_par,
                 double err, const char *err_ref, const char *note) {
  const int decode = c->shape.phase == ATTNGEN_PHASE_DECODE;
  const double flop = 4.0 * c->shape.head_dim * c->shape.heads * c->batch *
                      visible_pairs(c->shape.mask, c->q_len, c->kv_len);
  const double bytes = 2.0 * c->kv_len * c->shape.kv_heads * c->shape.head_dim * 4.0 * c->batch;
  const int ok = t->status == ATTNGEN_OK;
  const double gflops = ok ? flop / t->sec * 1e-9 : 0.0;
  const double peak = st->m.fma_gflops * threads;
  /* against the peak loop run in the same rounds when measured, else the start-of-run figure */
  const double pct_peak_start = (ok && peak > 0) ? 100.0 * gflops / peak : 0.0;
  const double pct_peak = t->pct_peak_rounds > 0 ? t->pct_peak_rounds : pct_peak_start;
  const double gbs = (ok && decode) ? bytes / t->sec * 1e-9 : 0.0;
  const double bw = threads >= 2 ? fmax(st->m.bw2_gbs, st->m.bw1_gbs) : st->m.bw1_gbs; /* 2 threads: the better */
  /* against the read of these very bytes in the same rounds when measured, or the start-of-run figure when that was
   * faster: a read the host slowed in these rounds is not a limit (a kernel with prefetches read 105% of one) */
  const double pct_bw_start = (decode && bw > 0) ? 100.0 * gbs / bw : 0.0;
  const double pct_bw = t->pct_bw_read > 0 ? fmin(t->pct_bw_read, pct_bw_start) : pct_bw_start;

  /* %bw only where the K/V came from memory: a warm call reads them from the caches, beyond any memory figure */
  const int bw_applies = decode && ok && t->kvs != KV_WARM;
  char sg[16] = "", par[16] = "", gb[16] = "-", pb[16] = "-", pp[16], er[16] = "-";
  if (ratio_sg > 0) ratio_cell(st, sg, sizeof sg, ratio_sg);
  if (ratio_par > 0) snprintf(par, sizeof par, "%.2fx", ratio_par);
  if (decode && ok) snprintf(gb, sizeof gb, "%.1f", gbs);
  if (bw_applies) pct_cell(st, pb, sizeof pb, pct_bw, 0);
  if (err >= 0) snprintf(er, sizeof er, "%.1e", err);
  if (ok)
    printf("%-38s %-9s %-46s %3d %4s %10.3f %8.2f %7s %7s %6s %8s %6s %9s\n", label, variant, kname, threads,
           kv_state_name(t->kvs), t->sec * 1e3, gflops, pct_cell(st, pp, sizeof pp, pct_peak, 1), gb, pb, sg, par, er);
  else
    printf("%-38s %-9s %-46s %3d  ERROR %s: %s\n", label, variant, kname, threads, attngen_status_name(t->status),
           attngen_last_error());
  fflush(stdout);

  if (st->csv) {
    fprintf(st->csv,
            "%s,%s,%s,%s,%d,%d,%d,%d,%d,%d,%s,%s,%d,%s,%d,%d,%s,%.6f,%.3f,%.2f,", label, c->model,
            attngen_phase_name(c->shape.phase), attngen_mask_name(c->shape.mask), c->shape.heads,
            c->shape.kv_heads, c->shape.head_dim, c->q_len, c->kv_len, c->batch, variant, kname, specialized, isa,
            threads, t->calls, ok ? "ok" : attngen_status_name(t->status), ok ? t->sec * 1e3 : 0.0, gflops,
            pct_peak);
    if (decode && ok) fprintf(st->csv, "%.3f", gbs);
    fprintf(st->csv, ",");
    if (bw_applies) fprintf(st->csv, "%.2f", pct_bw);
    fprintf(st->csv, ",");
    if (ratio_sg > 0) fprintf(st->csv, "%.4f", ratio_sg);
    fprintf(st->csv, ",");
    if (ratio_par > 0) fprintf(st->csv, "%.4f", ratio_par);
    fprintf(st->csv, ",");
    if (err >= 0) fprintf(st->csv, "%.3e", err);
    fprintf(st->csv, ",%s,%s,", err >= 0 ? err_ref : "", note ? note : "");
    if (decode && ok && t->read_gbs > 0) fprintf(st->csv, "%.3f", t->read_gbs);
    fprintf(st->csv, ",");
    if (bw_applies) fprintf(st->csv, "%.2f", pct_bw_start);
    fprintf(st->csv, ",");
    if (ok) fprintf(st->csv, "%.2f", pct_peak_start);
    fprintf(st->csv, ",");
    if (ok && t->peak_2t_over_1t > 0) fprintf(st->csv, "%.3f", t->peak_2t_over_1t);
    fprintf(st->csv, ",%s\n", decode ? kv_state_name(t->kvs) : "");
    fflush(st->csv);
  }
  st->rows++;
  if (!ok) st->errors++;
}

static const char *kernel_name(const attngen_kernel *k) { return k->info && k->info->name ? k->info->name : "?"; }
static int kernel_is_generic(const attngen_kernel *k) { return k->info && k->info->heads == 0; }


/* A row for a variant timed in the same rounds as the selected 1-thread kernel (t1, samples s1, output o1): its
 * time, its output's difference from o1, and the median per-round ratio of its time to t1's, which also goes into
 * *log_sum / *n (a geometric mean in the summary) and into the row's note as before, the ratio, after; a ratio
 * below 1.00x is marked when the selected kernel is the one expected faster (mark_slower). */
static void emit_versus(bench_state *st, const bcase *c, const char *label, const char *variant, const char *kname,
                        int specialized, const char *isa, const timing *t, const timing *t1, const double *s,
                        const double *s1, const float *out, const float *o1, size_t nq, double *log_sum, int *n,
                        const char *before, const char *after, int mark_slower) {
  double gain = -1, err = -1;
  char note[160] = "", cell[16];
  if (t1->status == ATTNGEN_OK && t->status == ATTNGEN_OK) {
    err = max_abs_diff(out, o1, nq);
    gain = paired_ratio(s, s1, t1->samples);
    *log_sum += log(gain);
    ++*n;
    if (mark_slower)
      ratio_cell(st, cell, sizeof cell, gain);
    else
      snprintf(cell, sizeof cell, "%.2fx", gain);
    snprintf(note, sizeof note, "%s%s%s", before, cell, after);
  }
  emit(st, c, label, variant, kname, specialized, isa, 1, t, -1, -1, err, "select", note);
  if (note[0]) printf("%-38s   %s\n", "", note);
}

static void run_case(bench_state *st, const bcase *c0) {
  /* The case's own model table if it has a specialized kernel on the best ISA for the shape, else another generated
   * table that has one (same heads/kv_heads/head_dim/mask/phase: the kernel is the same), else the case's
   * own table, from which attngen_select falls back to generic. */
  bcase cc = *c0;
  const bcase *c = &cc;
  attngen_kernel kspec;
  char borrowed[120] = "";
  const attngen_isa isa = best_isa();
  if (!(cc.table && attngen_select_specialized(cc.table, &cc.shape, isa, &kspec) == ATTNGEN_OK))
    for (const attngen_table *const *t = attngen_registry_bench; *t; t++)
      if (attngen_select_specialized(*t, &cc.shape, isa, &kspec) == ATTNGEN_OK) {
        snprintf(borrowed, sizeof borrowed, "kernel from the %s table (%s has none for this mask)", (*t)->model,
                 cc.model);
        cc.model = (*t)->model;
        cc.table = *t;
        break;
      }
  char label[96];
  case_label(c, label, sizeof label);
  const attngen_shape *sh = &c->shape;
  const int H = sh->heads, KVH = sh->kv_heads, D = sh->head_dim;
  const size_t nq = (size_t)c->batch * c->q_len * H * D, nkv = (size_t)c->batch * c->kv_len * KVH * D;
  const timing none = {ATTNGEN_OK, 0, 0, 0, 0, 0, 0, 0, KV_NA};

  attngen_kernel ksel, kgen;
  int rc = attngen_select(c->table, sh, &ksel);
  if (rc != ATTNGEN_OK) {
    timing t = none;
    t.status = rc;
    emit(st, c, label, "select", "-", 0, "-", 1, &t, -1, -1, -1, "", "attngen_select failed");
    return;
  }
  const int have_spec =
      c->table && attngen_select_specialized(c->table, sh, isa, &kspec) == ATTNGEN_OK;
  const int sel_generic = kernel_is_generic(&ksel);
  int rcg = attngen_select_generic(sh, isa, &kgen);
  /* these rows time attention alone: a RoPE table's descriptor is cleared (the naive and generic kernels do not
   * rotate either); run_rope times the rotation, the cache append and the fused step */
  memset(&ksel.params.rope, 0, sizeof ksel.params.rope);
  /* the generic kernel with the table's values (scale, soft-cap, ...), as attngen_select's fallback binds them */
  if (rcg == ATTNGEN_OK) kgen.params = ksel.params;

  char note[200] = "";
  if (!have_spec) {
    if (c->table)
      snprintf(note, sizeof note, "no specialized %s kernel for this shape in the %s table (nor in any other benched"
               " table): attngen_select ran %s", attngen_isa_name(isa), c->model,
               sel_generic ? "the generic kernel" : "another kernel");
    else
      snprintf(note, sizeof note, "%s not generated: attngen_select ran %s", c->model,
               sel_generic ? "the generic kernel" : "another kernel");
    st->fallbacks++;
  } else if (borrowed[0]) {
    snprintf(note, sizeof note, "%s", borrowed);
  }

  float *q = alloc_floats(nq), *k = alloc_floats(nkv), *v = alloc_floats(nkv);
  float *o1 = alloc_floats(nq), *og = alloc_floats(nq), *o2 = alloc_floats(nq);
  fill_random(q, nq, 1000u + (uint64_t)H * 7 + (uint64_t)c->q_len);
  fill_random(k, nkv, 2000u + (uint64_t)KVH * 11 + (uint64_t)c->kv_len);
  fill_random(v, nkv, 3000u + (uint64_t)D * 13 + (uint64_t)c->kv_len);

  attngen_args a;
  memset(&a, 0, sizeof a);
  a.batch = c->batch;
  a.q_len = c->q_len;
  a.kv_len = c->kv_len;
  a.kv_capacity = 0;
  a.q = q;
  a.k = k;
  a.v = v;
  a.scale = 0.0f;
  a.lse = NULL;
  a.kv_lens = NULL;
  if (c->head_major) { /* each kv head's rows contiguous */
    a.k_stride.seq = a.v_stride.seq = D;
    a.k_stride.head = a.v_stride.head = (ptrdiff_t)c->kv_len * D;
    a.k_stride.batch = a.v_stride.batch = (ptrdiff_t)KVH * c->kv_len * D;
  }

  /* Interleaved: selected kernel 1 thread, generic 1 thread (unless select already ran it), selected kernel
   * 2 threads. Each job has its own output buffer. */
  attngen_args a1 = a, ag = a, a2 = a;
  a1.o = o1;
  ag.o = og;
  a2.o = o2;
  const int gen_separate = rcg == ATTNGEN_OK && !sel_generic;
  /* the same shape's specialized kernel on the next ISA (AVX2 on an AVX-512 CPU), when the table has one */
  attngen_kernel knext;
  const attngen_isa isa2 = next_isa();
  const int have_next = isa2 != ATTNGEN_ISA_SCALAR && !sel_generic && c->table &&
                        attngen_select_specialized(c->table, sh, isa2, &knext) == ATTNGEN_OK;
  float *onx = have_next ? alloc_floats(nq) : NULL;
  attngen_args anx = a;
  anx.o = onx;
  if (have_next) memset(&knext.params.rope, 0, sizeof knext.params.rope);
  job jobs[10];
  int nj = 0, i1, ig = -1, i2, ir1 = -1, ir2 = -1, ip1 = -1, ip2 = -1;
  jobs[i1 = nj++] = (job){RUN_KERNEL, &ksel, sh, &a1, 1, NULL, NULL, NULL, -1, NULL, NULL, NULL};
  if (gen_separate) jobs[ig = nj++] = (job){RUN_KERNEL, &kgen, sh, &ag, 1, NULL, NULL, NULL, -1, NULL, NULL, NULL};
  jobs[i2 = nj++] = (job){RUN_PARALLEL, &ksel, sh, &a2, 2, NULL, NULL, NULL, -1, NULL, NULL, NULL};
  int inx = -1;
  if (have_next) jobs[inx = nj++] = (job){RUN_KERNEL, &knext, sh, &anx, 1, NULL, NULL, NULL, -1, NULL, NULL, NULL};
  /* decode timed cold is bounded by the memory: the same K/V bytes read plainly, 1 and 2 threads, in the same
   * rounds and as cold (warm, the read of a few MiB is dominated by waking the reader threads, and no memory figure
   * bounds the kernel: no %bw) */
  const double kv_bytes = 2.0 * (double)nkv * sizeof(float);
  const kv_state kvs = kv_state_of(st, c, kv_bytes);
  bench_reader *rd1 = NULL, *rd2 = NULL;
  float *k4k = NULL, *v4k = NULL, *o4k = NULL;
  attngen_args a4k;
  int i4k = -1;
  if (kvs != KV_NA && kvs != KV_WARM && st->m.have_avx2_fma) {
    rd1 = bench_reader_new(k, v, nkv, 1);
    rd2 = bench_reader_new(k, v, nkv, 2);
    if (rd1) jobs[ir1 = nj++] = (job){RUN_READ, NULL, sh, NULL, 1, NULL, rd1, NULL, -1, NULL, NULL, NULL};
    if (rd2) jobs[ir2 = nj++] = (job){RUN_READ, NULL, sh, NULL, 2, NULL, rd2, NULL, -1, NULL, NULL, NULL};
  }
  if (kvs == KV_COLD_BEYOND && st->m.have_avx2_fma) {
    /* the same kernel on a copy of K/V on 4 KiB pages: what attngen_alloc's huge pages give (attngen.h) */
    k4k = copy_small_pages(k, nkv);
    v4k = copy_small_pages(v, nkv);
    if (k4k && v4k) {
      o4k = alloc_floats(nq);
      a4k = a1;
      a4k.k = k4k, a4k.v = v4k, a4k.o = o4k;
      jobs[i4k = nj++] = (job){RUN_KERNEL, &ksel, sh, &a4k, 1, NULL, NULL, NULL, -1, NULL, NULL, NULL};
    }
  }
  /* and the FMA peak loop, 1 and 2 threads, a pass as long as a sample of the kernel on as many threads: %peak
   * against what the cores gave in these rounds (a neighbour that takes a core for a while slows the loop and the
   * kernels alike; the start-of-run figure stays in the CSV) */
  bench_peak *pk1 = bench_peak_new(&st->m, 1e-3, 1), *pk2 = bench_peak_new(&st->m, 1e-3, 2);
  if (pk1) jobs[ip1 = nj++] = (job){RUN_PEAK, NULL, sh, NULL, 1, NULL, NULL, pk1, i1, NULL, NULL, NULL};
  if (pk2) jobs[ip2 = nj++] = (job){RUN_PEAK, NULL, sh, NULL, 2, NULL, NULL, pk2, i2, NULL, NULL, NULL};
  if (kvs == KV_COLD_EVICTED)
    for (int j = 0; j < nj; j++)
      if (jobs[j].kind != RUN_PEAK) jobs[j].evict = evictor(st);
  static double samples[10][MAX_SAMPLES];
  timing tt[10];
  measure_set(jobs, nj, st->budget, st->min_rounds, tt, samples);
  for (int j = 0; j < nj; j++) tt[j].kvs = kvs;
  bench_reader_free(rd1);
  bench_reader_free(rd2);
  const double flop = 4.0 * D * H * c->batch * visible_pairs(sh->mask, c->q_len, c->kv_len);
  /* each kernel job against the peak loop and the read with its thread count; the 2-thread limit of a round is the
   * better of its 2-thread pass and its 1-thread one */
  const int nr = ip1 >= 0 ? tt[ip1].samples : ir1 >= 0 ? tt[ir1].samples : 0;
  const double pf1 = pk1 ? bench_peak_flop(pk1) : 0, pf2 = pk2 ? bench_peak_flop(pk2) : 0;
  double peak2[MAX_SAMPLES], read2[MAX_SAMPLES];
  const double *pk1s = ip1 >= 0 ? samples[ip1] : NULL, *rd1s = ir1 >= 0 ? samples[ir1] : NULL;
  const double *pk2s = ip2 < 0 ? NULL : pk1s ? best_of_1t_2t(pk1s, samples[ip2], pf2 / pf1, nr, peak2) : samples[ip2];
  const double *rd2s = ir2 < 0 ? NULL : rd1s ? best_of_1t_2t(rd1s, samples[ir2], 1.0, nr, read2) : samples[ir2];
  const int kernel_jobs[] = {i1, ig, i2, inx, i4k};
  const double *peak_of[] = {pk1s, pk1s, pk2s, pk1s, pk1s}, *read_of[] = {rd1s, rd1s, rd2s, rd1s, rd1s};
  for (int x = 0; x < 5; x++) {
    const int j = kernel_jobs[x];
    const double *p = peak_of[x], *r = read_of[x];
    if (j < 0) continue;
    if (p && tt[j].status == ATTNGEN_OK)
      tt[j].pct_peak_rounds = 100.0 * flop / (x == 2 ? pf2 : pf1) * paired_ratio(p, samples[j], tt[j].samples);
    if (!r) continue;
    double tmp[MAX_SAMPLES];
    memcpy(tmp, r, sizeof(double) * (size_t)nr);
    tt[j].read_gbs = kv_bytes / bench_median(tmp, nr) * 1e-9;
    if (tt[j].status == ATTNGEN_OK) tt[j].pct_bw_read = 100.0 * paired_ratio(r, samples[j], tt[j].samples);
  }
  if (ip1 >= 0 && ip2 >= 0 && tt[i2].status == ATTNGEN_OK)
    tt[i2].peak_2t_over_1t =
        bench_peak_flop(pk2) / bench_peak_flop(pk1) * paired_ratio(samples[ip1], samples[ip2], tt[i2].samples);
  bench_peak_free(pk1);
  bench_peak_free(pk2);
  timing t1 = tt[i1], t2 = tt[i2], tg = none;
  if (gen_separate)
    tg = tt[ig];
  else if (rcg != ATTNGEN_OK)
    tg.status = rcg;
  else
    tg = t1; /* select ran the generic kernel itself */

  /* naive, small sizes only, timed on its own (it is only there for the plots) */
  timing tn = none;
  float *on = NULL;
  const int do_naive = flop <= st->naive_max_flop && !c->head_major; /* naive.c reads dense token-major K/V */
  if (do_naive) {
    attngen_args an = a;
    on = alloc_floats(nq);
    an.o = on;
    job jn = {RUN_NAIVE, NULL, sh, &an, 1, NULL, NULL, NULL, -1, kvs == KV_COLD_EVICTED ? evictor(st) : NULL, NULL, NULL};
    static double nsamples[1][MAX_SAMPLES];
    measure_set(&jn, 1, st->budget, 1, &tn, nsamples);
    tn.kvs = kvs;
  }

  /* accuracy of what ran (all against the selected kernel's 1-thread output) */
  double err_ref = -1, err_gen = -1, err_par = -1;
  const char *ref_name = "";
  if (t1.status == ATTNGEN_OK) {
    if (do_naive && tn.status == ATTNGEN_OK) {
      err_ref = max_abs_diff(o1, on, nq);
      ref_name = "naive";
      if (err_ref > st->worst_err_naive) st->worst_err_naive = err_ref;
    }
    if (gen_separate && tg.status == ATTNGEN_OK) {
      err_gen = max_abs_diff(o1, og, nq);
      if (err_gen > st->worst_err_generic) st->worst_err_generic = err_gen;
      if (err_ref < 0) {
        err_ref = err_gen;
        ref_name = "generic";
      }
    }
    if (t2.status == ATTNGEN_OK) {
      err_par = max_abs_diff(o1, o2, nq);
      if (err_par > st->worst_err_parallel) st->worst_err_parallel = err_par;
    }
  }

  const char *isa_sel = ksel.info ? attngen_isa_name(ksel.info->isa) : "?";
  const char *variant = sel_generic ? "fallback" : "special";
  double ratio_sg = -1, ratio_par = -1;
  if (t1.status == ATTNGEN_OK && tg.status == ATTNGEN_OK && gen_separate) {
    ratio_sg = paired_ratio(samples[ig], samples[i1], t1.samples);
    st->log_spec_gen_sum += log(ratio_sg);
    st->spec_gen_n++;
  }
  if (t1.status == ATTNGEN_OK && t2.status == ATTNGEN_OK) ratio_par = paired_ratio(samples[i1], samples[i2], t1.samples);

  emit(st, c, label, variant, kernel_name(&ksel), !sel_generic, isa_sel, 1, &t1, ratio_sg, -1, err_ref, ref_name,
       note);
  if (rcg == ATTNGEN_OK)
    emit(st, c, label, "generic", kernel_name(&kgen), 0, attngen_isa_name(kgen.info->isa), 1, &tg, -1, -1,
         gen_separate ? err_gen : 0.0, gen_separate ? "select" : "same kernel",
         gen_separate ? "" : "same run as the select row");
  else {
    printf("%-38s %-9s generic avx2 unavailable: %s\n", label, "generic", attngen_last_error());
  }
  emit(st, c, label, variant, kernel_name(&ksel), !sel_generic, isa_sel, 2, &t2, -1, ratio_par, err_par, "1 thread",
       "attngen_run_parallel(2)");
  if (have_next) {
    char before[64];
    snprintf(before, sizeof before, "%s kernel ", isa_sel);
    emit_versus(st, c, label, attngen_isa_name(isa2), kernel_name(&knext), 1, attngen_isa_name(isa2), &tt[inx], &t1,
                samples[inx], samples[i1], onx, o1, nq, &st->log_isa_gain_sum, &st->isa_gain_n, before,
                " this one (median of per-round ratios)", 1);
  }
  if (i4k >= 0)
    emit_versus(st, c, label, "4k-pages", kernel_name(&ksel), !sel_generic, isa_sel, &tt[i4k], &t1, samples[i4k],
                samples[i1], o4k, o1, nq, &st->log_huge_gain_sum, &st->huge_gain_n,
                "K/V from attngen_alloc (huge pages): ", " this kernel on the same K/V on 4 KiB pages", 0);
  if (do_naive)
    emit(st, c, label, "naive", "naive C triple loop (bench/naive.c)", 0, "c", 1, &tn, -1, -1, strcmp(ref_name, "naive") == 0 ? err_ref : -1, "select", "");
  if (t2.peak_2t_over_1t > 0)
    printf("%-38s   the FMA peak loop in these rounds: 2 threads %.2fx 1 thread (what the host gave the second "
           "thread; the 2-thread %%peak is against the better of it and 1 thread per round)\n", "", t2.peak_2t_over_1t);
  if (ir1 >= 0 || ir2 >= 0)
    printf("%-38s   %%bw: against the read of these K/V bytes in the same rounds: 1 thread %.1f GB/s, 2 threads "
           "%.1f GB/s (per round the better of the 2- and 1-thread read; start of run: %.1f, %.1f)\n", "", t1.read_gbs, t2.read_gbs, st->m.bw1_gbs, st->m.bw2_gbs);
  if (note[0]) printf("%-38s   note: %s\n", "", note);
  printf("\n");

  attngen_free(q);
  attngen_free(k);
  attngen_free(v);
  attngen_free(o1);
  attngen_free(og);
  attngen_free(o2);
  attngen_free(on);
  attngen_free(onx);
  attngen_free(o4k);
  free(k4k);
  free(v4k);
}

/* ------------------------------------------------------------------------------------------------ */
/* RoPE and the KV cache, on llama-3-8b's table (theta 500000, rotate_half over 128 dims):
 *   decode   the fused step (attngen_step, 1 new token: rotate q while packing + rotate/append the new K row and
 *            copy its V row + attend to the 4096 rows) vs attention alone (attngen_run, the same kernel with its
 *            RoPE descriptor cleared) on the same cache of 4096 rows; target <= 1.05x;
 *   prefill  causal S=512 with RoPE (attngen_run: q rotated while packed; the cache holds rotated K) vs without
 *            (the descriptor cleared); target <= 1.03x. Also the prefill step (append S rotated K rows and V rows
 *            into an empty cache, then attend) vs attention alone.
 * Each pair is timed in interleaved rounds (~1.5 s per job, at least 7 rounds; quick: 0.5 s); the ratio is the
 * median of the per-round ratios. 1 thread. BENCH_FILTER=rope runs only this section. */
static attngen_shape mkshape(int h, int kvh, int d, attngen_mask mask, attngen_phase phase);

/* section: the line prefix ("rope", "features"); min_rounds: the fewest interleaved rounds (long calls: fewer). */
static void timed_pair(bench_state *st, const char *section, const char *label, const job *plain, const job *with,
                       double target, int min_rounds, FILE *csv) {
  job jobs[2] = {*plain, *with};
  static double samples[2][MAX_SAMPLES];
  timing t[2];
  /* more rounds than the other cases (a ratio of two close times is what is asked): ~1.5 s per job, >= 7 rounds */
  measure_set(jobs, 2, st->quick ? 0.5 : 1.5, min_rounds, t, samples);
  if (t[0].status != ATTNGEN_OK || t[1].status != ATTNGEN_OK) {
    printf("%s: %-64s ERROR %s: %s\n", section, label, attngen_status_name(t[0].status ? t[0].status : t[1].status),
           attngen_last_error());
    st->errors++;
    return;
  }
  const double ratio = paired_ratio(samples[1], samples[0], t[0].samples);
  printf("%s: %-64s %9.3f ms %9.3f ms %7.3fx", section, label, t[0].sec * 1e3, t[1].sec * 1e3, ratio);
  if (target > 0) printf("  (target <= %.2fx: %s)", target, ratio <= target ? "met" : "NOT MET");
  printf("\n");
  if (csv) {
    fprintf(csv, "%s,%.6f,%.6f,%.4f,", label, t[0].sec * 1e3, t[1].sec * 1e3, ratio);
    if (target > 0) fprintf(csv, "%.2f", target);
    fprintf(csv, ",%d\n", t[0].samples);
  }
}

static void run_rope(bench_state *st, const char *outdir) {
  const attngen_table *t = find_table("llama-3-8b");
  if (!t || t->params.rope.style == ATTNGEN_ROPE_NONE) {
    printf("rope: llama-3-8b's table has no RoPE: skipped\n");
    return;
  }
  char path[600];
  snprintf(path, sizeof path, "%s/rope.csv", outdir);
  FILE *csv = fopen(path, "w");
  if (csv) fprintf(csv, "case,baseline_ms,with_rope_ms,ratio,target,rounds\n");
  printf("\nRoPE and the KV cache (llama-3-8b: theta %g, rotary_dim %d), 1 thread, interleaved rounds (medians):\n",
         t->params.rope.theta, t->params.rope.rotary_dim);
  printf("rope: %-64s %12s %12s %8s\n", "case", "baseline", "with RoPE", "ratio");
  const int H = 32, KVH = 8, D = 128;
  const size_t qrow = (size_t)H * D, krow = (size_t)KVH * D;

  /* decode: one new token against a cache of 4096 rows (4095 old + the new one) */
  {
    const int KV = 4096;
    attngen_shape sh = mkshape(H, KVH, D, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_DECODE);
    attngen_kernel k, kplain;
    if (attngen_select(t, &sh, &k) != ATTNGEN_OK) {
      printf("rope: decode select failed: %s\n", attngen_last_error());
      st->errors++;
    } else {
      kplain = k;
      memset(&kplain.params.rope, 0, sizeof kplain.params.rope);
      float *q = alloc_floats(qrow), *kc = alloc_floats((size_t)KV * krow), *vc = alloc_floats((size_t)KV * krow);
      float *kn = alloc_floats(krow), *vn = alloc_floats(krow), *o1 = alloc_floats(qrow), *o2 = alloc_floats(qrow);
      fill_random(q, qrow, 11), fill_random(kc, (size_t)KV * krow, 12), fill_random(vc, (size_t)KV * krow, 13);
      fill_random(kn, krow, 14), fill_random(vn, krow, 15);
      attngen_args a;
      memset(&a, 0, sizeof a);
      a.batch = 1, a.q_len = 1, a.kv_len = KV, a.q = q, a.k = kc, a.v = vc, a.o = o1;
      static int32_t len = 4095;
      attngen_step_args s;
      memset(&s, 0, sizeof s);
      s.kv.batch = 1, s.kv.n_new = 1, s.kv.kv_capacity = KV, s.kv.cache_len = &len;
      s.kv.k_new = kn, s.kv.v_new = vn, s.kv.k_cache = kc, s.kv.v_cache = vc;
      s.q = q, s.o = o2;
      job plain = {RUN_KERNEL, &kplain, &sh, &a, 1, NULL, NULL, NULL, -1, NULL, NULL, NULL}, step = {RUN_STEP, &k, &sh, NULL, 1, &s, NULL, NULL, -1, NULL, NULL, NULL};
      timed_pair(st, "rope", "decode h32/kv8/d128 kv=4096: attention alone vs fused step", &plain, &step, 1.05, 7,
                 csv);
      attngen_args ar = a;
      ar.o = o2;
      job rot = {RUN_KERNEL, &k, &sh, &ar, 1, NULL, NULL, NULL, -1, NULL, NULL, NULL};
      timed_pair(st, "rope", "decode h32/kv8/d128 kv=4096: attention alone vs with q rotated", &plain, &rot, 0, 7, csv);
      attngen_free(q), attngen_free(kc), attngen_free(vc), attngen_free(kn), attngen_free(vn), attngen_free(o1), attngen_free(o2);
    }
  }
  /* prefill: causal S=512 (and 2048 in a full run) */
  for (int si = 0; si < (st->quick ? 1 : 2); si++) {
    const int S = si ? 2048 : 512;
    attngen_shape sh = mkshape(H, KVH, D, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_PREFILL);
    attngen_kernel k, kplain;
    if (attngen_select(t, &sh, &k) != ATTNGEN_OK) {
      printf("rope: prefill select failed: %s\n", attngen_last_error());
      st->errors++;
      break;
    }
    kplain = k;
    memset(&kplain.params.rope, 0, sizeof kplain.params.rope);
    float *q = alloc_floats((size_t)S * qrow), *kc = alloc_floats((size_t)S * krow), *vc = alloc_floats((size_t)S * krow);
    float *kn = alloc_floats((size_t)S * krow), *vn = alloc_floats((size_t)S * krow);
    float *o1 = alloc_floats((size_t)S * qrow), *o2 = alloc_floats((size_t)S * qrow);
    fill_random(q, (size_t)S * qrow, 21), fill_random(kc, (size_t)S * krow, 22), fill_random(vc, (size_t)S * krow, 23);
    fill_random(kn, (size_t)S * krow, 24), fill_random(vn, (size_t)S * krow, 25);
    attngen_args a;
    memset(&a, 0, sizeof a);
    a.batch = 1, a.q_len = S, a.kv_len = S, a.q = q, a.k = kc, a.v = vc, a.o = o1;
    attngen_args ar = a;
    ar.o = o2;
    job plain = {RUN_KERNEL, &kplain, &sh, &a, 1, NULL, NULL, NULL, -1, NULL, NULL, NULL}, rot = {RUN_KERNEL, &k, &sh, &ar, 1, NULL, NULL, NULL, -1, NULL, NULL, NULL};
    char label[120];
    snprintf(label, sizeof label, "prefill h32/kv8/d128 causal S=%d: without vs with RoPE", S);
    timed_pair(st, "rope", label, &plain, &rot, 1.03, 7, csv);
    static int32_t zero = 0;
    attngen_step_args s;
    memset(&s, 0, sizeof s);
    s.kv.batch = 1, s.kv.n_new = S, s.kv.kv_capacity = S, s.kv.cache_len = &zero;
    s.kv.k_new = kn, s.kv.v_new = vn, s.kv.k_cache = kc, s.kv.v_cache = vc;
    s.q = q, s.o = o2;
    job step = {RUN_STEP, &k, &sh, NULL, 1, &s, NULL, NULL, -1, NULL, NULL, NULL};
    snprintf(label, sizeof label, "prefill h32/kv8/d128 causal S=%d: attention alone vs step", S);
    timed_pair(st, "rope", label, &plain, &step, 0, 7, csv);
    attngen_free(q), attngen_free(kc), attngen_free(vc), attngen_free(kn), attngen_free(vn), attngen_free(o1), attngen_free(o2);
  }
  if (csv) fclose(csv);
  printf("rope: results in %s\n", path);
}

/* ------------------------------------------------------------------------------------------------ */
/* Attention features, each pair timed in interleaved rounds (medians of per-round ratios), on the bench configs
 * bench-<feature>-h32-kv8-d128 and -h16-kv8-d256 against the same shapes without features:
 *   window   causal prefill S=8192 (quick: 2048) with a window of 1024 (quick: 512) passed per call vs without, 1
 *            thread (target: 3.5x faster, ratio <= 0.29); decode of 1 query with the table's 4096-key window at
 *            kv_len 32768 vs decode without window at kv_len 4096, 1 thread (target <= 1.2x);
 *   overhead causal prefill S=2048 (quick: 1024) with softcap 50, ALiBi, sink logits vs without, 1 thread (targets
 *            <= 1.10x, 1.10x, 1.03x), and decode at kv_len 4096 with sink logits (<= 1.03x).
 * BENCH_FILTER=features runs only this section. */
typedef struct {
  attngen_kernel k;
  attngen_shape sh;
  attngen_args a;
  float *q, *kv, *o, *sinks;
} feature_case;

/* The causal kernel of `model`'s table for its own shape and features, on random Q, K, V (and sink logits). */
static int feature_case_init(bench_state *st, feature_case *c, const char *model, attngen_phase phase, int q_len,
                             int kv_len) {
  const attngen_table *t = find_table(model);
  memset(c, 0, sizeof *c);
  if (t) {
    c->sh = mkshape(t->heads, t->kv_heads, t->head_dim, ATTNGEN_MASK_CAUSAL, phase);
    c->sh.features = t->kernels[0].features; /* a bench table's kernels share its features */
  }
  if (!t || attngen_select(t, &c->sh, &c->k) != ATTNGEN_OK) {
    printf("features: %s: no kernel (%s)\n", model, t ? attngen_last_error() : "table not built");
    st->errors++;
    return -1;
  }
  const int H = t->heads;
  const size_t qn = (size_t)q_len * H * t->head_dim, kn = (size_t)kv_len * t->kv_heads * t->head_dim;
  c->q = alloc_floats(qn), c->kv = alloc_floats(2 * kn), c->o = alloc_floats(qn), c->sinks = alloc_floats((size_t)H);
  fill_random(c->q, qn, 31), fill_random(c->kv, 2 * kn, 32), fill_random(c->sinks, (size_t)H, 33);
  c->a.batch = 1, c->a.q_len = q_len, c->a.kv_len = kv_len;
  c->a.q = c->q, c->a.k = c->kv, c->a.v = c->kv + kn, c->a.o = c->o;
  if (c->sh.features & ATTNGEN_ATTN_SINKS) c->a.sinks = c->sinks;
  return 0;
}

static void feature_case_free(feature_case *c) {
  attngen_free(c->q), attngen_free(c->kv), attngen_free(c->o), attngen_free(c->sinks);
}

/* Times model_b's kernel against model_a's on their cases (threads: 1 = attngen_run, else attngen_run_parallel). */
static void feature_pair(bench_state *st, const char *label, feature_case *a, feature_case *b, int threads,
                         double target, int min_rounds, FILE *csv) {
  const run_kind kind = threads > 1 ? RUN_PARALLEL : RUN_KERNEL;
  job ja = {kind, &a->k, &a->sh, &a->a, threads, NULL, NULL, NULL, -1, NULL, NULL, NULL};
  job jb = {kind, &b->k, &b->sh, &b->a, threads, NULL, NULL, NULL, -1, NULL, NULL, NULL};
  timed_pair(st, "features", label, &ja, &jb, target, min_rounds, csv);
}

static void run_features(bench_state *st, const char *outdir) {
  char path[600], label[120];
  snprintf(path, sizeof path, "%s/features.csv", outdir);
  FILE *csv = fopen(path, "w");
  if (csv) fprintf(csv, "case,baseline_ms,with_feature_ms,ratio,target,rounds\n");
  printf("\nAttention features, interleaved rounds (medians of per-round ratios):\n");
  printf("features: %-64s %12s %12s %8s\n", "case", "baseline", "feature", "ratio");
  feature_case a, b;
  { /* sliding window, prefill */
    const int S = st->quick ? 2048 : 8192, W = st->quick ? 512 : 1024;
    if (!feature_case_init(st, &a, "bench-h32-kv8-d128", ATTNGEN_PHASE_PREFILL, S, S)) {
      if (!feature_case_init(st, &b, "bench-window-h32-kv8-d128", ATTNGEN_PHASE_PREFILL, S, S)) {
        b.a.window = W;
        snprintf(label, sizeof label, "prefill h32/kv8/d128 causal S=%d: no window vs window %d", S, W);
        feature_pair(st, label, &a, &b, 1, 1.0 / 3.5, 3, csv);
        feature_case_free(&b);
      }
      feature_case_free(&a);
    }
  }
  /* sliding window, decode: the window's keys only, wherever they sit in a long cache */
  if (!feature_case_init(st, &a, "llama-3-8b", ATTNGEN_PHASE_DECODE, 1, 4096)) {
    if (!feature_case_init(st, &b, "bench-window-h32-kv8-d128", ATTNGEN_PHASE_DECODE, 1, 32768)) {
      feature_pair(st, "decode h32/kv8/d128 q=1: kv=4096 vs window 4096 at kv=32768", &a, &b, 1, 1.2, 7, csv);
      feature_case_free(&b);
    }
    feature_case_free(&a);
  }
  /* the overhead of soft-cap, ALiBi and sink logits at head_dim 128 and 256 */
  static const struct { const char *plain, *shape; } dims[] = {{"bench-h32-kv8-d128", "h32-kv8-d128"},
                                                                {"bench-h16-kv8-d256", "h16-kv8-d256"}};
  static const struct { const char *name; double target; } feats[] = {
      {"softcap", 1.10}, {"alibi", 1.10}, {"sinks", 1.03}};
  const int S = st->quick ? 1024 : 2048;
  for (int d = 0; d < 2; d++)
    for (int f = 0; f < 3; f++) {
      char model[64];
      snprintf(model, sizeof model, "bench-%s-%s", feats[f].name, dims[d].shape);
      if (feature_case_init(st, &a, dims[d].plain, ATTNGEN_PHASE_PREFILL, S, S)) continue;
      if (!feature_case_init(st, &b, model, ATTNGEN_PHASE_PREFILL, S, S)) {
        snprintf(label, sizeof label, "prefill %s causal S=%d: without vs with %s", dims[d].shape, S, feats[f].name);
        feature_pair(st, label, &a, &b, 1, feats[f].target, 7, csv);
        feature_case_free(&b);
      }
      feature_case_free(&a);
    }
  for (int d = 0; d < 2; d++) {
    char model[64];
    snprintf(model, sizeof model, "bench-sinks-%s", dims[d].shape);
    if (feature_case_init(st, &a, d ? dims[d].plain : "llama-3-8b", ATTNGEN_PHASE_DECODE, 1, 4096)) continue;
    if (!feature_case_init(st, &b, model, ATTNGEN_PHASE_DECODE, 1, 4096)) {
      snprintf(label, sizeof label, "decode %s q=1 kv=4096: without vs with sinks", dims[d].shape);
      feature_pair(st, label, &a, &b, 1, 1.03, 7, csv);
      feature_case_free(&b);
    }
    feature_case_free(&a);
  }
  if (csv) fclose(csv);
  printf("features: results in %s\n", path);
}

/* ------------------------------------------------------------------------------------------------ */

/* The cache's storage types: decode beyond the last-level cache (kv_len from kv_beyond_llc: the fp32 cache is >= 4x
 * the LLC), each type's cache filled by attngen_kv_append from the same fp32 rows, the types and plain reads of the
 * fp32 K/V (streamed, and on token rows in the fp32 kernel's order: rows_read) timed in interleaved rounds. Per type:
 * the bytes its call reads (K, V and int8 scales), GB/s, % of the read (the faster of the two; read_limit), % of the
 * roofline bound max(bytes / that read, flops / the run's FMA peak), and
 * its speed over the fp32 cache's. Then prefill from each type over the fp32 cache (the repack converts). */
static int kv_beyond_llc(double llc, int kvh, int d);

typedef struct {
  void *k, *v;
  float *ks, *vs;
  size_t bytes; /* what a decode call reads */
} kv_cache_buf;

/* pg: a paged cache (its pools hold num_pages x page_size rows; the block table says where each row goes), or NULL */
static int kv_cache_fill(attngen_kv_dtype t, const attngen_kernel *kern, const attngen_shape *sh, int batch, int kv,
                         int head_major, const float *kf, const float *vf, const attngen_pages *pg, kv_cache_buf *c,
                         attngen_args *a) {
  const size_t rows = pg ? (size_t)pg->num_pages * pg->page_size : (size_t)batch * kv;
  const size_t n = rows * sh->kv_heads * sh->head_dim;
  const size_t bytes = (size_t)attngen_kv_dtype_bytes(t);
  const size_t ns = n / (size_t)sh->head_dim * (size_t)attngen_kv_scales_per_row(t, sh->head_dim);
  int32_t *len = calloc((size_t)batch, sizeof *len);
  attngen_append_args ap;
  memset(c, 0, sizeof *c);
  c->k = attngen_alloc(n * bytes + 64), c->v = attngen_alloc(n * bytes + 64);
  if (ns) c->ks = (float *)attngen_alloc(ns * 4 + 64), c->vs = (float *)attngen_alloc(ns * 4 + 64);
  c->bytes = 2 * (n * bytes + ns * 4);
  memset(&ap, 0, sizeof ap);
  ap.batch = batch, ap.n_new = kv, ap.kv_capacity = pg ? 0 : kv, ap.cache_len = len, ap.k_new = kf, ap.v_new = vf;
  memset(a, 0, sizeof *a);
  if (pg) ap.pages = a->pages = *pg;
  attngen_append_args_set_kv(&ap, t, c->k, c->v, c->ks, c->vs);
  attngen_args_set_kv(a, t, c->k, c->v, c->ks, c->vs);
  if (head_major) { /* [batch][kv_heads][kv][head_dim], or pages [page][kv_heads][page_size][head_dim]; strides in
                     * elements of the type (scales: in floats) */
    const int groups = attngen_kv_scales_per_row(t, sh->head_dim), len = pg ? pg->page_size : kv;
    const attngen_strides hm = {(ptrdiff_t)sh->kv_heads * len * sh->head_dim, sh->head_dim, (ptrdiff_t)len * sh->head_dim};
    const attngen_strides hs = {(ptrdiff_t)sh->kv_heads * len * groups, groups, (ptrdiff_t)len * groups};
    ap.k_cache_stride = ap.v_cache_stride = a->k_stride = a->v_stride = hm;
    if (groups) ap.k_cache_scale_stride = ap.v_cache_scale_stride = a->k_scale_stride = a->v_scale_stride = hs;
  }
  int st = attngen_kv_append(kern, &ap);
  free(len);
  if (st) fprintf(stderr, "bench: append %s: %s\n", attngen_kv_dtype_name(t), attngen_last_error());
  return st;
}

static void kv_cache_free(kv_cache_buf *c) {
  attngen_free(c->k), attngen_free(c->v), attngen_free(c->ks), attngen_free(c->vs);
}

/* The kernel for a storage type: `model`'s table, or `typed` (a bench table of the same shape listing every type,
 * NULL: none) where `model`'s config does not list the type and would give the generic kernel. */
static int select_typed(const char *model, const char *typed, const attngen_shape *sh, attngen_kernel *kern) {
  int st = attngen_select(find_table(model), sh, kern);
  if (!st && kernel_is_generic(kern) && typed) st = attngen_select(find_table(typed), sh, kern);
  return st;
}

static void run_kv_types(bench_state *st, const char *outdir) {
  static const attngen_kv_dtype types[] = {ATTNGEN_KV_F32, ATTNGEN_KV_F16, ATTNGEN_KV_BF16, ATTNGEN_KV_INT8,
                                           ATTNGEN_KV_INT8_G32};
  enum { NT = sizeof types / sizeof types[0] };
  /* model: the catalog's table; typed: a bench table of the same shape listing every type, for the types the
   * catalog's config does not list (else they would run the generic kernel) */
  struct {
    const char *model, *typed;
    int h, kvh, d, batch, head_major;
  } cs[] = {{"llama-3-8b", "bench-h32-kv8-d128-kv", 32, 8, 128, 1, 0},
            {"llama-3-8b", "bench-h32-kv8-d128-kv", 32, 8, 128, 1, 1},
            {"bench-h32-kv32-d128", NULL, 32, 32, 128, 1, 0},
            {"bench-h14-kv2-d64", NULL, 14, 2, 64, 1, 0},
            {"llama-3-8b", "bench-h32-kv8-d128-kv", 32, 8, 128, 8, 0}};
  const int over0 = st->over_limit;
  char path[512];
  snprintf(path, sizeof path, "%s/kv_types.csv", outdir);
  FILE *csv = fopen(path, "w");
  if (csv) fprintf(csv, "case,kv_dtype,kernel,kv_len,batch,bytes,ms,gbs,pct_read,pct_bound,speed_over_f32\n");
  printf("\nK/V storage types: decode q=1 beyond the last-level cache, 1 thread (plain reads of the fp32 K/V, streamed and,\n"
         "on token rows, in the kernel's order, and every type in interleaved rounds; bound = max(bytes / the fastest of\n"
         "those reads and the run's start one, flops / FMA peak %.1f GFLOP/s at the start of the run))\n",
         st->m.fma_gflops);
  printf("%-30s %-9s %-48s %9s %9s %7s %7s %7s %7s\n", "case", "type", "kernel", "MiB read", "median ms", "GB/s", "%read",
         "%bound", "÷f32");
  for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++) {
    const int kv = cs[ci].batch > 1 ? kv_beyond_llc(st->llc, cs[ci].kvh, cs[ci].d) / cs[ci].batch
                                    : kv_beyond_llc(st->llc, cs[ci].kvh, cs[ci].d);
    const size_t n = (size_t)cs[ci].batch * kv * cs[ci].kvh * cs[ci].d;
    float *kf = alloc_floats(n), *vf = alloc_floats(n);
    float *q = alloc_floats((size_t)cs[ci].batch * cs[ci].h * cs[ci].d), *o[NT];
    fill_random(kf, n, 11), fill_random(vf, n, 12), fill_random(q, (size_t)cs[ci].batch * cs[ci].h * cs[ci].d, 13);
    attngen_kernel kern[NT];
    attngen_args args[NT];
    kv_cache_buf buf[NT];
    attngen_shape sh[NT];
    job jobs[NT + 2];
    rows_read rr;
    int ok = 1;
    for (int t = 0; t < NT && ok; t++) {
      sh[t] = mkshape(cs[ci].h, cs[ci].kvh, cs[ci].d, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_DECODE);
      sh[t].kv_dtype = types[t];
      o[t] = alloc_floats((size_t)cs[ci].batch * cs[ci].h * cs[ci].d);
      if (select_typed(cs[ci].model, cs[ci].typed, &sh[t], &kern[t]) ||
          kv_cache_fill(types[t], &kern[t], &sh[t], cs[ci].batch, kv, cs[ci].head_major, kf, vf, NULL, &buf[t], &args[t])) {
        ok = 0;
        break;
      }
      args[t].batch = cs[ci].batch, args[t].q_len = 1, args[t].kv_len = kv, args[t].q = q, args[t].o = o[t];
      job j = {RUN_KERNEL, &kern[t], &sh[t], &args[t], 1, NULL, NULL, NULL, -1, NULL, NULL, NULL};
      jobs[t] = j;
    }
    bench_reader *rd = ok ? bench_reader_new(buf[0].k, buf[0].v, n, 1) : NULL;
    if (!ok || !rd) {
      fprintf(stderr, "bench: storage types: %s case %zu skipped\n", ok ? "no memory for the read" : "setup failed", ci);
      st->errors++;
    } else {
      job r = {RUN_READ, NULL, NULL, NULL, 1, NULL, rd, NULL, -1, NULL, NULL, NULL};
      jobs[NT] = r;
      /* and, on token rows, the fp32 cache's rows read in its kernel's order (tiles of its keys, K then V): a read
       * the kernel's own order may serve faster than any streaming pattern (MHA rows of 16 KiB read 101% of it) */
      const int rows = !cs[ci].head_major;
      if (rows) {
        rr = (rows_read){(const unsigned char *)buf[0].k, (const unsigned char *)buf[0].v, NULL, 1, cs[ci].batch * kv,
                         kern[0].work.keys_per_tile, (size_t)cs[ci].kvh * cs[ci].d * sizeof(float),
                         stream_prefetch_bytes(kern[0].info->isa)};
        job rj = {RUN_ROWS_READ, NULL, NULL, NULL, 1, NULL, NULL, NULL, -1, NULL, NULL, &rr};
        jobs[NT + 1] = rj;
      }
      static double samples[NT + 2][MAX_SAMPLES];
      timing tm[NT + 2];
      measure_set(jobs, NT + 1 + rows, st->quick ? 0.3 : 1.0, st->min_rounds, tm, samples);
      const double read_sec = rows && tm[NT + 1].sec < tm[NT].sec ? tm[NT + 1].sec : tm[NT].sec;
      const double read_gbs = read_limit(st, 2.0 * n * sizeof(float) / read_sec * 1e-9);
      const double flops = 4.0 * cs[ci].batch * cs[ci].h * (double)kv * cs[ci].d;
      char label[96];
      snprintf(label, sizeof label, "decode h%d/kv%d/d%d kv=%d b=%d%s", cs[ci].h, cs[ci].kvh, cs[ci].d, kv, cs[ci].batch,
               cs[ci].head_major ? " hm" : "");
      for (int t = 0; t < NT; t++) {
        if (tm[t].status) {
          printf("%-30s %-9s error %s\n", label, attngen_kv_dtype_name(types[t]), attngen_status_name(tm[t].status));
          st->errors++;
          continue;
        }
        const double sec = tm[t].sec, gbs = buf[t].bytes / sec * 1e-9;
        const double bound = fmax(buf[t].bytes / (read_gbs * 1e9), flops / (st->m.fma_gflops * 1e9));
        const double over = paired_ratio(samples[0], samples[t], tm[t].samples);
        const double err = max_abs_diff(o[t], o[0], (size_t)cs[ci].batch * cs[ci].h * cs[ci].d);
        char pr[16], pbd[16];
        printf("%-30s %-9s %-48s %9.1f %9.3f %7.1f %7s %7s %6.2fx  (vs f32 %.1e)\n", label,
               attngen_kv_dtype_name(types[t]), kernel_name(&kern[t]), buf[t].bytes / 1048576.0, sec * 1e3, gbs,
               pct_cell(st, pr, sizeof pr, 100.0 * gbs / read_gbs, 0), pct_cell(st, pbd, sizeof pbd, 100.0 * bound / sec, 0),
               over, err);
        if (csv)
          fprintf(csv, "%s,%s,%s,%d,%d,%zu,%.4f,%.2f,%.1f,%.1f,%.3f\n", label, attngen_kv_dtype_name(types[t]),
                  kernel_name(&kern[t]), kv, cs[ci].batch, buf[t].bytes, sec * 1e3, gbs, 100.0 * gbs / read_gbs,
                  100.0 * bound / sec, over);
      }
      printf("%-30s %-9s %-48s %9.1f %9.3f %7.1f\n", label, "read",
             rows ? "plain read of the fp32 K/V, faster of 2 orders" : "plain streaming read of the fp32 K and V",
             2.0 * n * sizeof(float) / 1048576.0, read_sec * 1e3, read_gbs);
    }
    if (rd) bench_reader_free(rd);
    for (int t = 0; t < NT; t++) {
      if (ok) kv_cache_free(&buf[t]);
      attngen_free(o[t]);
    }
    attngen_free(kf), attngen_free(vf), attngen_free(q);
    if (!ok) break;
  }
  /* prefill from each type's cache over the fp32 one, h32/kv8/d128 causal */
  {
    const int S = st->quick ? 512 : 2048, h = 32, kvh = 8, d = 128;
    const size_t n = (size_t)S * kvh * d;
    float *kf = alloc_floats(n), *vf = alloc_floats(n), *q = alloc_floats((size_t)S * h * d), *o[NT];
    fill_random(kf, n, 21), fill_random(vf, n, 22), fill_random(q, (size_t)S * h * d, 23);
    attngen_kernel kern[NT];
    attngen_args args[NT];
    kv_cache_buf buf[NT];
    attngen_shape sh[NT];
    job jobs[NT];
    int nt = 0;
    for (int t = 0; t < NT; t++) {
      sh[t] = mkshape(h, kvh, d, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_PREFILL);
      sh[t].kv_dtype = types[t];
      o[t] = alloc_floats((size_t)S * h * d);
      if (select_typed("llama-3-8b", "bench-h32-kv8-d128-kv", &sh[t], &kern[t]) ||
          kv_cache_fill(types[t], &kern[t], &sh[t], 1, S, 0, kf, vf, NULL, &buf[t], &args[t]))
        break;
      args[t].batch = 1, args[t].q_len = S, args[t].kv_len = S, args[t].q = q, args[t].o = o[t];
      job j = {RUN_KERNEL, &kern[t], &sh[t], &args[t], 1, NULL, NULL, NULL, -1, NULL, NULL, NULL};
      jobs[t] = j;
      nt++;
    }
    if (nt == NT) {
      static double samples[NT][MAX_SAMPLES];
      timing tm[NT];
      measure_set(jobs, NT, st->quick ? 0.3 : 1.5, st->min_rounds, tm, samples);
      for (int t = 0; t < NT; t++) {
        const double over = tm[t].status ? 0 : paired_ratio(samples[0], samples[t], tm[t].samples);
        printf("%-30s %-9s %-48s %9s %9.3f %7s %7s %7s %6.2fx  (vs f32 %.1e)\n", "prefill h32/kv8/d128 causal",
               attngen_kv_dtype_name(types[t]), kernel_name(&kern[t]), "", tm[t].sec * 1e3, "", "", "", over,
               max_abs_diff(o[t], o[0], (size_t)S * h * d));
        if (csv)
          fprintf(csv, "prefill h32/kv8/d128 causal S=%d,%s,%s,%d,1,%zu,%.4f,,,,%.3f\n", S,
                  attngen_kv_dtype_name(types[t]), kernel_name(&kern[t]), S, buf[t].bytes, tm[t].sec * 1e3, over);
      }
    } else {
      st->errors++;
    }
    for (int t = 0; t < nt; t++) kv_cache_free(&buf[t]);
    for (int t = 0; t < NT && t <= nt; t++) attngen_free(o[t]);
    attngen_free(kf), attngen_free(vf), attngen_free(q);
  }
  print_footnotes(st, over0, st->slower);
  if (csv) fclose(csv);
}

/* ------------------------------------------------------------------------------------------------ */

/* Paged caches over contiguous ones, h32/kv8/d128 causal, every storage type, 1 thread: decode q=1 beyond the
 * last-level cache and prefill S=2048 (quick: 512), each from a contiguous cache and from pools of pages of 16 and
 * 64 rows handed out in a shuffled order, the three in interleaved rounds; the speed is the median of the per-round
 * ratios contiguous time / paged time (target >= 0.95x). Decode also times a plain read of each cache's K and V rows
 * in the kernel's order in the same rounds (rows_read): its ratio is the memory's own price for the pages' order
 * (shuffled 16-row pages of int8 read at about 0.8x on a Zen 3 host). BENCH_FILTER=paged runs only this section. */
static void run_paged(bench_state *st, const char *outdir) {
  static const attngen_kv_dtype types[] = {ATTNGEN_KV_F32, ATTNGEN_KV_F16, ATTNGEN_KV_BF16, ATTNGEN_KV_INT8,
                                           ATTNGEN_KV_INT8_G32};
  static const int page_sizes[] = {0, 16, 64};
  enum { NP = 3 };
  const attngen_table *tab = find_table("bench-paged-h32-kv8-d128");
  const int h = 32, kvh = 8, d = 128;
  char path[512];
  snprintf(path, sizeof path, "%s/paged.csv", outdir);
  FILE *csv = fopen(path, "w");
  if (csv) fprintf(csv, "phase,kv_dtype,page_size,kernel,kv_len,ms,speed_over_contiguous,read_over_contiguous\n");
  /* BENCH_PAGED_HND=1: head-major pages ([page][kv head][page_size][head_dim]) against a head-major contiguous cache */
  const char *hnd_env = getenv("BENCH_PAGED_HND");
  const int hnd = hnd_env && strcmp(hnd_env, "1") == 0;
  if (hnd) printf("\nhead-major pages and cache (BENCH_PAGED_HND=1)");
  printf("\nPaged caches (pages handed out shuffled) over contiguous ones, h32/kv8/d128 causal, 1 thread, interleaved "
         "rounds;\nspeed = median of per-round contiguous / paged time (target >= 0.95x); decode: `read`, the same "
         "ratio for a\nplain read of the K and V rows in the kernel's order (tiles of its keys, K then V, through the "
         "block table):\nwhat the memory itself charges for the pages' order\n");
  printf("%-8s %-9s %5s %-52s %8s %9s %8s %8s\n", "phase", "type", "page", "kernel", "kv_len", "median ms", "speed",
         "read");
  for (int ph = 0; ph < 2; ph++) {
    const attngen_phase phase = ph ? ATTNGEN_PHASE_PREFILL : ATTNGEN_PHASE_DECODE;
    const int kv = ph ? (st->quick ? 512 : 2048) : kv_beyond_llc(st->llc, kvh, d), q_len = ph ? kv : 1;
    const size_t n = (size_t)kv * kvh * d;
    float *kf = alloc_floats(n), *vf = alloc_floats(n), *q = alloc_floats((size_t)q_len * h * d);
    fill_random(kf, n, 31), fill_random(vf, n, 32), fill_random(q, (size_t)q_len * h * d, 33);
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
      attngen_kernel kern[NP];
      attngen_args args[NP];
      kv_cache_buf buf[NP];
      attngen_shape sh[NP];
      attngen_pages pg[NP];
      int32_t *table[NP] = {NULL, NULL, NULL};
      float *o[NP] = {NULL, NULL, NULL};
      rows_read rr[NP];
      job jobs[2 * NP];
      const int reads = !hnd && phase == ATTNGEN_PHASE_DECODE; /* the rows' plain read: token-major decode */
      int ok = tab != NULL, filled = 0;
      for (int p = 0; p < NP && ok; p++) {
        sh[p] = mkshape(h, kvh, d, ATTNGEN_MASK_CAUSAL, phase);
        sh[p].kv_dtype = types[ti], sh[p].page_size = page_sizes[p];
        o[p] = alloc_floats((size_t)q_len * h * d);
        memset(&pg[p], 0, sizeof pg[p]);
        if (page_sizes[p]) { /* pages in a shuffled order, as an allocator hands them out after a while */
          const int np = (kv + page_sizes[p] - 1) / page_sizes[p];
          table[p] = (int32_t *)malloc((size_t)np * sizeof(int32_t));
          if (!table[p]) ok = 0;
          for (int i = 0; ok && i < np; i++) table[p][i] = i;
          uint64_t x = 77;
          for (int i = np - 1; ok && i > 0; i--) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            const int j = (int)((x >> 33) % (uint64_t)(i + 1));
            const int32_t t = table[p][i];
            table[p][i] = table[p][j], table[p][j] = t;
          }
          pg[p] = (attngen_pages){table[p], np, np, page_sizes[p]};
        }
        if (!ok || attngen_select(tab, &sh[p], &kern[p]) ||
            kv_cache_fill(types[ti], &kern[p], &sh[p], 1, kv, hnd, kf, vf, page_sizes[p] ? &pg[p] : NULL, &buf[p], &args[p])) {
          ok = 0;
          break;
        }
        filled++;
        args[p].batch = 1, args[p].q_len = q_len, args[p].kv_len = kv, args[p].q = q, args[p].o = o[p];
        job j = {RUN_KERNEL, &kern[p], &sh[p], &args[p], 1, NULL, NULL, NULL, -1, NULL, NULL, NULL};
        jobs[p] = j;
        if (reads) {
          rr[p] = (rows_read){(const unsigned char *)buf[p].k, (const unsigned char *)buf[p].v, table[p],
                              page_sizes[p] ? page_sizes[p] : 1, kv, kern[p].work.keys_per_tile,
                              (size_t)kvh * d * (size_t)attngen_kv_dtype_bytes(types[ti]),
                              stream_prefetch_bytes(kern[p].info->isa)};
          job r = {RUN_ROWS_READ, NULL, NULL, NULL, 1, NULL, NULL, NULL, -1, NULL, NULL, &rr[p]};
          jobs[NP + p] = r;
        }
      }
      if (!ok) {
        fprintf(stderr, "bench: paged %s %s: setup failed: %s\n", attngen_phase_name(phase),
                attngen_kv_dtype_name(types[ti]), attngen_last_error());
        st->errors++;
      } else {
        static double samples[2 * NP][MAX_SAMPLES];
        timing tm[2 * NP];
        measure_set(jobs, reads ? 2 * NP : NP, st->quick ? 0.3 : (ph ? 1.5 : 1.0), st->min_rounds, tm, samples);
        for (int p = 0; p < NP; p++) {
          if (tm[p].status) {
            printf("%-8s %-9s %5d error %s\n", attngen_phase_name(phase), attngen_kv_dtype_name(types[ti]),
                   page_sizes[p], attngen_status_name(tm[p].status));
            st->errors++;
            continue;
          }
          const double speed = paired_ratio(samples[0], samples[p], tm[p].samples);
          const double rspeed = reads ? paired_ratio(samples[NP], samples[NP + p], tm[NP + p].samples) : 0.0;
          const int same = !memcmp(o[p], o[0], sizeof(float) * (size_t)q_len * h * d);
          char rcell[16] = "";
          if (reads) snprintf(rcell, sizeof rcell, "%7.3fx", rspeed);
          printf("%-8s %-9s %5d %-52s %8d %9.3f %7.3fx %8s%s\n", attngen_phase_name(phase),
                 attngen_kv_dtype_name(types[ti]), page_sizes[p], kernel_name(&kern[p]), kv, tm[p].sec * 1e3, speed,
                 rcell, same ? "" : "  (output differs from the contiguous cache's!)");
          if (!same) st->errors++;
          if (csv)
            fprintf(csv, "%s,%s,%d,%s,%d,%.4f,%.4f,%.4f\n", attngen_phase_name(phase), attngen_kv_dtype_name(types[ti]),
                    page_sizes[p], kernel_name(&kern[p]), kv, tm[p].sec * 1e3, speed, rspeed);
        }
      }
      for (int p = 0; p < filled; p++) kv_cache_free(&buf[p]);
      for (int p = 0; p < NP; p++) attngen_free(o[p]), free(table[p]);
    }
    attngen_free(kf), attngen_free(vf), attngen_free(q);
  }
  if (csv) fclose(csv);
}

/* ------------------------------------------------------------------------------------------------ */

/* Machine numbers: the FMA peak here, in the process that runs the rounds (its peak loop's width is decided where
 * the loop runs), the bandwidth in a child process, so its 256 MiB buffer stays out of this process's peak RSS. */
static int machine_in_child(bench_machine *m, int quick) {
  memset(m, 0, sizeof *m);
  if (bench_machine_measure_fma(m, quick) != 0) return -1;
  int fd[2];
  if (pipe(fd) != 0) return bench_machine_measure_bw(m, quick);
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return bench_machine_measure_bw(m, quick);
  }
  if (pid == 0) {
    close(fd[0]);
    bench_machine mm = *m; /* the parent's peak fields, sent back unchanged */
    int rc = bench_machine_measure_bw(&mm, quick);
    ssize_t w = rc == 0 ? write(fd[1], &mm, sizeof mm) : -1;
    _exit(w == (ssize_t)sizeof mm ? 0 : 1);
  }
  close(fd[1]);
  size_t got = 0;
  while (got < sizeof *m) {
    ssize_t r = read(fd[0], (char *)m + got, sizeof *m - got);
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!(got == sizeof *m && WIFEXITED(status) && WEXITSTATUS(status) == 0)) return -1;
  for (int t = 0; t < 2; t++) /* this process's readers read as the child's did */
    bench_reader_use_pattern(t + 1, m->read_streams[t], m->read_chunk[t], m->read_ahead[t]);
  return 0;
}

/* 1-minute load average ("?" if unknown): another busy process on this 2-vCPU machine skews 2-thread rows. */
static double loadavg1(void) {
  double l = -1.0;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &l) != 1) l = -1.0;
    fclose(f);
  }
  return l;
}

static void mkdir_p(const char *path) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      mkdir(buf, 0777);
      *p = '/';
    }
  mkdir(buf, 0777);
}

/* The last-level cache of this machine, read at run time (machines of one kind differ: 32 MiB here, 260 MiB
 * elsewhere), so the "beyond the cache" decode cases really stream from memory. 0 if unknown. */
static double llc_bytes(void) {
  double best = 0;
  for (int i = 0; i < 8; i++) {
    char path[96], buf[64];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    if (fgets(buf, sizeof buf, f)) {
      char *end;
      double v = strtod(buf, &end);
      if (*end == 'K') v *= 1024.0;
      else if (*end == 'M') v *= 1024.0 * 1024.0;
      if (v > best) best = v;
    }
    fclose(f);
  }
#ifdef _SC_LEVEL3_CACHE_SIZE
  if (best <= 0) best = (double)sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  return best > 0 ? best : 0;
}

/* kv_len whose K+V (batch 1) is at least 4x the last-level cache (at least 16384, capped at 1 GiB of K+V). */
/* A batch of 8 sequences sharing a prompt prefix beyond the last-level cache (h32/kv8/d128, fp32, 16 own rows
 * each), one decode step: attngen_cascade_decode (the prefix read once for the batch) against 8 decode calls that
 * each read the prefix for one sequence, the plain read of the prefix's bytes timed in
 * the same rounds. Bound = max(prefix bytes / that read (read_limit), the 8 sequences' flops / the FMA peak at the start of the
 * run). BENCH_FILTER=cascade runs only this section. */
static void run_cascade(bench_state *st) {
  enum { B = 8, OWN = 16, H = 32, KVH = 8, D = 128 };
  const int P = kv_beyond_llc(st->llc, KVH, D);
  const size_t row = (size_t)KVH * D, n = (size_t)P * row;
  float *k = alloc_floats(n), *v = alloc_floats(n), *ko = alloc_floats((size_t)B * OWN * row);
  float *vo = alloc_floats((size_t)B * OWN * row), *q = alloc_floats((size_t)B * H * D);
  float *o1 = alloc_floats((size_t)B * H * D), *o2 = alloc_floats((size_t)B * H * D);
  fill_random(k, n, 31), fill_random(v, n, 32), fill_random(ko, (size_t)B * OWN * row, 33);
  fill_random(vo, (size_t)B * OWN * row, 34), fill_random(q, (size_t)B * H * D, 35);
  attngen_shape sh = mkshape(H, KVH, D, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_DECODE);
  attngen_kernel kern;
  attngen_cascade_args ca;
  attngen_args sep;
  memset(&ca, 0, sizeof ca), memset(&sep, 0, sizeof sep);
  ca.prefix.kv_len = P, ca.prefix.k = k, ca.prefix.v = v;
  ca.suffix.batch = B, ca.suffix.q_len = 1, ca.suffix.kv_len = OWN, ca.suffix.q = q, ca.suffix.o = o1;
  ca.suffix.k = ko, ca.suffix.v = vo;
  sep.batch = B, sep.q_len = 1, sep.kv_len = P, sep.q = q, sep.o = o2, sep.k = k, sep.v = v; /* run per sequence */
  bench_reader *rd = bench_reader_new(k, v, n, 1);
  printf("\nShared prefix (cascade): decode of %d sequences sharing a %d-row prefix, h%d/kv%d/d%d fp32, %d own rows each,\n"
         "1 thread; bound = max(prefix bytes / the faster of the read in the same rounds and the run's start one,\n"
         "%d sequences' flops / FMA peak %.1f GFLOP/s)\n",
         B, P, H, KVH, D, OWN, B, st->m.fma_gflops);
  if (!rd || attngen_select(find_table("llama-3-8b"), &sh, &kern)) {
    fprintf(stderr, "bench: cascade: setup failed\n");
    st->errors++;
  } else {
    job jobs[3] = {{RUN_CASCADE, &kern, &sh, NULL, 1, NULL, NULL, NULL, -1, NULL, &ca, NULL},
                   {RUN_EACH, &kern, &sh, &sep, 1, NULL, NULL, NULL, -1, NULL, NULL, NULL},
                   {RUN_READ, NULL, NULL, NULL, 1, NULL, rd, NULL, -1, NULL, NULL, NULL}};
    static double samples[3][MAX_SAMPLES];
    timing tm[3];
    measure_set(jobs, 3, st->quick ? 0.5 : 2.0, st->min_rounds, tm, samples);
    if (tm[0].status || tm[1].status) {
      printf("cascade: error %s / %s (%s)\n", attngen_status_name(tm[0].status), attngen_status_name(tm[1].status),
             attngen_last_error());
      st->errors++;
    } else {
      const double bytes = 2.0 * n * sizeof(float), read_gbs = read_limit(st, bytes / tm[2].sec * 1e-9);
      const double flops = 4.0 * B * H * (double)(P + OWN) * D;
      const double bound = fmax(bytes / (read_gbs * 1e9), flops / (st->m.fma_gflops * 1e9));
      char pb[16];
      printf("%-44s %9.3f ms  %6.1f GFLOP/s  %7s of the bound (%.3f ms)\n", "shared prefix read once (cascade)",
             tm[0].sec * 1e3, flops / tm[0].sec * 1e-9, pct_cell(st, pb, sizeof pb, 100.0 * bound / tm[0].sec, 0),
             bound * 1e3);
      printf("%-44s %9.3f ms  %.2fx the cascade's time (median of per-round ratios)\n",
             "the prefix read once per sequence", tm[1].sec * 1e3, paired_ratio(samples[1], samples[0], tm[0].samples));
      printf("%-44s %9.3f ms  %6.1f GB/s\n", "plain read of the prefix's K and V", tm[2].sec * 1e3, read_gbs);
    }
  }
  if (rd) bench_reader_free(rd);
  attngen_free(k), attngen_free(v), attngen_free(ko), attngen_free(vo), attngen_free(q), attngen_free(o1),
      attngen_free(o2);
}

static int kv_beyond_llc(double llc, int kvh, int d) {
  const double row = 2.0 * kvh * d * sizeof(float);
  double want = 4.0 * (llc > 0 ? llc : 32.0 * 1024 * 1024) / row;
  if (want * row > 1024.0 * 1024 * 1024) want = 1024.0 * 1024 * 1024 / row;
  int kv = (int)(ceil(want / 1024.0) * 1024.0);
  return kv < 16384 ? 16384 : kv;
}

static attngen_shape mkshape(int h, int kvh, int d, attngen_mask mask, attngen_phase phase) {
  attngen_shape s;
  memset(&s, 0, sizeof s); /* kv_dtype 0: an fp32 cache */
  s.heads = h;
  s.kv_heads = kvh;
  s.head_dim = d;
  s.mask = mask;
  s.phase = phase;
  return s;
}

int main(int argc, char **argv) {
  const char *outdir = argc > 1 ? argv[1] : "build/bench";
  const char *mode = getenv("BENCH_MODE");
  bench_state st;
  memset(&st, 0, sizeof st);
  st.quick = mode && strcmp(mode, "quick") == 0;
  if (mode && !st.quick && strcmp(mode, "full") != 0) {
    fprintf(stderr, "bench: BENCH_MODE must be quick or full (got '%s')\n", mode);
    return 2;
  }
  st.budget = st.quick ? 0.07 : 0.3;
  st.llc = llc_bytes();
  st.min_rounds = st.quick ? 3 : 7; /* S=2048 takes ~0.5 s a call: the budget alone gave 3 rounds */
  const char *cs = getenv("BENCH_CASE_SECONDS");
  if (cs && atof(cs) > 0) st.budget = atof(cs) / 3.0;
  st.naive_max_flop = st.quick ? 0.6e9 : 5e9;
  double t_start = bench_now();

  printf("attngen bench, mode %s (each variant ~%.2f s, medians)\n", st.quick ? "quick" : "full", st.budget);
  const attngen_table *tl = find_table("llama-3-8b"), *tg2 = find_table("gpt2");
  printf("tables:");
  for (const attngen_table *const *t = attngen_registry_bench; *t; t++)
    printf(" %s (%d kernels, generator %s)", (*t)->model, (*t)->count, (*t)->generator_version);
  printf("%s\n", attngen_registry_bench[0] ? "" : " none generated: every case runs generic");
  unsigned isas = attngen_cpu_isas();
  printf("cpu isas usable by attngen:");
#define PRINT_ISA(E, name, ...) if ((isas >> ATTNGEN_ISA_##E) & 1u) printf(" %s", #name);
  ATTNGEN_ISA_LIST(PRINT_ISA)
#undef PRINT_ISA
  printf(" (specialized and generic kernels compared on %s)\n", attngen_isa_name(best_isa()));
  const double load0 = loadavg1();
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  printf("online cpus %ld, 1-min load average before the run %.2f%s\n", ncpu, load0,
         load0 > 0.5 ? "  (other work is running: expect noise, 2-thread rows especially)" : "");
  if (machine_in_child(&st.m, st.quick) != 0) fprintf(stderr, "bench: machine measurement failed\n");
  bench_machine_print(&st.m);
  printf("\n");

  mkdir_p(outdir);
  char path[600];
  snprintf(path, sizeof path, "%s/machine.csv", outdir);
  FILE *mf = fopen(path, "w");
  if (mf) {
    fprintf(mf, "mode,fma_gflops_1core,read_gbs_1thread,read_gbs_2threads,buffer_mib,repeats,fma_gflops_2threads,"
                "loadavg_before,fma_bits\n");
    fprintf(mf, "%s,%.3f,%.3f,%.3f,%.0f,%d,%.3f,%.2f,%d\n", st.quick ? "quick" : "full", st.m.fma_gflops, st.m.bw1_gbs,
            st.m.bw2_gbs, st.m.buf_mib, st.m.repeats, st.m.fma2_gflops, load0, st.m.fma_bits);
    fclose(mf);
  }
  snprintf(path, sizeof path, "%s/results.csv", outdir);
  st.csv = fopen(path, "w");
  if (!st.csv) {
    fprintf(stderr, "bench: cannot write %s: %s\n", path, strerror(errno));
    return 2;
  }
  fprintf(st.csv, "case,model,phase,mask,heads,kv_heads,head_dim,q_len,kv_len,batch,variant,kernel,specialized,isa,"
                  "threads,calls,status,median_ms,gflops,pct_peak,gbs,pct_bw,spec_over_generic,speedup_2t_over_1t,"
                  "max_abs_err,err_vs,note,read_gbs_same_rounds,pct_bw_vs_start_of_run,pct_peak_vs_start_of_run,"
                  "peak_2t_over_1t_same_rounds,kv_state\n");

  /* ---- cases ---- */
  bcase cases[64];
  int n = 0;
  static const int S[] = {128, 512, 2048};
  static const int KV[] = {512, 4096, 16384};
  static const attngen_mask M[] = {ATTNGEN_MASK_CAUSAL, ATTNGEN_MASK_NONE};
  struct {
    const char *model;
    const attngen_table *table;
    int h, kvh, d;
  } models[] = {{"llama-3-8b", tl, 32, 8, 128}, {"gpt2", tg2, 12, 12, 64}};
  for (int mi = 0; mi < 2; mi++) {
    const char *name = models[mi].model;
    for (int si = 0; si < 3; si++)
      for (int k = 0; k < 2; k++) {
        bcase c = {name, models[mi].table,
                   mkshape(models[mi].h, models[mi].kvh, models[mi].d, M[k], ATTNGEN_PHASE_PREFILL),
                   S[si], S[si], 1, S[si] == 512, 0};
        cases[n++] = c;
      }
  }
  for (int mi = 0; mi < 2; mi++) {
    const char *name = models[mi].model;
    for (int ki = 0; ki < 3; ki++) {
      /* q_len 1: causal (bottom-right aligned) sees the whole cache, same work as none. The largest length is
       * chosen from this machine's last-level cache, so it streams from memory. */
      const int kv = ki == 2 ? kv_beyond_llc(st.llc, models[mi].kvh, models[mi].d) : KV[ki];
      bcase c = {name, models[mi].table,
                 mkshape(models[mi].h, models[mi].kvh, models[mi].d, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_DECODE), 1,
                 kv, 1, KV[ki] == 4096, 0};
      cases[n++] = c;
    }
  }
  /* every decode group size beyond the cache (1: MHA d128, 4: Llama-3-8B above, 7: Qwen2.5-0.5B, 8: Llama-3-70B),
   * a batch of 8 sequences, and the shapes the catalog adds to prefill (d256: Gemma-2, group 7) */
  {
    struct {
      const char *model;
      int h, kvh, d;
    } dec[] = {{"bench-h32-kv32-d128", 32, 32, 128}, {"qwen2-5-0-5b", 14, 2, 64}, {"llama-3-70b", 64, 8, 128}};
    for (int i = 0; i < 3; i++) {
      bcase c = {dec[i].model, find_table(dec[i].model),
                 mkshape(dec[i].h, dec[i].kvh, dec[i].d, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_DECODE), 1,
                 kv_beyond_llc(st.llc, dec[i].kvh, dec[i].d), 1, 0, 0};
      cases[n++] = c;
    }
    bcase b8 = {"llama-3-8b", tl, mkshape(32, 8, 128, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_DECODE), 1, 4096, 8, 0, 0};
    cases[n++] = b8;
    /* the same decode steps on a head-major cache (each kv head's K and V rows contiguous) */
    for (int i = 0; i < 2; i++) {
      const int h = 32, kvh = i ? 8 : 32;
      bcase c = {i ? "llama-3-8b" : "bench-h32-kv32-d128", i ? tl : find_table("bench-h32-kv32-d128"),
                 mkshape(h, kvh, 128, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_DECODE), 1, kv_beyond_llc(st.llc, kvh, 128), 1,
                 0, 1};
      cases[n++] = c;
    }
    /* Gemma 2's global layers: soft-cap 50, the table's value */
    const attngen_table *tg2 = find_table("gemma-2-2b/global");
    bcase g2 = {"gemma-2-2b/global", tg2, mkshape(8, 4, 256, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_PREFILL), 1024, 1024,
                1, 0, 0};
    if (tg2) g2.shape.features = tg2->kernels[0].features;
    cases[n++] = g2;
    bcase q7 = {"qwen2-5-0-5b", find_table("qwen2-5-0-5b"),
                mkshape(14, 2, 64, ATTNGEN_MASK_CAUSAL, ATTNGEN_PHASE_PREFILL), 1024, 1024, 1, 0, 0};
    cases[n++] = q7;
  }
  /* quick: S=512 prefill (llama causal + none, gpt2 causal) and kv=4096 decode */
  if (st.quick) {
    int m = 0;
    for (int i = 0; i < n; i++)
      if (cases[i].in_quick &&
          !(cases[i].shape.phase == ATTNGEN_PHASE_PREFILL && cases[i].shape.heads == 12 &&
            cases[i].shape.mask == ATTNGEN_MASK_NONE))
        cases[m++] = cases[i];
    n = m;
  }

  printf("spec/gen = generic time / selected time (1 thread); 2T/1T = 1-thread time / 2-thread time (both the\n"
         "median of per-round ratios, the variants being timed in interleaved rounds);\n"
         "%%peak is against the FMA peak loop on as many threads, timed in the same interleaved rounds (median of\n"
         "per-round ratios; the start-of-run figure, threads x the 1-core peak, is in the CSV); %%bw against the\n"
         "measured read bandwidth for that thread count (2 threads: per round the better of the 2- and 1-thread\n"
         "loop or read, a stalled second vCPU holding back an evenly split pass, not a kernel's pool), or against\n"
         "the start-of-run read when that was faster (a read the host slowed in those rounds is no limit);\n"
         "maxerr = max |out - reference| (select row: vs naive if run, else vs generic; 2-thread row: vs 1 thread,\n"
         "expected 0).\n"
         "K/V (decode): warm = K+V up to 1/4 of the last-level cache (%.0f MiB), repeated on the same buffers, read from\n"
         "the caches (no %%bw: no memory figure bounds it); cold = K+V up to the cache, evicted before every call by a\n"
         "2-thread read of twice the cache (untimed), or K+V beyond the cache (every call streams it from memory).\n"
         "Marks: a %% above 100 is flagged '!' (a measurement error: nothing runs above a measured limit); a specialized\n"
         "kernel slower than the generic one (spec/gen) or than the next ISA's (ISA line) is flagged '*'.\n\n",
         st.llc / 1048576.0);
  print_header();
  const char *filter = getenv("BENCH_FILTER"); /* run only cases whose label contains this */
  for (int i = 0; i < n; i++) {
    char label[96];
    case_label(&cases[i], label, sizeof label);
    if (filter && *filter && !strstr(label, filter)) continue;
    run_case(&st, &cases[i]);
  }
  print_footnotes(&st, 0, 0);
  fclose(st.csv);
  if (!(filter && *filter) || strstr(filter, "rope")) run_rope(&st, outdir); /* BENCH_FILTER=rope: only this */
  if (!(filter && *filter) || strstr(filter, "kvtype")) run_kv_types(&st, outdir); /* BENCH_FILTER=kvtype: only this */
  if (!(filter && *filter) || strstr(filter, "features")) run_features(&st, outdir); /* BENCH_FILTER=features */
  if (!(filter && *filter) || strstr(filter, "paged")) run_paged(&st, outdir); /* BENCH_FILTER=paged: only this */
  if (!(filter && *filter) || strstr(filter, "cascade")) run_cascade(&st); /* BENCH_FILTER=cascade */

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("summary: %d rows, %d errors, %d case(s) without a specialized kernel (ran generic)\n", st.rows, st.errors,
         st.fallbacks);
  printf("summary: %d cell(s) above a measured limit ('!', measurement error), %d specialized kernel(s) slower than "
         "their comparison ('*')\n", st.over_limit, st.slower);
  bench_reader_free(st.evict);
  attngen_free(st.evict_buf);
  if (st.huge_gain_n)
    printf("summary: geometric mean over %d decode case(s) beyond the cache: K/V from attngen_alloc (huge pages) "
           "%.2fx the same kernel on 4 KiB pages\n", st.huge_gain_n, exp(st.log_huge_gain_sum / st.huge_gain_n));
  if (st.isa_gain_n)
    printf("summary: geometric mean %s ÷ %s (specialized kernels, 1 thread) over %d case(s): %.2fx\n",
           attngen_isa_name(best_isa()), attngen_isa_name(next_isa()), st.isa_gain_n,
           exp(st.log_isa_gain_sum / st.isa_gain_n));
  if (st.spec_gen_n)
    printf("summary: geometric mean spec/gen over %d case(s) with a specialized kernel: %.2fx\n", st.spec_gen_n,
           exp(st.log_spec_gen_sum / st.spec_gen_n));
  printf("summary: worst max|diff| select vs naive %.2e, vs generic %.2e, 2 threads vs 1 thread %.2e\n",
         st.worst_err_naive, st.worst_err_generic, st.worst_err_parallel);
  printf("summary: peak memory (ru_maxrss, bench process; machine measurement ran in a child) %.1f MiB\n",
         ru.ru_maxrss / 1024.0);
  printf("summary: wall time %.1f s; 1-min load average before %.2f, after %.2f (this run itself adds up to 2)\n",
         bench_now() - t_start, load0, loadavg1());
  printf("results: %s/results.csv, %s/machine.csv\n", outdir, outdir);
  return st.errors ? 1 : 0;
}

/* SPDX-License-Identifier: MIT */
/* bench/machine.c: measures, in the same run as the benchmark,
 *   (a) the fp32 FMA peak of one core: a throughput loop of 256-bit FMAs on 12 independent accumulators
 *       (16 flop per FMA instruction), or of 512-bit FMAs (32 flop) where the CPU has AVX-512F and that loop
 *       gives more flop per second (a core with two 512-bit FMA pipes; Zen 4 splits one into two 256-bit
 *       halves, so both loops give the same rate there and the AVX2 one is kept). The width is chosen in the
 *       process that runs the loop (bench_machine_measure_fma) and kept in the machine's fma_bits, which every
 *       bench_peak runs; BENCH_FMA_BITS=256|512 forces it, and
 *   (b) streaming read bandwidth: summing a 256 MiB buffer with 256-bit loads as 2, 4 or 8 streams read in turn,
 *       512 bytes or 64 KiB at a time (read_streams; the fastest pattern here), 1 thread and 2 threads.
 * The FMA peak is the median of several repeats; the read is the fastest of them, since it is the limit decode is
 * held against.
 *
 * Built without -mavx2: the AVX2 code is in functions carrying __attribute__((target("avx2,fma"))) and is
 * only called when the CPU (and OS) support it.
 *
 * Compiled with -DBENCH_MACHINE_MAIN it is a standalone program (build/bench/machine). */
#define _GNU_SOURCE
#include "machine.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h> /* madvise: the read buffer on huge pages */
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define BENCH_X86 1
#else
#define BENCH_X86 0
#endif

double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return (n & 1) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static volatile float g_sink; /* keeps results alive */

#if BENCH_X86
#define FMA_ACCS 12 /* >= latency (4) x ports (2) with margin */

/* The sum of a vector's 8 lanes (what the loops below return, so their work is not optimized away). */
__attribute__((target("avx2,fma"))) static float sum_lanes(__m256 s) {
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}

/* iters x 12 independent FMAs. acc = acc * m + c converges to c / (1 - m): no overflow, no denormals. One body for
 * both widths: fma_loop (256-bit, 16 flop per FMA) and fma_loop_avx512 (512-bit, 32). */
#define DEFINE_FMA_LOOP(NAME, TARGET, V, SET1, FMADD, ADD, REDUCE)                                                  \
  __attribute__((target(TARGET), noinline)) static float NAME(long iters) {                                        \
    const V m = SET1(0.999f), c = SET1(0.001f);                                                                   \
    V a0 = SET1(0.10f), a1 = SET1(0.11f), a2 = SET1(0.12f), a3 = SET1(0.13f), a4 = SET1(0.14f), a5 = SET1(0.15f); \
    V a6 = SET1(0.16f), a7 = SET1(0.17f), a8 = SET1(0.18f), a9 = SET1(0.19f), a10 = SET1(0.20f), a11 = SET1(0.21f); \
    for (long i = 0; i < iters; i++) {                                                                            \
      a0 = FMADD(a0, m, c), a1 = FMADD(a1, m, c), a2 = FMADD(a2, m, c), a3 = FMADD(a3, m, c);                     \
      a4 = FMADD(a4, m, c), a5 = FMADD(a5, m, c), a6 = FMADD(a6, m, c), a7 = FMADD(a7, m, c);                     \
      a8 = FMADD(a8, m, c), a9 = FMADD(a9, m, c), a10 = FMADD(a10, m, c), a11 = FMADD(a11, m, c);                 \
    }                                                                                                             \
    V s = ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7)));                                      \
    return REDUCE(ADD(s, ADD(ADD(a8, a9), ADD(a10, a11))));                                                       \
  }
DEFINE_FMA_LOOP(fma_loop, "avx2,fma", __m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, sum_lanes)
DEFINE_FMA_LOOP(fma_loop_avx512, "avx512f", __m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, _mm512_reduce_add_ps)
#undef DEFINE_FMA_LOOP

/* The peak loop of a vector width (machine.h: fma_bits) and its flop per FMA instruction. The width is a field of
 * the measured machine, not a global: a peak loop timed in one process and counted at another width in another
 * (the 512-bit choice made in a forked child, the 256-bit loop run in the parent) read 107-173% of the peak. */
typedef float (*fma_loop_fn)(long);
static fma_loop_fn fma_loop_of(int bits) { return bits == 512 ? fma_loop_avx512 : fma_loop; }
static double fma_flop_of(int bits) { return bits == 512 ? 32.0 : 16.0; }

/* Sum ns streams of n floats each (n a multiple of chunk, itself of 64; every stream 64-byte aligned), visiting them in
 * turn chunk floats at a time: several pages in flight at once. ahead > 0: each 256 bytes read also ask for the
 * 256 bytes `ahead` bytes on in the same stream into L2 (prefetcht1), as decode kernels ask for their rows: on a core
 * whose own outstanding misses limit its read (one Intel Xeon read 11.5 GB/s plainly, 13.7 asking 8-64 KiB ahead,
 * medians of 15), that is the read a kernel can reach. Which pattern reads fastest differs by host and thread
 * count: bench_machine_measure_bw tries several. */
#define STREAM_CHUNK 128 /* 512 bytes */
#define READ_AHEAD 16384 /* bytes a prefetching read asks ahead (and twice that) */
#define HUGE_BYTES ((size_t)2 << 20) /* a huge page */
__attribute__((target("avx2,fma"), noinline)) static float read_streams(const float *const *p, int ns, size_t n,
                                                                         size_t chunk, size_t ahead) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
  for (size_t i = 0; i < n; i += chunk)
    for (int k = 0; k < ns; k++)
      for (size_t c = i; c < i + chunk; c += 64) {
        const float *q = p[k] + c;
        if (ahead) /* past the stream's end only near its last bytes: a prefetch never faults */
          for (int b = 0; b < 256; b += 64) _mm_prefetch((const char *)q + ahead + b, _MM_HINT_T1);
        s0 = _mm256_add_ps(s0, _mm256_load_ps(q));
        s1 = _mm256_add_ps(s1, _mm256_load_ps(q + 8));
        s2 = _mm256_add_ps(s2, _mm256_load_ps(q + 16));
        s3 = _mm256_add_ps(s3, _mm256_load_ps(q + 24));
        s4 = _mm256_add_ps(s4, _mm256_load_ps(q + 32));
        s5 = _mm256_add_ps(s5, _mm256_load_ps(q + 40));
        s6 = _mm256_add_ps(s6, _mm256_load_ps(q + 48));
        s7 = _mm256_add_ps(s7, _mm256_load_ps(q + 56));
      }
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)),
                           _mm256_add_ps(_mm256_add_ps(s4, s5), _mm256_add_ps(s6, s7)));
  return sum_lanes(s);
}

static int have_avx2_fma(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/* have_avx2_fma, asked once (the readers call it on every pass) */
static int reader_avx2(void) {
  static int avx2 = -1;
  if (avx2 < 0) avx2 = have_avx2_fma();
  return avx2;
}

#endif /* BENCH_X86 */

/* ---- the interleaved reader (machine.h) ---- */

/* Sum of n floats: the AVX2 loop (one stream) on the aligned body of whole chunks where the CPU has it, plain C
 * elsewhere. */
static float read_any(const float *p, size_t n) {
  float acc = 0.0f;
  size_t i = 0;
#if BENCH_X86
  if (reader_avx2() && ((uintptr_t)p & 63) == 0) {
    i = n / STREAM_CHUNK * STREAM_CHUNK;
    acc = read_streams(&p, 1, i, STREAM_CHUNK, 0);
  }
#endif
  float s[8] = {0};
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; k++) s[k] += p[i + k];
  for (; i < n; i++) s[0] += p[i];
  for (int k = 0; k < 8; k++) acc += s[k];
  return acc;
}

/* A team of parked threads for work timed in the interleaved rounds (the reader, the peak loop): each pass runs
 * run(share[k]) on member k, member 0 being the caller; the others wait on a barrier between passes (woken in
 * microseconds). What run returns is summed per member and kept alive in g_sink when the team stops, so the
 * work is not optimized away. */
typedef struct team team;
typedef struct {
  team *t;
  int k;
} team_member;
struct team {
  int nthreads, quit;
  int placed_for; /* the caller's CPU the members were last kept off (-1: not yet) */
  pthread_barrier_t start, stop;
  pthread_t tid[8];
  team_member member[8];
  float (*run)(void *share);
  void *share[8];
  float sum[8];
  double busy[8]; /* seconds each member spent in run during the last pass */
};

/* member k's share of a pass, timed */
static void team_run(team *t, int k) {
  const double t0 = bench_now();
  t->sum[k] += t->run(t->share[k]);
  t->busy[k] = bench_now() - t0;
}

static void *team_thread(void *arg) {
  const team_member *m = (const team_member *)arg;
  for (;;) {
    pthread_barrier_wait(&m->t->start);
    if (m->t->quit) return NULL;
    team_run(m->t, m->k);
    pthread_barrier_wait(&m->t->stop);
  }
}

/* Starts the members 1..nthreads-1 (run and share[] set by the caller first); exits the program if one cannot
 * start: the barriers are sized for all of them, so there is no partial team. */
static void team_start(team *t, int nthreads) {
  t->nthreads = nthreads;
  t->placed_for = -1;
  if (nthreads < 2) return;
  pthread_barrier_init(&t->start, NULL, (unsigned)nthreads);
  pthread_barrier_init(&t->stop, NULL, (unsigned)nthreads);
  for (int i = 1; i < nthreads; i++) {
    t->member[i] = (team_member){t, i};
    if (pthread_create(&t->tid[i], NULL, team_thread, &t->member[i]) != 0) {
      fprintf(stderr, "bench: cannot start a helper thread\n");
      exit(2);
    }
  }
}

/* Keeps the members off the caller's CPU (Linux), as the runtime does with its pool workers: a member woken there
 * would only wait for the caller's share to end. (The slow 2-thread passes seen while writing this, 1.0-1.1x the
 * 1-thread time in some rounds, stayed with it: they were the host taking the second vCPU, and the kernels'
 * 2-thread samples in those rounds slowed alike.) Redone when the caller moves. */
static void team_place(team *t) {
#if defined(__linux__) && defined(CPU_SETSIZE)
  cpu_set_t others;
  const int c = sched_getcpu();
  if (c < 0 || c == t->placed_for) return;
  t->placed_for = c;
  if (sched_getaffinity(0, sizeof others, &others) != 0 || !CPU_ISSET(c, &others)) return;
  CPU_CLR(c, &others);
  if (CPU_COUNT(&others) == 0) return;
  for (int i = 1; i < t->nthreads; i++) (void)pthread_setaffinity_np(t->tid[i], sizeof others, &others);
#else
  (void)t;
#endif
}

/* Runs a pass; returns its capacity time: the seconds the members, each at the rate it ran this pass, would take
 * sharing the pass's work as they went (n / sum of 1 / busy[k], the equal shares' harmonic mean over n). The wall
 * time of a pass split evenly is its slowest member's: a host that takes the second vCPU for part of a pass stalls it
 * there, while a kernel's pool hands the work to the thread that runs, so against wall time such a kernel read
 * above 100% of the 2-thread limit. */
static double team_pass(team *t) {
  if (t->nthreads > 1) {
    team_place(t);
    pthread_barrier_wait(&t->start);
  }
  team_run(t, 0);
  if (t->nthreads > 1) pthread_barrier_wait(&t->stop);
  double inv = 0.0;
  for (int k = 0; k < t->nthreads; k++) inv += 1.0 / (t->busy[k] > 1e-9 ? t->busy[k] : 1e-9);
  return t->nthreads / inv;
}

static void team_stop(team *t) {
  float acc = 0.0f;
  if (t->nthreads > 1) {
    t->quit = 1;
    pthread_barrier_wait(&t->start);
    for (int i = 1; i < t->nthreads; i++) pthread_join(t->tid[i], NULL);
    pthread_barrier_destroy(&t->start);
    pthread_barrier_destroy(&t->stop);
  }
  for (int i = 0; i < t->nthreads; i++) acc += t->sum[i];
  g_sink = acc;
}

/* nthreads a team can have: 1 to 8 */
static int team_size(int nthreads) { return nthreads < 1 ? 1 : nthreads > 8 ? 8 : nthreads; }

struct bench_reader {
  const float *a, *b;
  size_t n;
  int streams;  /* per thread, */
  size_t chunk; /* floats read of a stream before the next, and */
  size_t ahead; /* bytes a stream asks ahead (0: none): all at creation, g_read_* of its thread count */
  team team;
  struct reader_share {
    struct bench_reader *r;
    size_t lo, hi;
  } share[8];
};

/* One share: [lo, hi) of a (and of b), as the reader's streams read in turn where the CPU has AVX2 (half in a and
 * half in b, or all in a), the rest plainly. */
#define READ_STREAMS_MAX 8
/* 1 thread, more: streams per thread, bytes per visit and bytes asked ahead (bench_reader_use_pattern) */
static int g_read_streams[2] = {READ_STREAMS_MAX, READ_STREAMS_MAX};
static size_t g_read_chunk[2] = {STREAM_CHUNK, STREAM_CHUNK};
static size_t g_read_ahead[2] = {0, 0};
void bench_reader_use_pattern(int nthreads, int streams, int chunk_bytes, int ahead_bytes) {
  const int t = nthreads > 1;
  if (streams == 2 || streams == 4 || streams == 8) g_read_streams[t] = streams;
  if (chunk_bytes >= 256 && chunk_bytes % 256 == 0) g_read_chunk[t] = (size_t)chunk_bytes / sizeof(float);
  if (ahead_bytes >= 0 && ahead_bytes % 256 == 0) g_read_ahead[t] = (size_t)ahead_bytes;
}
static float reader_share_pass(void *arg) {
  const struct reader_share *s = (const struct reader_share *)arg;
  float sum = 0.0f;
  const float *bufs[2] = {s->r->a + s->lo, s->r->b ? s->r->b + s->lo : NULL};
  const size_t len = s->hi - s->lo;
  const int nb = bufs[1] ? 2 : 1, per_buf = s->r->streams / nb;
  const size_t chunk = s->r->chunk;
  size_t part = 0;
#if BENCH_X86
  if (reader_avx2() && ((uintptr_t)bufs[0] & 63) == 0 && (nb == 1 || ((uintptr_t)bufs[1] & 63) == 0)) {
    const float *p[READ_STREAMS_MAX];
    part = len / (size_t)per_buf / chunk * chunk;
    for (int b = 0; b < nb; b++)
      for (int k = 0; k < per_buf; k++) p[b * per_buf + k] = bufs[b] + (size_t)k * part;
    if (part) sum += read_streams(p, nb * per_buf, part, chunk, s->r->ahead);
  }
#endif
  for (int b = 0; b < nb; b++) sum += read_any(bufs[b] + (size_t)per_buf * part, len - (size_t)per_buf * part);
  return sum;
}

bench_reader *bench_reader_new(const float *a, const float *b, size_t n, int nthreads) {
  bench_reader *r = (bench_reader *)calloc(1, sizeof *r);
  if (!r) return NULL;
  nthreads = team_size(nthreads);
  r->streams = g_read_streams[nthreads > 1], r->chunk = g_read_chunk[nthreads > 1];
  r->ahead = g_read_ahead[nthreads > 1];
  r->a = a;
  r->b = b;
  r->n = n;
  /* shares of whole 64-float blocks (aligned buffers stay aligned per share); the last takes the rest */
  const size_t per = (n / (size_t)nthreads) & ~(size_t)63;
  for (int i = 0; i < nthreads; i++) {
    r->share[i].r = r;
    r->share[i].lo = (size_t)i * per;
    r->share[i].hi = i == nthreads - 1 ? n : (size_t)(i + 1) * per;
    r->team.share[i] = &r->share[i];
  }
  r->team.run = reader_share_pass;
  team_start(&r->team, nthreads);
  return r;
}

double bench_reader_pass(bench_reader *r) { return team_pass(&r->team); }

void bench_reader_free(bench_reader *r) {
  if (!r) return;
  team_stop(&r->team);
  free(r);
}

/* ---- the interleaved peak (machine.h) ---- */

/* Every member runs iters of the loop per pass: the team's shares all point at the peak itself. */
struct bench_peak {
  long iters;
  double gflops;   /* the 1-core rate iters are sized by */
  int bits;        /* the loop's vector width, the machine's fma_bits */
  team team;
};

#if BENCH_X86
static float peak_share_pass(void *arg) {
  const bench_peak *p = (const bench_peak *)arg;
  return fma_loop_of(p->bits)(p->iters);
}
#endif

bench_peak *bench_peak_new(const bench_machine *m, double seconds, int nthreads) {
#if BENCH_X86
  if (!m->have_avx2_fma || m->fma_gflops <= 0) return NULL;
  bench_peak *p = (bench_peak *)calloc(1, sizeof *p);
  if (!p) return NULL;
  nthreads = team_size(nthreads);
  p->gflops = m->fma_gflops;
  p->bits = m->fma_bits;
  bench_peak_set_seconds(p, seconds);
  for (int i = 0; i < nthreads; i++) p->team.share[i] = p;
  p->team.run = peak_share_pass;
  team_start(&p->team, nthreads);
  return p;
#else
  (void)m, (void)seconds, (void)nthreads;
  return NULL;
#endif
}

void bench_peak_set_seconds(bench_peak *p, double seconds) {
#if BENCH_X86
  p->iters = (long)(seconds * p->gflops * 1e9 / (FMA_ACCS * fma_flop_of(p->bits))) + 1;
#else
  (void)p, (void)seconds;
#endif
}

double bench_peak_pass(bench_peak *p) { return team_pass(&p->team); }

double bench_peak_flop(const bench_peak *p) {
#if BENCH_X86
  return (double)p->iters * FMA_ACCS * fma_flop_of(p->bits) * p->team.nthreads;
#else
  (void)p;
  return 0.0;
#endif
}

void bench_peak_free(bench_peak *p) {
  if (!p) return;
  team_stop(&p->team);
  free(p);
}

#if BENCH_X86
/* The fastest of `rounds` passes (after one warm-up pass) of an nthreads reader over buf; < 0: no memory. The
 * fastest, as choose_fma_width takes its loops' best pass: the host's neighbours slow some passes, and the read is
 * the limit decode is held against (against the median of a slowed start, a decode that asks for its rows ahead
 * once read 111% of it). */
static double read_time(const float *buf, size_t n, int nthreads, int rounds) {
  bench_reader *r = bench_reader_new(buf, NULL, n, nthreads);
  if (!r) return -1.0;
  bench_reader_pass(r);
  double best = -1.0;
  for (int i = 0; i < rounds; i++) {
    const double t0 = bench_now();
    bench_reader_pass(r);
    const double t = bench_now() - t0;
    if (best < 0 || t < best) best = t;
  }
  bench_reader_free(r);
  return best;
}
#endif

#if BENCH_X86
/* BENCH_FMA_BITS=256|512 forces the peak loop's width (to check both paths on any AVX-512 CPU); 0: not set. */
static int forced_fma_bits(void) {
  const char *e = getenv("BENCH_FMA_BITS");
  const int bits = e ? atoi(e) : 0;
  return bits == 256 || (bits == 512 && __builtin_cpu_supports("avx512f")) ? bits : 0;
}

/* The widest loop this core runs at full rate: 512-bit only where its flop/s beat the 256-bit loop's by 5% (best of
 * 9 passes of each, interleaved: the best pass is the one a neighbour left alone); sets fma_bits and
 * fma512_over_256. */
static void choose_fma_width(bench_machine *m, long iters) {
  m->fma_bits = 256;
  if (!__builtin_cpu_supports("avx512f")) return;
  double best2 = 1e30, best5 = 1e30;
  g_sink = fma_loop_avx512(iters / 8);
  for (int r = 0; r < 9; r++) {
    const double t0 = bench_now();
    g_sink = fma_loop(iters);
    const double t1 = bench_now();
    g_sink = fma_loop_avx512(iters);
    const double t2 = bench_now();
    if (t1 - t0 < best2) best2 = t1 - t0;
    if (t2 - t1 < best5) best5 = t2 - t1;
  }
  m->fma512_over_256 = 2.0 * best2 / best5;
  if (m->fma512_over_256 > 1.05) m->fma_bits = 512;
}
#endif

int bench_machine_measure_fma(bench_machine *m, int quick) {
#if BENCH_X86
  if (!have_avx2_fma()) return 0;
  m->have_avx2_fma = 1;
  const int reps = quick ? 5 : 11;
  m->repeats = reps;
  double t[64];

  /* calibrate to ~40 ms (quick: ~20 ms) per sample */
  long iters = 1L << 20;
  {
    double t0 = bench_now(); /* ~50 ms of FMAs first: let the core settle its AVX clock */
    while (bench_now() - t0 < 0.05) g_sink = fma_loop(iters / 8);
  }
  choose_fma_width(m, iters);
  m->fma_bits_forced = forced_fma_bits();
  if (m->fma_bits_forced) m->fma_bits = m->fma_bits_forced;
  const fma_loop_fn loop = fma_loop_of(m->fma_bits);
  const double flop = fma_flop_of(m->fma_bits);
  for (;;) {
    double t0 = bench_now();
    g_sink = loop(iters);
    double dt = bench_now() - t0;
    if (dt > 0.005 || iters > (1L << 34)) {
      double target = quick ? 0.02 : 0.04;
      iters = (long)((double)iters * target / dt) + 1;
      break;
    }
    iters *= 4;
  }
  for (int r = 0; r < reps; r++) {
    double t0 = bench_now();
    g_sink = loop(iters);
    t[r] = bench_now() - t0;
  }
  double tf = bench_median(t, reps);
  m->fma_gflops = (double)iters * FMA_ACCS * flop / tf * 1e-9;
  m->fma_ghz_est = m->fma_gflops / (2.0 * flop);
  /* the same loop on 2 threads at once: median wall time of the passes */
  bench_peak *p2 = bench_peak_new(m, tf, 2);
  if (!p2) return -1;
  for (int r = 0; r < reps; r++) {
    double t0 = bench_now();
    bench_peak_pass(p2);
    t[r] = bench_now() - t0;
  }
  m->fma2_gflops = bench_peak_flop(p2) / bench_median(t, reps) * 1e-9;
  bench_peak_free(p2);
#else
  (void)m, (void)quick;
#endif
  return 0;
}

int bench_machine_measure_bw(bench_machine *m, int quick) {
#if BENCH_X86
  if (!have_avx2_fma()) return 0;
  const int reps = quick ? 5 : 11;
  /* 256 MiB (BENCH_BW_MIB overrides) */
  size_t mib = 256;
  const char *e = getenv("BENCH_BW_MIB");
  if (e && atoi(e) >= 16) mib = (size_t)atoi(e);
  size_t bytes = mib << 20, n = bytes / sizeof(float);
  /* on huge pages where the OS gives them, as attngen_alloc gives the kernels' K/V: on 4 KiB pages an Intel Xeon read
   * 13.3 GB/s while an MHA decode on huge pages read 14.4 (105% of the limit) */
  float *buf = (float *)aligned_alloc(HUGE_BYTES, (bytes + HUGE_BYTES - 1) / HUGE_BYTES * HUGE_BYTES); /* whole pages */
  if (!buf) return -1;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  (void)madvise(buf, bytes, MADV_HUGEPAGE); /* advice only */
#endif
  for (size_t i = 0; i < n; i++) buf[i] = (float)(i & 1023) * (1.0f / 1024.0f); /* touch every page */
  m->buf_mib = (double)mib;

  /* The read is the limit decode is held against, so its pattern is the fastest found here: 2, 4 or 8 streams per
   * thread, visited 512 bytes or 64 KiB at a time, asking READ_AHEAD bytes ahead or not (interleaved passes, the best
   * of each, for 1 and for 2 threads). Which wins differs by host and thread count: on one Zen 3 host 8 streams of
   * 512 bytes read 17.7-19.6 GB/s on one core, 2 of them 19.8-22.4, 1 of 64 KiB up to 21.2, and an MHA decode (K then
   * V, 128 KiB each per tile) read 101-104% of the 8 streams; there 2 threads of 2 streams read 23 GB/s against
   * 31-37 with 8. On an Intel Xeon an MHA decode read 104-111% of the best read that asked nothing ahead; asking
   * ahead is tried at 16 KiB and at the AVX-512 kernels' 32 KiB. */
  enum { NPAT = 18 };
  static const int streams[3] = {2, 4, 8}, chunks[2] = {512, 65536}, aheads[3] = {0, READ_AHEAD, 2 * READ_AHEAD};
#define PAT_STREAMS(i) streams[(i) % 3]
#define PAT_CHUNK(i) chunks[(i) / 3 % 2]
#define PAT_AHEAD(i) aheads[(i) / 6]
  double best_t[2][NPAT];
  for (int r = 0; r < (quick ? 2 : 3); r++)
    for (int th = 0; th < 2; th++)
      for (int i = 0; i < NPAT; i++) {
        bench_reader_use_pattern(th + 1, PAT_STREAMS(i), PAT_CHUNK(i), PAT_AHEAD(i));
        const double t = read_time(buf, n, th + 1, 1);
        if (t < 0) {
          free(buf);
          return -1;
        }
        if (r == 0 || t < best_t[th][i]) best_t[th][i] = t;
      }
  for (int th = 0; th < 2; th++) {
    int best = 0;
    for (int i = 1; i < NPAT; i++)
      if (best_t[th][i] < best_t[th][best]) best = i;
    m->read_streams[th] = PAT_STREAMS(best), m->read_chunk[th] = PAT_CHUNK(best), m->read_ahead[th] = PAT_AHEAD(best);
    bench_reader_use_pattern(th + 1, m->read_streams[th], m->read_chunk[th], m->read_ahead[th]);
  }
#undef PAT_STREAMS
#undef PAT_CHUNK
#undef PAT_AHEAD
  const double t1 = read_time(buf, n, 1, reps), t2 = read_time(buf, n, 2, reps);
  free(buf);
  if (t1 < 0 || t2 < 0) return -1;
  m->bw1_gbs = (double)bytes / t1 * 1e-9;
  m->bw2_gbs = (double)bytes / t2 * 1e-9;
#else
  (void)m, (void)quick;
#endif
  return 0;
}

int bench_machine_measure(bench_machine *m, int quick) {
  memset(m, 0, sizeof *m);
  return bench_machine_measure_fma(m, quick) != 0 ? -1 : bench_machine_measure_bw(m, quick);
}

void bench_machine_print(const bench_machine *m) {
  if (!m->have_avx2_fma) {
    printf("machine: no AVX2+FMA on this CPU: peak and bandwidth not measured (percentages will be 0)\n");
    return;
  }
  printf("machine: fp32 FMA peak, 1 core (%s, 12 accumulators, %d flop/FMA): %.1f GFLOP/s  (~%.2f GHz if 2 FMA/cycle)\n",
         m->fma_bits == 512 ? "AVX-512" : "AVX2", m->fma_bits / 16, m->fma_gflops, m->fma_ghz_est);
  if (m->fma512_over_256 > 0)
    printf("machine: AVX-512F present: its FMA loop gives %.2fx the AVX2 loop's flop/s (%s)\n", m->fma512_over_256,
           m->fma512_over_256 > 1.05 ? "full-width 512-bit FMAs" : "the same rate: 512-bit FMAs run as two 256-bit halves");
  printf("machine: peak loop: %d-bit FMAs (%s), measured and run in this process%s\n", m->fma_bits,
         m->fma_bits == 512 ? "zmm" : "ymm",
         m->fma_bits_forced ? " (forced by BENCH_FMA_BITS)" : ", the faster of the zmm and ymm loops");
  printf("machine: same FMA loop on 2 threads: %.1f GFLOP/s total = %.2fx one thread%s\n", m->fma2_gflops,
         m->fma2_gflops / m->fma_gflops,
         m->fma2_gflops < 1.6 * m->fma_gflops ? "  (the second core is busy with other work: 2-thread rows are skewed)"
                                              : "");
  printf("machine: streaming read (AVX2 sum of %.0f MiB, streams read in turn, the fastest pattern): 1 thread %.1f GB/s "
         "(%d streams, %d bytes a visit, asking %d bytes ahead), 2 threads %.1f GB/s (%d streams each, %d bytes, %d "
         "ahead)  (best of %d)\n", m->buf_mib, m->bw1_gbs, m->read_streams[0], m->read_chunk[0], m->read_ahead[0],
         m->bw2_gbs, m->read_streams[1], m->read_chunk[1], m->read_ahead[1], m->repeats);
}

#ifdef BENCH_MACHINE_MAIN
int main(void) {
  bench_machine m;
  const char *mode = getenv("BENCH_MODE");
  int quick = mode && strcmp(mode, "quick") == 0;
  if (bench_machine_measure(&m, quick) != 0) {
    fprintf(stderr, "machine: out of memory\n");
    return 1;
  }
  bench_machine_print(&m);
  return 0;
}
#endif

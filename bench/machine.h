/* SPDX-License-Identifier: MIT */
/* bench/machine.h: what this machine can do, measured in the same run as the benchmark.
 * Numbers are medians over repeats (the read: the fastest); the machine is shared and noisy, so use them only as the
 * denominators of ratios taken inside one run. */
#ifndef BENCH_MACHINE_H
#define BENCH_MACHINE_H

#include <stddef.h>

typedef struct {
  int have_avx2_fma;   /* 0: the CPU lacks AVX2+FMA; the numbers below are then 0 */
  double fma_gflops;   /* one core, fp32: the 256-bit FMA loop (16 flop per FMA instruction), or the 512-bit one
                          (32) where it is faster (fma_bits) */
  int fma_bits;        /* 256 or 512: the peak loop's vector width, chosen by bench_machine_measure_fma in the
                          process that calls it; every bench_peak of this machine runs that width */
  int fma_bits_forced; /* 256 or 512 when BENCH_FMA_BITS chose the width; 0: the faster loop was kept */
  double fma512_over_256; /* AVX-512F CPUs: flop/s of the 512-bit loop over the 256-bit one (0: no AVX-512F) */
  double fma2_gflops;  /* the same loop on 2 threads at once, total: the 2-thread ceiling in this run (a busy
                          second core shows here as a ratio fma2/fma well below 2) */
  double fma_ghz_est;  /* fma_gflops / (2 FMA ports x flop per FMA): a rough clock estimate */
  double bw1_gbs;      /* 1-thread streaming read, GB/s (1e9 bytes/s) */
  double bw2_gbs;      /* 2-thread streaming read, GB/s */
  double buf_mib;      /* size of the bandwidth buffer */
  int read_streams[2];  /* the 1- and 2-thread reads' pattern: streams per thread read in turn, and */
  int read_chunk[2];    /* bytes of a stream per visit, and */
  int read_ahead[2];    /* bytes each stream asks ahead into L2 (0: none); the fastest of 2, 4 or 8 streams of 512
                           bytes or 64 KiB, asking 16 KiB ahead or not, here (bench_machine_measure_bw, which also
                           makes it this process's readers'; another process passes it to bench_reader_use_pattern) */
  int repeats;         /* repeats behind each figure */
} bench_machine;

/* quick != 0: fewer repeats. Fills *m and returns 0, or -1 if memory could not be had.
 * bench_machine_measure_fma: the FMA peak fields, run in the process that times the rounds (the peak loop's width is
 * decided where it runs); bench_machine_measure_bw: the bandwidth fields (a 256 MiB buffer: a child process may run
 * it); bench_machine_measure: both, on a zeroed *m. */
int bench_machine_measure(bench_machine *m, int quick);
int bench_machine_measure_fma(bench_machine *m, int quick);
int bench_machine_measure_bw(bench_machine *m, int quick);
double bench_now(void);                 /* CLOCK_MONOTONIC seconds */
double bench_median(double *v, int n);  /* sorts v */
/* A streaming reader of two fixed buffers (a decode case's K and V), for a bandwidth measured in the same
 * interleaved rounds as the kernel that reads them: this host's bandwidth drifts with its neighbours, so a
 * figure from the start of the run is a poor denominator for a case timed a minute later.
 * nthreads 1 reads in the caller; 2..8 keep threads parked between passes (woken per pass, ~microseconds).
 * Each pass reads every float of a[0..n) and b[0..n) (b may be NULL) once, split evenly across the threads. */
typedef struct bench_reader bench_reader;
bench_reader *bench_reader_new(const float *a, const float *b, size_t n, int nthreads); /* NULL: no memory */
/* The pass's capacity time: the seconds its threads, each at the rate it ran this pass, would take sharing the work as
 * they went; a pool's kernel is held to that, not to the slowest thread's wall time (machine.c: team_pass). */
double bench_reader_pass(bench_reader *r);
/* The pattern of the readers of nthreads made from now on (1, or more): streams per thread (2, 4 or 8), bytes of a
 * stream per visit (a multiple of 256) and bytes asked ahead (0 or a multiple of 256), as bench_machine's
 * read_streams / read_chunk / read_ahead; 8 of 512 asking nothing until then. */
void bench_reader_use_pattern(int nthreads, int streams, int chunk_bytes, int ahead_bytes);
void bench_reader_free(bench_reader *r);
/* The FMA peak loop of (a), about `seconds` per pass on each of nthreads threads at once (threads parked between
 * passes like the reader's), for a peak measured in the same interleaved rounds as a kernel: a neighbour that
 * takes this host's cores for a while slows both alike. NULL: no AVX2+FMA, or no memory. */
typedef struct bench_peak bench_peak;
bench_peak *bench_peak_new(const bench_machine *m, double seconds, int nthreads);
void bench_peak_set_seconds(bench_peak *p, double seconds); /* resize a pass (threads keep running it alike) */
double bench_peak_pass(bench_peak *p); /* capacity time, as bench_reader_pass */
double bench_peak_flop(const bench_peak *p); /* flop of one pass, all threads */
void bench_peak_free(bench_peak *p);
/* Human-readable summary to stdout. */
void bench_machine_print(const bench_machine *m);

#endif

/* SPDX-License-Identifier: MIT */
/* attngen runtime: running a plan on threads (the persistent pool, or threads of its own). */
#include "attngen_internal.h"

int attngen_run(const attngen_kernel *kernel, const attngen_args *args)
{
  return attngen_run_parallel(kernel, args, 1);
}

#if ATTNGEN_HAVE_PTHREADS
typedef struct {
  attngen_plan *plan;
  int thread;
  size_t *next;
} worker_arg;

static void *worker(void *arg)
{
  worker_arg *w = (worker_arg *)arg;
  for (;;) {
    /* items are independent and write disjoint rows, so the claim order does not change any result */
    size_t i = __atomic_fetch_add(w->next, 1, __ATOMIC_RELAXED);
    if (i >= w->plan->n_items) break;
    attngen_plan_run(w->plan, i, i + 1, w->thread);
  }
  return NULL;
}
#endif

enum { MAX_RUN_THREADS = 64 }; /* attngen_run_parallel and attngen_step_parallel start at most this many */

/* nthreads <= 0: the online CPUs; capped at MAX_RUN_THREADS. */
int attngen_run_threads(int nthreads)
{
  if (nthreads <= 0) {
#if ATTNGEN_HAVE_PTHREADS
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    nthreads = n > 0 ? (int)n : 1;
#else
    nthreads = 1;
#endif
  }
  return nthreads > MAX_RUN_THREADS ? MAX_RUN_THREADS : nthreads;
}

#if ATTNGEN_HAVE_PTHREADS
/* Persistent workers for attngen_run_parallel and attngen_step_parallel: started on first use (up to the most
 * threads a call asked for) and asleep on a condition variable between calls, so a call costs a wake-up instead of
 * creating and joining threads (a small model's decode step takes tens of microseconds). Worker t always runs as
 * thread index t of the plan. One call uses the pool at a time; a call that finds it in use (another application
 * thread is inside attngen) starts threads of its own, as before.
 * Before sleeping, a worker that finished its share polls for the next call for ATTNGEN_POOL_SPIN_US microseconds
 * (default 200), and the caller polls for the workers' last items the same way, unless the call has more threads
 * than the caller has CPUs: back-to-back calls (a decode loop) then find the workers awake. On Linux the workers
 * are kept off the caller's CPU (place_workers). */
static struct {
  pthread_mutex_t busy; /* held by the call using the pool */
  pthread_mutex_t m;    /* guards the fields below (generation and running are also polled without it) */
  pthread_cond_t wake, done;
  int started;             /* workers alive: thread indices 1..started */
  unsigned long generation; /* one per call; a worker joins when it sees a new one and its index is < want */
  int want, running;       /* threads of the current call (caller included); workers still inside it */
  int sleeping;            /* workers waiting on `wake` (the caller signals only then) */
  int caller_waiting;      /* the caller waits on `done` */
  attngen_plan *plan;
  size_t next;             /* next item to claim */
  int placed_for;          /* the caller's CPU when the workers' affinity was last set (-1: not set) */
  int cpus;                /* CPUs the caller may run on, read with the placement (0: not known) */
  int spin;                /* this call's threads poll (they fit on the CPUs; polling on a shared CPU only delays) */
  pthread_t tid[MAX_RUN_THREADS]; /* workers 1..started */
} pool = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
           0, 0, 0, 0, 0, 0, NULL, 0, -1, 0, 0, { 0 } };

enum { POOL_SPIN_US_DEFAULT = 200, POOL_SPIN_US_MAX = 1000000 };
static long pool_spin_ns = -1; /* ATTNGEN_POOL_SPIN_US, read when the first worker starts */

/* ATTNGEN_POOL_SPIN_US: a whole number of microseconds, 0 (sleep at once) to 1000000; anything else is said on
 * stderr once and the default kept. */
static long read_pool_spin_ns(void)
{
  const char *v = getenv("ATTNGEN_POOL_SPIN_US");
  char *end = NULL;
  long us;
  if (!v || !*v) return POOL_SPIN_US_DEFAULT * 1000L;
  us = strtol(v, &end, 10);
  if (*end || us < 0 || us > POOL_SPIN_US_MAX) {
    fprintf(stderr, "attngen: ATTNGEN_POOL_SPIN_US=\"%s\" ignored: expected whole microseconds, 0 to %d; using %d\n", v,
            POOL_SPIN_US_MAX, POOL_SPIN_US_DEFAULT);
    return POOL_SPIN_US_DEFAULT * 1000L;
  }
  attngen_log_verbose("pool threads poll %ld us for work before sleeping (ATTNGEN_POOL_SPIN_US)", us);
  return us * 1000L;
}

static long long mono_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* What a pool thread polls for: a new call (a worker, `seen` its last generation), or the workers' last items
 * (the caller). */
static int new_call(unsigned long seen) { return __atomic_load_n(&pool.generation, __ATOMIC_ACQUIRE) != seen; }
static int workers_done(unsigned long unused)
{
  (void)unused;
  return __atomic_load_n(&pool.running, __ATOMIC_ACQUIRE) == 0;
}

/* Polls until ready(arg) or the spin time is up (no polling when the call's threads do not fit on the CPUs). */
static void spin_until(int (*ready)(unsigned long), unsigned long arg)
{
  long long end;
  int i;
  if (ready(arg) || pool_spin_ns <= 0 || !__atomic_load_n(&pool.spin, __ATOMIC_RELAXED)) return;
  end = mono_ns() + pool_spin_ns;
  for (i = 1; !ready(arg); ++i) {
    cpu_relax();
    if ((i & 63) == 0 && mono_ns() > end) return;
  }
}

/* Keeps the workers off the CPU the caller runs on (Linux): they may run on any other CPU the caller may use. The
 * caller computes items itself, so a worker placed on its CPU only waits. Linux placed a woken worker there about
 * half the time on this 2-vCPU VM once the other vCPU had been idle a few ms: decode at kv_len 4096 on 2 threads
 * then took 0.87-0.91x the 1-thread time (a harness pausing 5 ms between calls); with this, 1.66-1.74x. Redone
 * only when the caller is on another CPU than last time. */
static void place_workers(void)
{
#if defined(__linux__) && defined(CPU_SETSIZE)
  cpu_set_t others;
  int w;
  const int c = sched_getcpu();
  if (c < 0 || c == pool.placed_for || pool.started == 0) return;
  pool.placed_for = c;
  if (sched_getaffinity(0, sizeof others, &others) != 0) return;
  pool.cpus = CPU_COUNT(&others);
  if (!CPU_ISSET(c, &others)) return;
  CPU_CLR(c, &others);
  if (CPU_COUNT(&others) == 0) return;
  for (w = 1; w <= pool.started; ++w) (void)pthread_setaffinity_np(pool.tid[w], sizeof others, &others);
#else
  if (pool.cpus == 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    pool.cpus = n > 0 ? (int)n : 1;
  }
#endif
}

static void *pool_worker(void *arg)
{
  const int t = (int)(intptr_t)arg;
  unsigned long seen = 0;
  worker_arg w;
  for (;;) {
    spin_until(new_call, seen); /* a call that comes while polling needs no wake-up */
    pthread_mutex_lock(&pool.m);
    if (pool.generation == seen) {
      ++pool.sleeping;
      while (pool.generation == seen) pthread_cond_wait(&pool.wake, &pool.m);
      --pool.sleeping;
    }
    seen = pool.generation;
    if (t >= pool.want) {
      pthread_mutex_unlock(&pool.m);
      continue;
    }
    w.plan = pool.plan;
    w.thread = t;
    w.next = &pool.next;
    pthread_mutex_unlock(&pool.m);
    worker(&w);
    pthread_mutex_lock(&pool.m);
    if (__atomic_sub_fetch(&pool.running, 1, __ATOMIC_ACQ_REL) == 0 && pool.caller_waiting)
      pthread_cond_signal(&pool.done);
    pthread_mutex_unlock(&pool.m);
  }
  return NULL;
}

/* In a child of fork() only the forking thread exists: the workers are gone, and a lock another thread held stays
 * held. The pool starts afresh (before this, a forked child's first attngen_run_parallel waited forever). */
static void pool_after_fork_child(void)
{
  pthread_mutex_init(&pool.busy, NULL);
  pthread_mutex_init(&pool.m, NULL);
  pthread_cond_init(&pool.wake, NULL);
  pthread_cond_init(&pool.done, NULL);
  pool.started = pool.want = pool.running = pool.sleeping = pool.caller_waiting = 0;
  pool.plan = NULL;
  pool.next = 0;
  pool.placed_for = -1;
}

/* Runs the plan's items on the pool (the caller is thread 0). Returns 0 when the pool is in use by another call. */
static int pool_run(attngen_plan *p, int nthreads)
{
  static int fork_handler; /* registered with the first worker */
  worker_arg w;
  if (pthread_mutex_trylock(&pool.busy) != 0) return 0;
  pthread_mutex_lock(&pool.m);
  if (pool_spin_ns < 0) pool_spin_ns = read_pool_spin_ns();
  if (!fork_handler && nthreads > 1) fork_handler = pthread_atfork(NULL, NULL, pool_after_fork_child) == 0;
  while (pool.started < nthreads - 1) {
    pthread_t tid;
    if (pthread_create(&tid, NULL, pool_worker, (void *)(intptr_t)(pool.started + 1)) != 0) break;
    pthread_detach(tid);
    pool.tid[++pool.started] = tid;
    pool.placed_for = -1;
  }
  place_workers();
  /* more threads than CPUs: a polling thread would take the CPU from the one it waits for */
  __atomic_store_n(&pool.spin, pool.cpus == 0 || nthreads <= pool.cpus, __ATOMIC_RELAXED);
  pool.want = pool.started + 1 < nthreads ? pool.started + 1 : nthreads;
  __atomic_store_n(&pool.running, pool.want - 1, __ATOMIC_RELAXED);
  pool.plan = p;
  pool.next = 0;
  __atomic_store_n(&pool.generation, pool.generation + 1, __ATOMIC_RELEASE); /* polling workers see the call */
  if (pool.sleeping) pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.m);
  w.plan = p;
  w.thread = 0;
  w.next = &pool.next;
  worker(&w);
  spin_until(workers_done, 0); /* the workers' last items: poll, then sleep */
  pthread_mutex_lock(&pool.m);
  pool.caller_waiting = 1;
  while (__atomic_load_n(&pool.running, __ATOMIC_ACQUIRE) > 0) pthread_cond_wait(&pool.done, &pool.m);
  pool.caller_waiting = 0;
  pool.plan = NULL;
  pthread_mutex_unlock(&pool.m);
  pthread_mutex_unlock(&pool.busy);
  return 1;
}
#endif

/* Runs every item of a plan on nthreads threads (the plan was created for at least that many), then merges. */
int attngen_plan_execute(attngen_plan *p, int nthreads)
{
  if ((size_t)nthreads > p->n_items) nthreads = (int)p->n_items;
#if ATTNGEN_HAVE_PTHREADS
  if (nthreads > 1 && pool_run(p, nthreads)) {
    /* ran on the persistent workers */
  } else if (nthreads > 1) {
    pthread_t tid[MAX_RUN_THREADS];
    worker_arg wa[MAX_RUN_THREADS];
    size_t next = 0;
    int started = 0, t;
    for (t = 1; t < nthreads; ++t) {
      wa[t].plan = p;
      wa[t].thread = t;
      wa[t].next = &next;
      if (pthread_create(&tid[t], NULL, worker, &wa[t]) != 0) break;
      ++started;
    }
    wa[0].plan = p;
    wa[0].thread = 0;
    wa[0].next = &next;
    worker(&wa[0]);
    for (t = 1; t <= started; ++t) pthread_join(tid[t], NULL);
  } else
#endif
  {
    attngen_plan_run(p, 0, p->n_items, 0);
  }
  return attngen_plan_finish(p);
}

int attngen_run_parallel(const attngen_kernel *kernel, const attngen_args *args, int nthreads)
{
  attngen_plan *p;
  int st;
  nthreads = attngen_run_threads(nthreads);
  if ((st = attngen_plan_create(kernel, args, nthreads, &p))) return st;
  st = attngen_plan_execute(p, nthreads);
  attngen_plan_destroy(p);
  return st;
}

/* SPDX-License-Identifier: MIT */
/* attngen runtime: attngen_alloc, and the scratch buffers plans take and give back. */
#include "attngen_internal.h"

#if defined(__linux__)
#include <sys/mman.h> /* madvise: attngen_alloc's huge-page mark */
#endif

/* The 64-byte aligned start inside a block of bytes + 64 from malloc. */
static void *align64(void *raw) { return (unsigned char *)raw + (64 - ((size_t)raw & 63)); }

void *attngen_aligned64(size_t bytes, void **raw)
{
  *raw = malloc(bytes + 64);
  return *raw ? align64(*raw) : NULL;
}

/* attngen_alloc: the block from malloc holds the aligned region and, in the word before it, the block's address for
 * attngen_free. Huge-page requests are rounded up to whole 2 MiB pages inside the block, so the mark never covers
 * bytes that malloc's bookkeeping uses. */
#define HUGE_PAGE ((size_t)2 << 20)
void *attngen_alloc(size_t bytes)
{
  const char *env = getenv("ATTNGEN_HUGEPAGES");
  const int huge = bytes >= HUGE_PAGE && !(env && strcmp(env, "0") == 0);
  const size_t align = huge ? HUGE_PAGE : 64;
  size_t len = bytes, total;
  unsigned char *raw, *p;
  if (bytes == 0) {
    attngen_fail(ATTNGEN_ERR_SIZE, "attngen_alloc: bytes is 0");
    return NULL;
  }
  if (huge && add_size(len, HUGE_PAGE - 1, &len)) len = 0;
  if (huge) len = len / HUGE_PAGE * HUGE_PAGE;
  if (len == 0 || add_size(len, align + sizeof(void *), &total) || total > (size_t)PTRDIFF_MAX) {
    attngen_fail(ATTNGEN_ERR_SIZE, "attngen_alloc: %zu bytes do not fit in the address space", bytes);
    return NULL;
  }
  raw = (unsigned char *)malloc(total);
  if (!raw) {
    attngen_fail(ATTNGEN_ERR_NOMEM, "attngen_alloc: out of memory (%zu bytes)", bytes);
    return NULL;
  }
  p = raw + sizeof(void *);
  p += (align - (size_t)p % align) % align;
  memcpy(p - sizeof(void *), &raw, sizeof raw);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (huge) (void)madvise(p, len, MADV_HUGEPAGE); /* advice only: 4 KiB pages still work */
#endif
  return p;
}

void attngen_free(void *p)
{
  void *raw;
  if (!p) return;
  memcpy(&raw, (unsigned char *)p - sizeof(void *), sizeof raw);
  free(raw);
}

/* Scratch buffers are kept for the next plan (up to SCRATCH_CACHE of them, the largest): a decode step at kv_len
 * 512 took 0.19-0.20 ms with a fresh malloc per call and 0.15 ms without one (glibc served the 260 KiB buffers
 * by mmap, or trimmed the heap after them, so every call faulted its pages in again); 2 threads 0.24-0.25 ms. */
enum { SCRATCH_CACHE = 16 };
static void *cached_raw[SCRATCH_CACHE];
static size_t cached_cap[SCRATCH_CACHE];
static int n_cached;
#if ATTNGEN_HAVE_PTHREADS
static pthread_mutex_t cache_m = PTHREAD_MUTEX_INITIALIZER;
#define CACHE_LOCK() pthread_mutex_lock(&cache_m)
#define CACHE_UNLOCK() pthread_mutex_unlock(&cache_m)
#else
#define CACHE_LOCK() ((void)0)
#define CACHE_UNLOCK() ((void)0)
#endif

#ifdef ATTNGEN_POISON_SCRATCH
/* Test builds (tests/tests.mk): every scratch buffer a plan takes is filled with quiet NaNs, so a kernel that lets a
 * number it did not write this call (a skipped block of S, padding lanes) reach an output shows as NaN there. */
static void *poisoned(void *p, size_t bytes)
{
  static const uint32_t nan_bits = 0x7FC0DEADu;
  size_t i;
  if (p)
    for (i = 0; i + 4 <= bytes; i += 4) memcpy((unsigned char *)p + i, &nan_bits, 4);
  return p;
}
#else
#define poisoned(p, bytes) (p)
#endif

/* 64-byte aligned scratch of at least `bytes`: the smallest cached buffer that is large enough, else a new one.
 * *raw and *cap are what attngen_scratch_put takes back. */
void *attngen_scratch_get(size_t bytes, void **raw, size_t *cap)
{
  int i, best = -1;
  CACHE_LOCK();
  for (i = 0; i < n_cached; ++i)
    if (cached_cap[i] >= bytes && (best < 0 || cached_cap[i] < cached_cap[best])) best = i;
  if (best >= 0) {
    *raw = cached_raw[best];
    *cap = cached_cap[best];
    --n_cached;
    cached_raw[best] = cached_raw[n_cached];
    cached_cap[best] = cached_cap[n_cached];
    CACHE_UNLOCK();
    return poisoned(align64(*raw), bytes);
  }
  CACHE_UNLOCK();
  *cap = bytes;
  return poisoned(attngen_aligned64(bytes, raw), bytes);
}

/* Keeps a scratch buffer for a later plan, or frees it (a full cache keeps its largest buffers). */
void attngen_scratch_put(void *raw, size_t cap)
{
  int i, small = 0;
  if (!raw) return;
  CACHE_LOCK();
  if (n_cached < SCRATCH_CACHE) {
    cached_raw[n_cached] = raw;
    cached_cap[n_cached++] = cap;
    raw = NULL;
  } else {
    for (i = 1; i < n_cached; ++i)
      if (cached_cap[i] < cached_cap[small]) small = i;
    if (cached_cap[small] < cap) {
      void *out = cached_raw[small];
      cached_raw[small] = raw;
      cached_cap[small] = cap;
      raw = out;
    }
  }
  CACHE_UNLOCK();
  free(raw);
}

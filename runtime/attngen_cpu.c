/* SPDX-License-Identifier: MIT */
/* attngen runtime: what this CPU (and the ATTNGEN_ISA cap) lets selection use. */
#include "attngen_internal.h"

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define ATTNGEN_X86 1
#endif

/* An ATTNGEN_ISA value that cannot be honoured: said on stderr once per process, with or without
 * ATTNGEN_VERBOSE (a silently ignored cap would run another ISA than the user asked for). `why` is
 * "unknown" (not an ISA name) or "unusable" (an ISA this CPU cannot run). */
static void isa_env_ignored(const char *value, const char *why)
{
  static volatile int said;
  char names[128] = "", hint[64] = "";
  size_t len = 0;
  int i;
#if defined(__GNUC__) || defined(__clang__)
  if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED)) return;
#else
  if (said) return;
  said = 1;
#endif
  for (i = 0; i < ATTNGEN_ISA_COUNT_ && len < sizeof names; ++i) {
    const char *n = attngen_isa_name((attngen_isa)i), *a = value;
    int w = snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", n);
    if (w > 0) len += (size_t)w;
    while (*a && *n && (*a == *n || (*a >= 'A' && *a <= 'Z' && *a - 'A' + 'a' == *n))) ++a, ++n;
    if (!*a && !*n) snprintf(hint, sizeof hint, " (names are lower-case: %s)", attngen_isa_name((attngen_isa)i));
  }
  if (strcmp(why, "unusable") == 0)
    fprintf(stderr, "attngen: ATTNGEN_ISA=%s ignored: this CPU cannot run it; using the best ISA it has\n", value);
  else
    fprintf(stderr, "attngen: ATTNGEN_ISA=%s ignored: not one of %s%s; using the best ISA this CPU has\n", value,
            names, hint);
}

/* One check per ISA of the spec (its `detect` name); each is defined on every architecture, so the list can
 * name them all. */
#if defined(ATTNGEN_X86)
/* What the x86 checks read: cpuid leaf 1's ecx (F16C bit 29), leaf 7's ebx (AVX2 bit 5, AVX-512F bit 16) and xcr0
 * (the register state the OS saves), once AVX, FMA and OSXSAVE are present; 0 when they are not. */
static int attngen_x86_features(unsigned *leaf1_ecx, unsigned *leaf7_ebx, unsigned *xcr0)
{
  unsigned a, b, c, d, xcr0_hi;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  if (!((c >> 12) & 1) || !((c >> 27) & 1) || !((c >> 28) & 1)) return 0; /* FMA, OSXSAVE, AVX */
  *leaf1_ecx = c;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
  __asm__ volatile("xgetbv" : "=a"(*xcr0), "=d"(xcr0_hi) : "c"(0));
  (void)xcr0_hi;
  *leaf7_ebx = b;
  return 1;
}
#endif

/* AVX2 + FMA, and the OS saving both the xmm and the ymm halves on context switch (xcr0 bits 1-2). */
static int attngen_cpu_has_avx2(void)
{
#if defined(ATTNGEN_X86)
  unsigned c, b, xcr0;
  return attngen_x86_features(&c, &b, &xcr0) && ((b >> 5) & 1) && (xcr0 & 6u) == 6u;
#else
  return 0;
#endif
}

/* AVX-512F with AVX2 and FMA (the kernels' helpers use all three), and the OS saving the opmask registers and
 * both zmm state components (xcr0 bits 5-7) besides xmm and ymm (bits 1-2). */
static int attngen_cpu_has_avx512(void)
{
#if defined(ATTNGEN_X86)
  unsigned c, b, xcr0;
  return attngen_x86_features(&c, &b, &xcr0) && ((b >> 5) & 1) && ((b >> 16) & 1) && (xcr0 & 0xE6u) == 0xE6u;
#else
  return 0;
#endif
}

/* F16C: only the AVX2 kernels that read an f16 cache convert with it. */
static int attngen_cpu_has_f16c(void)
{
#if defined(ATTNGEN_X86)
  unsigned c, b, xcr0;
  return attngen_x86_features(&c, &b, &xcr0) && ((c >> 29) & 1);
#else
  return 0;
#endif
}

/* Whether this CPU runs kernel k: its ISA, and what its storage type adds on that ISA. */
int attngen_kernel_runs_here(const attngen_kernel_info *k)
{
  if (k->isa == ATTNGEN_ISA_AVX2 && k->kv_dtype == ATTNGEN_KV_F16) {
    static int f16c = -1;
    if (f16c < 0) f16c = attngen_cpu_has_f16c();
    return f16c;
  }
  return 1;
}

static int attngen_cpu_has_neon(void)
{
#if defined(__aarch64__)
  return 1; /* AdvSIMD is mandatory on aarch64 */
#else
  return 0;
#endif
}

static int attngen_cpu_always(void) { return 1; }

static unsigned detect_isas(void)
{
  unsigned isas = 0;
  /* an ISA counts when this build compiled its code and the CPU (and OS) can run it */
#define DETECT(E, name, compiled, check) \
  if ((compiled) && check()) isas |= 1u << ATTNGEN_ISA_##E;
  ATTNGEN_ISA_LIST(DETECT)
#undef DETECT
  return isas;
}

unsigned attngen_cpu_isas(void)
{
  static volatile unsigned cached; /* 0 = not yet; detection is idempotent, so a race only repeats it */
  if (!cached) cached = detect_isas();
  return cached;
}

/* ISAs allowed for selection: the CPU's, capped by ATTNGEN_ISA. */
unsigned attngen_allowed_isas(void)
{
  unsigned cpu = attngen_cpu_isas();
  const char *cap = getenv("ATTNGEN_ISA");
  int i;
  if (!cap || !*cap) return cpu;
  for (i = 0; i < ATTNGEN_ISA_COUNT_; ++i)
    if (strcmp(cap, attngen_isa_name((attngen_isa)i)) == 0) {
      if (!(cpu & (1u << i))) {
        isa_env_ignored(cap, "unusable");
        return cpu;
      }
      /* the named ISA and the portable one */
      return (1u << i) | (1u << ATTNGEN_ISA_SCALAR);
    }
  isa_env_ignored(cap, "unknown");
  return cpu;
}

/* SPDX-License-Identifier: MIT */
/* attngen runtime: the last error of each thread, status names, the verbose log. */
#include "attngen_internal.h"

#include <stdarg.h>

#if defined(__GNUC__) || defined(__clang__)
#define ATTNGEN_THREAD_LOCAL __thread
#else
#define ATTNGEN_THREAD_LOCAL
#endif

static ATTNGEN_THREAD_LOCAL char last_error[512];

int attngen_fail(int status, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return status;
}

const char *attngen_last_error(void) { return last_error; }

const char *attngen_status_name(int status)
{
  switch (status) {
  case ATTNGEN_OK: return "ok";
  case ATTNGEN_ERR_NULL: return "null pointer";
  case ATTNGEN_ERR_SIZE: return "bad size";
  case ATTNGEN_ERR_CAPACITY: return "kv_len exceeds kv_capacity";
  case ATTNGEN_ERR_LENGTHS: return "bad kv_lens";
  case ATTNGEN_ERR_SHAPE: return "shape does not match the kernel";
  case ATTNGEN_ERR_UNSUPPORTED: return "unsupported";
  case ATTNGEN_ERR_NOMEM: return "out of memory";
  case ATTNGEN_ERR_STRIDE: return "bad stride";
  case ATTNGEN_ERR_ALIAS: return "outputs overlap inputs or each other";
  case ATTNGEN_ERR_DTYPE: return "K/V pointers of another storage type than the kernel's";
  case ATTNGEN_ERR_PAGE: return "bad block table";
  default: return "unknown status";
  }
}

static int verbose(void)
{
  const char *v = getenv("ATTNGEN_VERBOSE");
  return v && *v && strcmp(v, "0") != 0;
}

void attngen_log_verbose(const char *fmt, ...)
{
  va_list ap;
  if (!verbose()) return;
  va_start(ap, fmt);
  fputs("attngen: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

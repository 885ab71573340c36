/* attngen_kernel.h — what generated kernel files need besides attngen.h. Not part of the public API.
 * (Work-cut and scratch numbers are not computed here: the generator's plan emits them.) */
#ifndef ATTNGEN_KERNEL_H
#define ATTNGEN_KERNEL_H

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "attngen.h"

static inline size_t attngen_round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }
static inline float attngen_maxf_(float a, float b) { return a > b ? a : b; }

#endif /* ATTNGEN_KERNEL_H */

/* Float64 reference for attngen, written directly from the definition in runtime/attngen.h.
 * Deliberately naive: no tiling, no online softmax, no shortcuts; it shares no code with the kernels. */
#ifndef ATTNGEN_TEST_REFERENCE_H
#define ATTNGEN_TEST_REFERENCE_H

#include "attngen.h"

/* Does query row i of sequence b see key row j? (the mask rules of attngen.h, verbatim) */
int ref_visible(attngen_mask mask, const attngen_args *args, int b, int i, int j);

/* Computes, for the tensors described by args (strides honoured; zero strides mean the dense defaults,
 * computed here independently of the runtime):
 *   out[((b * q_len + i) * heads + h) * head_dim + e]   dense token-major, double
 *   lse[(b * heads + h) * q_len + i]                    natural-log log-sum-exp, -INFINITY for empty rows
 * lse may be NULL. Rows that see no key get zeros and lse = -INFINITY. */
void ref_attention(const attngen_shape *shape, const attngen_args *args, double *out, double *lse);

/* The dense-default rule for one tensor (rows = q_len for Q/O, kv_capacity or kv_len for K/V). */
attngen_strides ref_strides(attngen_strides s, int rows, int nheads, int head_dim);

#endif

/* The one numpy-broadcasting iterator every elementwise kernel uses: it maps each input onto the
 * output's shape with stride 0 along broadcast dims, merges dims that stay contiguous for every
 * operand, and calls an inner loop over runs of the innermost dim, in parallel chunks. */
#ifndef ONYX_KERNELS_CPU_BROADCAST_H
#define ONYX_KERNELS_CPU_BROADCAST_H

#include "core/value.h"

#define CPU_BCAST_MAX_OPS 4 /* the output plus up to three inputs (Where) */

typedef struct cpu_bcast_iter {
    int n_ops;                                  /* operand 0 is the output */
    int rank;                                   /* after merging; >= 1 */
    int64_t numel;
    int64_t dims[ONYX_MAX_RANK];
    int64_t strides[CPU_BCAST_MAX_OPS][ONYX_MAX_RANK]; /* in elements; 0 along broadcast dims */
    size_t elem_size[CPU_BCAST_MAX_OPS];
} cpu_bcast_iter;

/* Plans iterating the output (out_rank, out_dims) over n_in inputs, each broadcast to it by numpy's
 * right-aligned rule. Fails with ONYX_ERR_SHAPE when an input does not broadcast to the output. */
onyx_status cpu_bcast_init(cpu_bcast_iter *it, int out_rank, const int64_t *out_dims,
                           size_t out_elem, int n_in, const int *in_rank,
                           const int64_t *const *in_dims, const size_t *in_elem);

/* The same from tensors (element sizes from their dtypes; strings are pointer-sized). */
onyx_status cpu_bcast_init_tensors(cpu_bcast_iter *it, const tensor *out, int n_in,
                                   const tensor *const *in);

/* Inner loop: n elements; p[0] the output run, p[1..] the inputs'; step[k] each operand's element
 * stride along the run (0 for a broadcast input, 1 for contiguous; the output's is always 1). */
typedef void (*cpu_bcast_fn)(void *ctx, int64_t n, char *const *p, const int64_t *step);

/* Runs fn over every output element. out and in[] are the operands' base pointers. Splits the work
 * over threads when the output is large unless `serial` (for fn that are not thread-safe). */
void cpu_bcast_run(const cpu_bcast_iter *it, void *out, const void *const *in, cpu_bcast_fn fn,
                   void *ctx, bool serial);

#endif

/* The data-movement engine every shape kernel reduces to: strided element copies (transpose,
 * slice, concat, tile, pad, depth/space) with contiguous and tiled fast paths, run in parallel. */
#ifndef ONYX_KERNELS_CPU_MOVE_H
#define ONYX_KERNELS_CPU_MOVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/value.h"

/* Most axes one copy may have: a tensor's rank, doubled for views that split every axis in two
 * (Tile's repeat-and-dim pairs). */
#define CPU_MOVE_MAX_RANK (2 * ONYX_MAX_RANK)

/* dst[sum_k i_k * dst_strides[k]] = src[sum_k i_k * src_strides[k]] for every index i < dims.
 * Strides count elements and may be 0 or negative (src: broadcast, reversal). esize is 1, 2, 4,
 * 8 or 16 bytes; rank <= CPU_MOVE_MAX_RANK. Regions must not overlap. Zero-size dims copy
 * nothing. */
void cpu_copy_strided(void *dst, const void *src, size_t esize, int rank, const int64_t *dims,
                      const int64_t *dst_strides, const int64_t *src_strides);

/* Row-major strides (in elements) of a shape. */
void cpu_strides(int rank, const int64_t *dims, int64_t *strides);

/* out = in transposed by perm (out dim i = in dim perm[i]), both dense. */
void cpu_transpose(void *dst, const void *src, size_t esize, int rank, const int64_t *in_dims,
                   const int64_t *perm);

/* Fills n elements of esize bytes with the pattern at `value`. */
void cpu_fill(void *dst, const void *value, size_t esize, int64_t n);

/* Writes `v` as one element of dtype d (numeric, float16/bfloat16, bool) into out. */
onyx_status cpu_scalar_from_double(onyx_dtype d, double v, void *out);

/* Bytes one element of t occupies for the movement engine (strings move their pointers);
 * 0 for sub-byte types, which these kernels do not move. */
size_t cpu_move_esize(const tensor *t);

/* Strings are moved as pointers: cpu_move_begin frees the output's own strings (they are about
 * to be overwritten), cpu_move_end gives every output element its own copy ("" where none was
 * written). Both are no-ops for other types. */
void cpu_move_begin(tensor *out);
onyx_status cpu_move_end(tensor *out);

/* Element i of an int32/int64 index tensor. */
static inline int64_t cpu_index_at(const tensor *t, int64_t i) {
    return t->dtype == ONYX_INT32 ? (int64_t)((const int32_t *)t->data)[i]
                                  : ((const int64_t *)t->data)[i];
}

/* Checks that `idx` is int32/int64 (what cpu_index_at reads) and every index in [-dim, dim); the
 * error names the first bad one and where it is. */
onyx_status cpu_check_indices(const tensor *idx, int64_t dim, const char *what);

/* The same for index tuples (GatherND, ScatterND): the innermost dim of `idx` has m entries,
 * entry k indexing an axis of size dims[k]. */
onyx_status cpu_check_tuples(const tensor *idx, int m, const int64_t *dims);

#endif

/* Strided views of a dense buffer: how a chain of Transposes, Reshapes and single-index Gathers
 * reads the tensor it starts from, without copying it (the fusion pass lets a MatMul read and
 * write through them, and an attention chain read Q, K and V). */
#ifndef ONYX_CORE_STRIDED_VIEW_H
#define ONYX_CORE_STRIDED_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "core/value.h"

typedef struct strided_view {
    int rank;
    int64_t dims[ONYX_MAX_RANK], strides[ONYX_MAX_RANK]; /* in elements */
    int64_t offset;                                      /* of element 0, in elements */
} strided_view;

/* The dense (row-major) view of dims. */
void view_dense(strided_view *v, int rank, const int64_t *dims);

/* out = Transpose(v, perm): out dim i is v's dim perm[i]. */
void view_transpose(const strided_view *v, const int64_t *perm, strided_view *out);

/* The view x such that Transpose(x, perm) is v (perm of v's rank). */
void view_untranspose(const strided_view *v, const int64_t *perm, strided_view *out);

/* out = v relabelled with `dims` (the same element count) without moving data: false where v's
 * strides do not allow it (merging dims that are not contiguous with each other). */
bool view_reshape(const strided_view *v, int rank, const int64_t *dims, strided_view *out);

/* out = Reshape(Transpose(Reshape(v, a), perm), c) where the first Reshape merges dims whose
 * strides view_reshape cannot merge and the second splits them apart again (torch's heads folded
 * into the batch: [S, B, E] -> [S, B*H, D] -> [B*H, S, D] -> [B, H, S, D]). The three shapes are
 * refined to the dims they all keep whole, which are moved instead; false where no such dims
 * give c (a merge c keeps that v's strides do not allow, sizes of 0, too many dims). */
bool view_regroup(const strided_view *v, int rank_a, const int64_t *a, const int64_t *perm,
                  int rank_c, const int64_t *c, strided_view *out);

/* out = v at `index` (0 <= index < dims[axis]) along `axis`: a Gather of one index, the axis
 * dropped (keep: left as a dim of 1, the index a tensor of one element). */
void view_select(const strided_view *v, int axis, int64_t index, bool keep, strided_view *out);

#endif

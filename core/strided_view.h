/* Strided views of a dense buffer: how a chain of Transposes and Reshapes reads the tensor it
 * starts from, without copying it (the fusion pass lets a MatMul read and write through them). */
#ifndef ONYX_CORE_STRIDED_VIEW_H
#define ONYX_CORE_STRIDED_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "core/value.h"

typedef struct strided_view {
    int rank;
    int64_t dims[ONYX_MAX_RANK], strides[ONYX_MAX_RANK]; /* in elements */
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

#endif

/* Pad's geometry: per-axis pads from a list over some axes, the padded size of a dim, and where
 * the (cropped) input lands in the output. Negative pads crop. Reading the pads from the
 * attribute or input stays in ops/shape_common.c. */
#ifndef ONYX_GEOMETRY_PADS_H
#define ONYX_GEOMETRY_PADS_H

#include "geometry/geom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* begin[0..rank) and end[0..rank) from `pads` (2*n_axes values: all begins, then all ends) for
 * axes[n_axes] (possibly negative, distinct; NULL: every axis in order, n_axes = rank); axes not
 * listed get 0. Fails with ONYX_ERR_INVALID_MODEL when the count is not 2*n_axes, and as
 * geom_axes on the axes. */
onyx_status geom_pads_place(const int64_t *pads, size_t n_pads, const int64_t *axes,
                            size_t n_axes, int rank, int64_t *begin, int64_t *end, geom_msg *msg);

/* The padded size dim + begin + end of a known dim (>= 0); fails with ONYX_ERR_SHAPE when the
 * pads are too large to add or crop more than the dim holds. */
onyx_status geom_pad_dim(int64_t dim, int64_t begin, int64_t end, int64_t *out, geom_msg *msg);

/* Where a dim of size dim padded by begin/end keeps its input: the output coordinate of its
 * first kept element (*at), the elements cropped before it (*crop) and how many are kept (*kept,
 * <= 0 when the crop takes all). */
void geom_pad_interior(int64_t dim, int64_t begin, int64_t end, int64_t *at, int64_t *crop,
                       int64_t *kept);

#ifdef __cplusplus
}
#endif

#endif

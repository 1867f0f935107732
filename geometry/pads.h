/* Pad's geometry: per-axis pads from a list over some axes, the padded size of a dim, where the
 * (cropped) input lands in the output, and a whole node's pads as its schema resolves them once
 * per plan for every device's kernel (core/op_params.h). Negative pads crop. Reading the pads
 * and the mode from the attributes or inputs stays in ops/shape_common.c. */
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

/* What fills the border: a value, the interior mirrored without its edge, its edge repeated, or
 * its other end (wrap, Pad-19). */
enum { GEOM_PAD_CONSTANT, GEOM_PAD_REFLECT, GEOM_PAD_EDGE, GEOM_PAD_WRAP };

/* A Pad node resolved over input dims in[]: its mode (GEOM_PAD_*), pads begin[] and end[] per
 * axis, and per axis of a known dim the output dim and geom_pad_interior's at, crop and kept.
 * An unknown input dim (-1) leaves those -1 until a run knows it. */
typedef struct geom_pads {
    int rank, mode;
    int64_t in[GEOM_MAX_RANK], out[GEOM_MAX_RANK];
    int64_t begin[GEOM_MAX_RANK], end[GEOM_MAX_RANK];
    int64_t at[GEOM_MAX_RANK], crop[GEOM_MAX_RANK], kept[GEOM_MAX_RANK];
} geom_pads;

/* Whether every input dim of p is known: then p holds for every input of those dims. */
bool geom_pads_known(const geom_pads *p);

#ifdef __cplusplus
}
#endif

#endif

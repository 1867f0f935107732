/* Numpy broadcasting of shapes: the rule for one pair of dims, the broadcast of two shapes, and
 * the element strides that read an input broadcast to an output's shape. Dims of -1 are unknown
 * (op inference); kernels pass known dims. */
#ifndef ONYX_GEOMETRY_BROADCAST_H
#define ONYX_GEOMETRY_BROADCAST_H

#include "geometry/geom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One pair of dims: a 1 stretches to the other (to 0 too), equal dims stay, an unknown dim
 * against a known d gives d (the unknown must be 1 or d), two unknown ones stay unknown. False
 * for two known dims that differ and are neither 1. */
bool geom_broadcast_dim(int64_t a, int64_t b, int64_t *out);

/* The multidirectional broadcast of shapes a and b, right-aligned: rank max(ra, rb) into *rank
 * and dims (which may be a or b themselves). Fails with ONYX_ERR_SHAPE naming the dims. */
onyx_status geom_broadcast_shapes(int ra, const int64_t *a, int rb, const int64_t *b, int *rank,
                                  int64_t *dims, geom_msg *msg);

/* The one-way broadcast of an input of in_dims to out_dims (known dims): strides[d] for every
 * output dim d is the input's row-major element stride along it, 0 where the input has a 1 or
 * lacks the dim. Fails with ONYX_ERR_SHAPE when the input has the higher rank or a dim that is
 * neither 1 nor the output's. */
onyx_status geom_broadcast_strides(int in_rank, const int64_t *in_dims, int out_rank,
                                   const int64_t *out_dims, int64_t *strides, geom_msg *msg);

#ifdef __cplusplus
}
#endif

#endif

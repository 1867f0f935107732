/* Slice's bounds along one axis, from its resolved start, end and step (reading starts, ends,
 * axes and steps from attributes or inputs stays in ops/shape_common.c). */
#ifndef ONYX_GEOMETRY_SLICE_H
#define ONYX_GEOMETRY_SLICE_H

#include "geometry/geom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Along a dim of size dim >= 0, the elements first + i*step for i < *len: negative start and end
 * count from the end, then are clamped (to [0, dim] for a positive step, to [0, dim-1] and
 * [-1, dim-1] for a negative one). step != 0. An empty result has first 0. */
void geom_slice_axis(int64_t start, int64_t end, int64_t step, int64_t dim, int64_t *first,
                     int64_t *len);

#ifdef __cplusplus
}
#endif

#endif

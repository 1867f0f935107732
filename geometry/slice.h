/* Slice's bounds along one axis, from its resolved start, end and step, and a whole node's slice
 * as its schema resolves it once per plan for every device's kernel (core/op_params.h); reading
 * starts, ends, axes and steps from attributes or inputs stays in ops/shape_common.c. */
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

/* A Slice node resolved over input dims in[]: output element (i_0, ..., i_rank-1) is input element
 * (start[k] + i_k * step[k])_k and the output's dims are len[]. An unknown input dim (-1) leaves
 * its axis's len -1 (and its start 0) until a run knows it. */
typedef struct geom_slice {
    int rank;
    int64_t in[GEOM_MAX_RANK];
    int64_t start[GEOM_MAX_RANK], step[GEOM_MAX_RANK], len[GEOM_MAX_RANK];
} geom_slice;

/* Whether every input dim of s is known: then s holds for every input of those dims. */
bool geom_slice_known(const geom_slice *s);

/* Whether the known slice s of a dense input is one contiguous run of the input's elements: every
 * axis before some axis keeps one element, that axis steps forward by 1, every axis after it is
 * kept whole. Then *offset is the run's first element. False for an empty slice. */
bool geom_slice_contiguous(const geom_slice *s, int64_t *offset);

#ifdef __cplusplus
}
#endif

#endif

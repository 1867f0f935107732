/* Axis permutations: Transpose's perm checked (or its default, the axes reversed), and whether a
 * permutation moves the channels (axis 1) last or back, as the fusion pass and the memory planner
 * recognise a layout change. */
#ifndef ONYX_GEOMETRY_PERM_H
#define ONYX_GEOMETRY_PERM_H

#include "geometry/geom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* perm[0..rank) from the n values of `given` where the attribute is present, checked to be a
 * permutation of 0..rank-1 (ONYX_ERR_SHAPE when n is not the rank, ONYX_ERR_INVALID_MODEL when a
 * value is out of range or repeated); the axes reversed (rank-1..0) where it is absent. */
onyx_status geom_transpose_perm(bool present, const int64_t *given, size_t n, int rank,
                                int64_t *perm, geom_msg *msg);

/* Whether perm, of rank 3 or more, puts the channels (axis 1) last ([0, 2, ..., r-1, 1]: to_last),
 * or first again ([0, r-1, 1, ..., r-2]). */
bool geom_perm_moves_channels(const int64_t *perm, int rank, bool to_last);

#ifdef __cplusplus
}
#endif

#endif

/* DepthToSpace and SpaceToDepth as a view and a transpose: [N, C, H, W] read as a 6-D view whose
 * permuted, dense copy is the output. Reading blocksize and mode stays in ops/shape_common.c. */
#ifndef ONYX_GEOMETRY_DEPTH_SPACE_H
#define ONYX_GEOMETRY_DEPTH_SPACE_H

#include "geometry/geom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest blocksize whose square fits in int64. */
#define GEOM_BLOCKSIZE_MAX 3037000499LL

/* For input dims in[4] (unknown dims -1 give unknown output dims), blocksize b in
 * 1..GEOM_BLOCKSIZE_MAX and the CRD (else DCR) channel order: the view's dims view[6], the
 * permutation perm[6] and the output dims out[4]. to_space: DepthToSpace. Fails with
 * ONYX_ERR_SHAPE when C (to space) or H and W (to depth) are no multiple of what the block
 * needs, or an output dim overflows. */
onyx_status geom_depth_space(bool to_space, bool crd, int64_t b, const int64_t *in,
                             int64_t *view, int64_t *perm, int64_t *out, geom_msg *msg);

#ifdef __cplusplus
}
#endif

#endif

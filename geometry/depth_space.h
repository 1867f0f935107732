/* DepthToSpace and SpaceToDepth as a view and a transpose: [N, C, H, W] read as a 6-D view whose
 * permuted, dense copy is the output; a node's as its schema resolves it once per plan for every
 * device's kernel (core/op_params.h). Reading blocksize and mode stays in ops/shape_common.c. */
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

/* A DepthToSpace or SpaceToDepth node resolved over input dims in[4]: geom_depth_space's view,
 * perm and output dims (-1 where an input dim is unknown). */
typedef struct geom_blocks {
    int64_t in[4], out[4], view[6], perm[6];
} geom_blocks;

/* Whether every input dim of b is known: then b holds for every input of those dims. */
bool geom_blocks_known(const geom_blocks *b);

#ifdef __cplusplus
}
#endif

#endif

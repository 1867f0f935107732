/* Schemas of DepthToSpace and SpaceToDepth: [N, C, H, W] rearranged between channels and
 * blocksize x blocksize spatial blocks; one inference with a direction, so one file. Both take a
 * DCR/CRD mode at 28 (SpaceToDepth's is new; DepthToSpace-28 only gained a function body). */
#include "ops/shape_common.h"

static onyx_status depth_space_infer(infer_ctx *c, bool to_space) {
    TRY(infer_need_tensor(c, 0));
    const type_info *x = c->in[0];
    if (x->rank < 0) {
        type_set_tensor(&c->out[0], x->dtype, 4, NULL);
        return ONYX_OK;
    }
    if (x->rank != 4) return onyx_error(ONYX_ERR_SHAPE, "input has rank %d, expected 4", x->rank);
    int64_t view[6], perm[6], out[4];
    TRY(ops_depth_space_plan(c->node, to_space, x->dims, view, perm, out));
    type_set_tensor(&c->out[0], x->dtype, 4, out);
    return ONYX_OK;
}

static onyx_status d2s_infer(infer_ctx *c) { return depth_space_infer(c, true); }
static onyx_status s2d_infer(infer_ctx *c) { return depth_space_infer(c, false); }

static const attr_spec attrs_1[] = {{"blocksize", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_11[] = {{"blocksize", ATTR_INT}, {"mode", ATTR_STRING}, {NULL, 0}};

const op_schema op_DepthToSpace[] = {{"", "DepthToSpace", 1, 1, 1, 1, 1, attrs_1, d2s_infer, 0},
                                     {"", "DepthToSpace", 11, 1, 1, 1, 1, attrs_11, d2s_infer, 0},
                                     {"", "DepthToSpace", 13, 1, 1, 1, 1, attrs_11, d2s_infer, 0},
                                     {"", "DepthToSpace", 28, 1, 1, 1, 1, attrs_11, d2s_infer, 0},
                                     OP_END};

const op_schema op_SpaceToDepth[] = {{"", "SpaceToDepth", 1, 1, 1, 1, 1, attrs_1, s2d_infer, 0},
                                     {"", "SpaceToDepth", 13, 1, 1, 1, 1, attrs_1, s2d_infer, 0},
                                     {"", "SpaceToDepth", 28, 1, 1, 1, 1, attrs_11, s2d_infer, 0},
                                     OP_END};

/* Schemas of DepthToSpace and SpaceToDepth: [N, C, H, W] rearranged between channels and
 * blocksize x blocksize spatial blocks; one inference with a direction, so one file. Both take a
 * DCR/CRD mode at 28 (SpaceToDepth's is new; DepthToSpace-28 only gained a function body). The
 * rearrangement is resolved here once per plan and handed to every device's kernel
 * (core/op_params.h). */
#include "ops/shape_common.h"

static onyx_status depth_space_infer(infer_ctx *c, bool to_space) {
    TRY(infer_need_tensor(c, 0));
    const type_info *x = c->in[0];
    if (x->rank < 0) {
        type_set_tensor(&c->out[0], x->dtype, 4, NULL);
        return ONYX_OK;
    }
    if (x->rank != 4) return onyx_error(ONYX_ERR_SHAPE, "input has rank %d, expected 4", x->rank);
    geom_blocks b;
    TRY(ops_depth_space_plan(c->node, to_space, x->dims, &b));
    type_set_tensor(&c->out[0], x->dtype, 4, b.out);
    ops_set_blocks(c, &b);
    return ONYX_OK;
}

static onyx_status d2s_infer(infer_ctx *c) { return depth_space_infer(c, true); }
static onyx_status s2d_infer(infer_ctx *c) { return depth_space_infer(c, false); }

static const attr_spec attrs_1[] = {{"blocksize", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_11[] = {{"blocksize", ATTR_INT}, {"mode", ATTR_STRING}, {NULL, 0}};

#define D2S(v, attrs) {"", "DepthToSpace", v, 1, 1, 1, 1, attrs, d2s_infer, OP_GEOMETRY}
#define S2D(v, attrs) {"", "SpaceToDepth", v, 1, 1, 1, 1, attrs, s2d_infer, OP_GEOMETRY}

const op_schema op_DepthToSpace[] = {D2S(1, attrs_1), D2S(11, attrs_11), D2S(13, attrs_11),
                                     D2S(28, attrs_11), OP_END};

const op_schema op_SpaceToDepth[] = {S2D(1, attrs_1), S2D(13, attrs_1), S2D(28, attrs_11),
                                     OP_END};

/* Schema of ai.onyx ChannelShuffle, onyx's own op (no model writes it; the CPU's fusion pass,
 * core/fuse_shuffle.c, makes it of ShuffleNet's Reshape -> Transpose -> Reshape): X [N, C,
 * spatial...] with its channels as `group` rows of C / group, read column by column: output
 * channel j * group + i is input channel i * (C / group) + j. Y has X's type and shape. */
#include "ops/shape_common.h"

static onyx_status shuffle_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    const type_info *x = c->in[0];
    int64_t group = attr_int(c->node, "group", 0);
    if (group < 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "group is %lld, expected 1 or more",
                          (long long)group);
    if (x->rank >= 0 && x->rank < 3)
        return onyx_error(ONYX_ERR_SHAPE, "input has rank %d, expected 3 or more", x->rank);
    if (x->rank >= 3 && x->dims[1] >= 0 && x->dims[1] % group != 0)
        return onyx_error(ONYX_ERR_SHAPE, "%lld channels do not split into %lld groups",
                          (long long)x->dims[1], (long long)group);
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs[] = {{"group", ATTR_INT}, {NULL, 0}};

const op_schema op_ChannelShuffle[] = {
    {"ai.onyx", "ChannelShuffle", 1, 1, 1, 1, 1, attrs, shuffle_infer, 0},
    OP_END,
};

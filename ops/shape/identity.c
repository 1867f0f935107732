/* Schema of Identity: the output is the input, tensor or (v14, v16) sequence or optional. */
#include "ops/shape_common.h"

static onyx_status identity_infer(infer_ctx *c) {
    if (!ops_has_input(c, 0))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "input 0: expected a value, got none");
    if (c->node->version < 14) TRY(infer_need_tensor(c, 0));
    return infer_same_as_input(c, 0, 0);
}

#define IDENTITY_V(v)                                                                              \
    { "", "Identity", v, 1, 1, 1, 1, NULL, identity_infer, 0 }
const op_schema op_Identity[] = {IDENTITY_V(1),  IDENTITY_V(13), IDENTITY_V(14), IDENTITY_V(16),
                                 IDENTITY_V(19), IDENTITY_V(21), IDENTITY_V(23), IDENTITY_V(24),
                                 IDENTITY_V(25), OP_END};

/* Schema of Size: the input's element count as an int64 scalar. */
#include "ops/shape_common.h"

static onyx_status size_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    type_set_tensor(&c->out[0], ONYX_INT64, 0, NULL);
    return ONYX_OK;
}

#define SIZE_V(v)                                                                                  \
    { "", "Size", v, 1, 1, 1, 1, NULL, size_infer, OP_SHAPE_ONLY }
const op_schema op_Size[] = {SIZE_V(1),  SIZE_V(13), SIZE_V(19), SIZE_V(21),
                             SIZE_V(23), SIZE_V(24), SIZE_V(25), OP_END};

/* Schema of Where: picks X or Y by a bool condition, all three broadcast together. */
#include "ops/elementwise/infer_elementwise.h"

#define WHERE_TYPES (DT_NUMERIC | DT_BIT(ONYX_BOOL) | DT_BIT(ONYX_STRING) |                        \
                     DT_BIT(ONYX_COMPLEX64) | DT_BIT(ONYX_COMPLEX128))

static onyx_status where_infer(infer_ctx *c) {
    for (int i = 0; i < 3; i++) TRY(infer_need_tensor(c, i));
    TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_BOOL)));
    TRY(infer_dtype_in(c, 1, WHERE_TYPES));
    TRY(infer_same_dtypes(c, 1, 2));
    int rank;
    int64_t dims[ONYX_MAX_RANK];
    TRY(infer_broadcast(c, 0, 3, &rank, dims));
    type_set_tensor(&c->out[0], c->in[1]->dtype, rank, rank >= 0 ? dims : NULL);
    return ONYX_OK;
}

const op_schema op_Where[] = {{"", "Where", 9, 3, 3, 1, 1, NULL, where_infer, 0},
                              {"", "Where", 16, 3, 3, 1, 1, NULL, where_infer, 0},
                              OP_END};

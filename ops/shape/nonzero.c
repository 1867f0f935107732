/* Schema of NonZero: the int64 coordinates [rank, count] of the nonzero elements; count is
 * known only at run time. */
#include "ops/shape_common.h"

/* The types whose zero the kernel knows (numeric, bool, string, complex). */
#define NONZERO_TYPES (DT_NUMERIC | DT_BIT(ONYX_BOOL) | DT_BIT(ONYX_STRING) |                      \
                       DT_BIT(ONYX_COMPLEX64) | DT_BIT(ONYX_COMPLEX128))

static onyx_status nonzero_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, NONZERO_TYPES));
    int r = c->in[0]->rank;
    int64_t dims[2] = {r < 0 ? -1 : r == 0 ? 1 : r, -1};
    type_set_tensor(&c->out[0], ONYX_INT64, 2, dims);
    return ONYX_OK;
}

const op_schema op_NonZero[] = {{"", "NonZero", 9, 1, 1, 1, 1, NULL, nonzero_infer, 0},
                                {"", "NonZero", 13, 1, 1, 1, 1, NULL, nonzero_infer, 0},
                                OP_END};

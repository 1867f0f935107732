/* Schema of PRelu: slope broadcasts one way into X's shape (before opset 7 a 1-D slope may also
 * run along X's channel dim 1, as Caffe2-era models used it). */
#include "ops/elementwise/infer_elementwise.h"

#define PRELU_TYPES (DT_FLOATS | DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64) | DT_BIT(ONYX_UINT32) |   \
                     DT_BIT(ONYX_UINT64))

static onyx_status prelu_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 1));
    TRY(infer_dtype_in(c, 0, PRELU_TYPES));
    TRY(infer_same_dtypes(c, 0, 2));
    const type_info *x = c->in[0], *s = c->in[1];
    /* with either dim unknown the kernel decides between the channel and the broadcast form */
    bool channel = c->node->version < 7 && x->rank >= 2 && s->rank == 1 &&
                   (s->dims[0] < 0 || x->dims[1] < 0 ||
                    (s->dims[0] > 1 && s->dims[0] == x->dims[1]));
    if (!channel && x->rank >= 0 && s->rank >= 0) {
        int rank;
        int64_t dims[ONYX_MAX_RANK];
        TRY(infer_broadcast(c, 0, 2, &rank, dims));
        bool fits = rank == x->rank;
        for (int d = 0; fits && d < rank; d++) fits = x->dims[d] < 0 || dims[d] == x->dims[d];
        if (!fits) {
            char a[160], b[160];
            return onyx_error(ONYX_ERR_SHAPE, "slope of shape %s does not broadcast to X's "
                              "shape %s", shape_str(s->rank, s->dims, a, sizeof a),
                              shape_str(x->rank, x->dims, b, sizeof b));
        }
    }
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs_1[] = {{"consumed_inputs", ATTR_INTS}, {NULL, 0}};

const op_schema op_PRelu[] = {{"", "PRelu", 1, 2, 2, 1, 1, attrs_1, prelu_infer, 0},
                              {"", "PRelu", 6, 2, 2, 1, 1, NULL, prelu_infer, 0},
                              {"", "PRelu", 7, 2, 2, 1, 1, NULL, prelu_infer, 0},
                              {"", "PRelu", 9, 2, 2, 1, 1, NULL, prelu_infer, 0},
                              {"", "PRelu", 16, 2, 2, 1, 1, NULL, prelu_infer, 0},
                              OP_END};

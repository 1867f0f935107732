/* Schema of Expand: broadcasts the input against the shape given by input 1 (bidirectionally, so
 * a 1 in the shape keeps the input's dim). The output shape needs that input's value. */
#include "ops/elementwise/infer_elementwise.h"

#define EXPAND_TYPES (DT_NUMERIC | DT_BIT(ONYX_BOOL) | DT_BIT(ONYX_STRING) |                       \
                      DT_BIT(ONYX_COMPLEX64) | DT_BIT(ONYX_COMPLEX128))

static onyx_status expand_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, EXPAND_TYPES));
    TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT64)));
    const type_info *x = c->in[0], *s = c->in[1];
    onyx_dtype dt = x->dtype;
    if (s->rank > 1)
        return onyx_error(ONYX_ERR_SHAPE, "input 1 (shape) has rank %d, expected 1", s->rank);
    const tensor *sv = c->in_value[1];
    if (!sv || x->rank < 0) {
        int64_t n = s->rank == 1 ? s->dims[0] : -1;
        if (n > ONYX_MAX_RANK)
            return onyx_error(ONYX_ERR_UNSUPPORTED, "shape has %lld entries, more than the %d "
                              "dims onyx supports", (long long)n, ONYX_MAX_RANK);
        int len = (int)n;
        if (len < 0 || x->rank < 0) {
            type_set_tensor(&c->out[0], dt, -1, NULL);
        } else {
            int r = len > x->rank ? len : x->rank;
            type_set_tensor(&c->out[0], dt, r, NULL);
        }
        return ONYX_OK;
    }
    int64_t shape[ONYX_MAX_RANK];
    size_t len;
    TRY(tensor_to_i64s(sv, shape, ONYX_MAX_RANK, &len));
    int r = (int)len > x->rank ? (int)len : x->rank;
    int64_t dims[ONYX_MAX_RANK];
    for (int d = 0; d < r; d++) {
        int ix = d - (r - x->rank), is = d - (r - (int)len);
        int64_t a = ix >= 0 ? x->dims[ix] : 1, b = is >= 0 ? shape[is] : 1;
        if (b < 0)
            return onyx_error(ONYX_ERR_SHAPE, "shape entry %d is %lld, expected >= 0", is,
                              (long long)b);
        if (a == 1 || a == b || b == 1) {
            dims[d] = a == 1 ? b : a;
        } else if (a < 0) {
            dims[d] = b; /* an unknown input dim must be 1 or b */
        } else {
            char sx[160];
            return onyx_error(ONYX_ERR_SHAPE, "input of shape %s cannot expand to shape entry "
                              "%d = %lld (input dim %lld)",
                              shape_str(x->rank, x->dims, sx, sizeof sx), is, (long long)b,
                              (long long)a);
        }
    }
    type_set_tensor(&c->out[0], dt, r, dims);
    return ONYX_OK;
}

const op_schema op_Expand[] = {{"", "Expand", 8, 2, 2, 1, 1, NULL, expand_infer, 0},
                               {"", "Expand", 13, 2, 2, 1, 1, NULL, expand_infer, 0},
                               OP_END};

/* Schema of Reshape: the target shape comes from an attribute (v1) or the shape input, with 0
 * copying an input dim (unless allowzero, v14) and -1 taking what is left. */
#include "ops/shape_common.h"

#include <inttypes.h>

static onyx_status reshape_infer(infer_ctx *c) {
    enum { R = ONYX_MAX_RANK };
    TRY(infer_need_tensor(c, 0));
    const type_info *x = c->in[0];
    int64_t shape[R];
    size_t n;
    if (c->node->version < 5) {
        const int64_t *v;
        n = attr_ints(c->node, "shape", &v);
        if (n > R)
            return onyx_error(ONYX_ERR_UNSUPPORTED, "shape has %zu dims, at most %d supported", n,
                              R);
        for (size_t i = 0; i < n; i++) shape[i] = v[i];
    } else {
        TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT64)));
        const tensor *sv = ops_value(c, 1);
        if (!sv) {
            const type_info *s = c->in[1];
            int rank = s->rank == 1 && s->dims[0] >= 0 && s->dims[0] <= R ? (int)s->dims[0] : -1;
            type_set_tensor(&c->out[0], x->dtype, rank, NULL);
            return ONYX_OK;
        }
        TRY(ops_read_ints(sv, 1, shape, R, &n));
    }
    bool allowzero = c->node->version >= 14 && attr_int(c->node, "allowzero", 0) != 0;
    int64_t out[R];
    int infer_at = -1;
    bool has_zero = false;
    for (size_t i = 0; i < n; i++) {
        int64_t v = shape[i];
        if (v == -1) {
            if (infer_at >= 0)
                return onyx_error(ONYX_ERR_SHAPE, "shape has -1 at both %d and %zu", infer_at, i);
            infer_at = (int)i;
            out[i] = -1;
        } else if (v == 0 && !allowzero) {
            if (x->rank >= 0 && (int)i >= x->rank)
                return onyx_error(ONYX_ERR_SHAPE,
                                  "shape[%zu] = 0 copies input dim %zu, but the input has rank %d",
                                  i, i, x->rank);
            out[i] = x->rank >= 0 ? x->dims[i] : -1;
        } else if (v < 0) {
            return onyx_error(ONYX_ERR_SHAPE, "shape[%zu] = %" PRId64 " is negative", i, v);
        } else {
            has_zero = has_zero || v == 0;
            out[i] = v;
        }
    }
    if (allowzero && has_zero && infer_at >= 0)
        return onyx_error(ONYX_ERR_SHAPE, "shape has both 0 and -1 while allowzero is set");
    int64_t in_numel = -1, rest;
    if (x->rank >= 0 && !ops_dims_product(x->dims, 0, x->rank, &in_numel))
        return onyx_error(ONYX_ERR_SHAPE, "input element count overflows");
    if (!ops_dims_product(out, 0, (int)n, &rest) && infer_at < 0)
        return onyx_error(ONYX_ERR_SHAPE, "shape element count overflows");
    if (infer_at >= 0) {
        out[infer_at] = 1;
        if (!ops_dims_product(out, 0, (int)n, &rest))
            return onyx_error(ONYX_ERR_SHAPE, "shape element count overflows");
        if (in_numel >= 0 && rest >= 0) {
            if (rest == 0 || in_numel % rest != 0) {
                char a[200], b[200];
                return onyx_error(ONYX_ERR_SHAPE, "cannot reshape %s into %s",
                                  shape_str(x->rank, x->dims, a, sizeof a),
                                  shape_str((int)n, shape, b, sizeof b));
            }
            out[infer_at] = in_numel / rest;
        } else {
            out[infer_at] = -1;
        }
    } else if (in_numel >= 0 && rest >= 0 && in_numel != rest) {
        char a[200], b[200];
        return onyx_error(ONYX_ERR_SHAPE, "cannot reshape %s (%" PRId64 " elements) into %s",
                          shape_str(x->rank, x->dims, a, sizeof a), in_numel,
                          shape_str((int)n, out, b, sizeof b));
    }
    type_set_tensor(&c->out[0], x->dtype, (int)n, out);
    return ONYX_OK;
}

static const attr_spec attrs_1[] = {
    {"shape", ATTR_INTS}, {"consumed_inputs", ATTR_INTS}, {NULL, 0}};
static const attr_spec attrs_14[] = {{"allowzero", ATTR_INT}, {NULL, 0}};

#define RESHAPE_V(v, attrs)                                                                        \
    { "", "Reshape", v, 2, 2, 1, 1, attrs, reshape_infer, 0 }
const op_schema op_Reshape[] = {{"", "Reshape", 1, 1, 1, 1, 1, attrs_1, reshape_infer, 0},
                                RESHAPE_V(5, NULL),
                                RESHAPE_V(13, NULL),
                                RESHAPE_V(14, attrs_14),
                                RESHAPE_V(19, attrs_14),
                                RESHAPE_V(21, attrs_14),
                                RESHAPE_V(23, attrs_14),
                                RESHAPE_V(24, attrs_14),
                                RESHAPE_V(25, attrs_14),
                                OP_END};

/* Schemas of Squeeze and Unsqueeze: remove or insert unit dims at axes given by an attribute
 * (before v13) or an int64 input; one file because both read their axes the same way. */
#include "ops/shape_common.h"

#include <inttypes.h>

/* The axes list: attribute before v13, input 1 after. *known false when the input's value is
 * not known yet; *given false when there is none at all. */
static onyx_status read_axes(infer_ctx *c, int64_t *axes, size_t *n, bool *given, bool *known) {
    *known = true;
    *given = false;
    *n = 0;
    if (c->node->version < 13) {
        const int64_t *v;
        size_t k = attr_ints(c->node, "axes", &v);
        *given = node_attr(c->node, "axes") != NULL;
        if (k > ONYX_MAX_RANK)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "axes has %zu values, at most %d allowed", k,
                              ONYX_MAX_RANK);
        for (size_t i = 0; i < k; i++) axes[i] = v[i];
        *n = k;
        return ONYX_OK;
    }
    if (!ops_has_input(c, 1)) return ONYX_OK;
    *given = true;
    TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT64)));
    const tensor *t = ops_value(c, 1);
    if (!t) {
        *known = false;
        return ONYX_OK;
    }
    return ops_read_ints(t, 1, axes, ONYX_MAX_RANK, n);
}

static onyx_status squeeze_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    const type_info *x = c->in[0];
    int64_t axes[ONYX_MAX_RANK], dims[ONYX_MAX_RANK];
    size_t n;
    bool given, known;
    TRY(read_axes(c, axes, &n, &given, &known));
    if (x->rank < 0 || !known) {
        type_set_tensor(&c->out[0], x->dtype, -1, NULL);
        return ONYX_OK;
    }
    bool drop[ONYX_MAX_RANK] = {false};
    if (given && n > 0) { /* empty axes squeeze every unit dim, as ORT does */
        int ax[ONYX_MAX_RANK];
        TRY(ops_norm_axes(axes, n, x->rank, ax, "axes"));
        for (size_t i = 0; i < n; i++) {
            int64_t d = x->dims[ax[i]];
            if (d >= 0 && d != 1)
                return onyx_error(ONYX_ERR_SHAPE, "cannot squeeze axis %d of size %" PRId64, ax[i],
                                  d);
            drop[ax[i]] = true;
        }
    } else {
        for (int k = 0; k < x->rank; k++) {
            if (x->dims[k] < 0) { /* which dims go depends on the unknown one */
                type_set_tensor(&c->out[0], x->dtype, -1, NULL);
                return ONYX_OK;
            }
            drop[k] = x->dims[k] == 1;
        }
    }
    int r = 0;
    for (int k = 0; k < x->rank; k++)
        if (!drop[k]) dims[r++] = x->dims[k];
    type_set_tensor(&c->out[0], x->dtype, r, dims);
    return ONYX_OK;
}

static onyx_status unsqueeze_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    const type_info *x = c->in[0];
    int64_t axes[ONYX_MAX_RANK], dims[ONYX_MAX_RANK];
    size_t n;
    bool given, known;
    TRY(read_axes(c, axes, &n, &given, &known));
    if (!given) return onyx_error(ONYX_ERR_INVALID_MODEL, "axes are missing");
    if (!known) {
        const type_info *a = c->in[1];
        int r = -1;
        if (x->rank >= 0 && a->rank == 1 && a->dims[0] >= 0 &&
            x->rank + a->dims[0] <= ONYX_MAX_RANK)
            r = x->rank + (int)a->dims[0];
        type_set_tensor(&c->out[0], x->dtype, r, NULL);
        return ONYX_OK;
    }
    if (x->rank < 0) {
        type_set_tensor(&c->out[0], x->dtype, -1, NULL);
        return ONYX_OK;
    }
    if (x->rank + n > ONYX_MAX_RANK)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "output rank %zu exceeds %d", x->rank + n,
                          ONYX_MAX_RANK);
    int r = x->rank + (int)n, ax[ONYX_MAX_RANK];
    TRY(ops_norm_axes(axes, n, r, ax, "axes"));
    bool ins[ONYX_MAX_RANK] = {false};
    for (size_t i = 0; i < n; i++) ins[ax[i]] = true;
    for (int k = 0, j = 0; k < r; k++) dims[k] = ins[k] ? 1 : x->dims[j++];
    type_set_tensor(&c->out[0], x->dtype, r, dims);
    return ONYX_OK;
}

static const attr_spec axes_attr[] = {{"axes", ATTR_INTS}, {NULL, 0}};

#define SQUEEZE_V(v)                                                                               \
    { "", "Squeeze", v, 1, 2, 1, 1, NULL, squeeze_infer, 0 }
const op_schema op_Squeeze[] = {{"", "Squeeze", 1, 1, 1, 1, 1, axes_attr, squeeze_infer, 0},
                                {"", "Squeeze", 11, 1, 1, 1, 1, axes_attr, squeeze_infer, 0},
                                SQUEEZE_V(13),
                                SQUEEZE_V(21),
                                SQUEEZE_V(23),
                                SQUEEZE_V(24),
                                SQUEEZE_V(25),
                                OP_END};

#define UNSQUEEZE_V(v)                                                                             \
    { "", "Unsqueeze", v, 2, 2, 1, 1, NULL, unsqueeze_infer, 0 }
const op_schema op_Unsqueeze[] = {{"", "Unsqueeze", 1, 1, 1, 1, 1, axes_attr, unsqueeze_infer, 0},
                                  {"", "Unsqueeze", 11, 1, 1, 1, 1, axes_attr, unsqueeze_infer, 0},
                                  UNSQUEEZE_V(13),
                                  UNSQUEEZE_V(21),
                                  UNSQUEEZE_V(23),
                                  UNSQUEEZE_V(24),
                                  UNSQUEEZE_V(25),
                                  OP_END};

/* Schema of GroupNormalization: x normalized per (instance, group of channels); v18 scales and
 * shifts per group ([num_groups]), v21 per channel ([C]) and adds stash_type. */
#include "ops/shape_common.h"

static onyx_status gn_infer(infer_ctx *c) {
    for (int i = 0; i < 3; i++) TRY(infer_dtype_in(c, i, DT_FLOATS));
    TRY(infer_same_dtypes(c, 0, 3));
    const type_info *x = c->in[0];
    int64_t g = attr_int(c->node, "num_groups", -1);
    if (!node_attr(c->node, "num_groups") || g <= 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "attribute num_groups is %s, expected a positive int",
                          node_attr(c->node, "num_groups") ? "not positive" : "missing");
    if (c->node->version >= 21) {
        int64_t st = attr_int(c->node, "stash_type", 1);
        if (st != ONYX_FLOAT && st != ONYX_DOUBLE)
            return onyx_error(ONYX_ERR_UNSUPPORTED,
                              "stash_type %lld is not supported (expected 1 "
                              "float or 11 double)",
                              (long long)st);
    }
    if (x->rank >= 0 && x->rank < 2)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected at least 2 (N x C x ...)",
                          x->rank);
    int64_t ch = x->rank >= 0 ? x->dims[1] : -1;
    if (ch >= 0 && ch % g != 0)
        return onyx_error(ONYX_ERR_SHAPE, "C = %lld is not a multiple of num_groups = %lld",
                          (long long)ch, (long long)g);
    int64_t want = c->node->version >= 21 ? ch : g;
    for (int i = 1; i < 3; i++) {
        const type_info *p = c->in[i];
        if (p->rank < 0) continue;
        if (p->rank != 1)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has rank %d, expected 1", i, p->rank);
        if (want >= 0 && p->dims[0] >= 0 && p->dims[0] != want)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has %lld elements, expected %lld (%s)", i,
                              (long long)p->dims[0], (long long)want,
                              c->node->version >= 21 ? "C" : "num_groups");
    }
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs_18[] = {{"epsilon", ATTR_FLOAT}, {"num_groups", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_21[] = {
    {"epsilon", ATTR_FLOAT}, {"num_groups", ATTR_INT}, {"stash_type", ATTR_INT}, {NULL, 0}};

const op_schema op_GroupNormalization[] = {
    {"", "GroupNormalization", 18, 3, 3, 1, 1, attrs_18, gn_infer, 0},
    {"", "GroupNormalization", 21, 3, 3, 1, 1, attrs_21, gn_infer, 0},
    OP_END,
};

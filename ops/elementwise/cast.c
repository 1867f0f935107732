/* Schemas of Cast and CastLike: the target type comes from the `to` attribute (a type name before
 * opset 6, a TensorProto number since) or from CastLike's second input. The float6 types came with
 * Cast-28; CastLike (last changed in 25) has never taken them. */
#include "ops/elementwise/infer_elementwise.h"

#include <strings.h>

/* Every type Cast converts between. */
#define CAST_TYPES (DT_NUMERIC | DT_BIT(ONYX_BOOL) | DT_BIT(ONYX_STRING) | DT_FLOAT8S | DT_SUBBYTE)

static onyx_status check_attrs(infer_ctx *c) {
    int64_t sat = attr_int(c->node, "saturate", 1);
    if (sat != 0 && sat != 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute saturate is %lld, expected 0 or 1",
                          (long long)sat);
    const char *mode = attr_string(c->node, "round_mode", "up");
    if (strcasecmp(mode, "up") != 0 && strcasecmp(mode, "down") != 0 &&
        strcasecmp(mode, "nearest") != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute round_mode is '%s', expected "
                          "\"up\", \"down\" or \"nearest\"", mode);
    return ONYX_OK;
}

/* The float6 types only from Cast-28 on (never in CastLike): `what` names input or target. */
static onyx_status check_float6(const infer_ctx *c, bool like, onyx_dtype d, const char *what) {
    if (!dtype_in(d, DT_FLOAT6S) || (!like && c->node->version >= 28)) return ONYX_OK;
    if (like)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "%s type %s: no CastLike version takes float6",
                          what, onyx_dtype_name(d));
    return onyx_error(ONYX_ERR_INVALID_MODEL, "%s type %s needs Cast-28, this node is Cast-%d",
                      what, onyx_dtype_name(d), c->node->version);
}

static onyx_status set_out(infer_ctx *c, onyx_dtype to, bool like) {
    if (to != ONYX_UNDEFINED && !dtype_in(to, CAST_TYPES)) /* UNDEFINED: CastLike's unknown */
        return onyx_error(ONYX_ERR_UNSUPPORTED, "cast to %s (%d) is not supported",
                          onyx_dtype_name(to), (int)to);
    TRY(check_float6(c, like, c->in[0]->dtype, "input"));
    TRY(check_float6(c, like, to, "target"));
    const type_info *x = c->in[0];
    type_set_tensor(&c->out[0], to, x->rank, x->rank >= 0 ? x->dims : NULL);
    return ONYX_OK;
}

static onyx_status cast_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, CAST_TYPES));
    TRY(check_attrs(c));
    const graph_attr *to = node_attr(c->node, "to");
    if (!to) return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute 'to' is missing");
    if (to->type == ATTR_STRING) {
        for (int d = 1; d < ONYX_DTYPE_COUNT; d++)
            if (strcasecmp(to->s, onyx_dtype_name((onyx_dtype)d)) == 0)
                return set_out(c, (onyx_dtype)d, false);
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute 'to' names an unknown type '%s'",
                          to->s);
    }
    if (to->type != ATTR_INT || to->i != (int)to->i || !dtype_valid((int)to->i))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute 'to' is %lld, expected a type "
                          "number 1..%d", (long long)to->i, ONYX_DTYPE_COUNT - 1);
    return set_out(c, (onyx_dtype)to->i, false);
}

static onyx_status castlike_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, CAST_TYPES));
    TRY(infer_need_tensor(c, 1));
    TRY(check_attrs(c));
    return set_out(c, c->in[1]->dtype, true);
}

static const attr_spec attrs_1[] = {{"to", ATTR_STRING}, {NULL, 0}};
static const attr_spec attrs_6[] = {{"to", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_19[] = {{"to", ATTR_INT}, {"saturate", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_24[] = {
    {"to", ATTR_INT}, {"saturate", ATTR_INT}, {"round_mode", ATTR_STRING}, {NULL, 0}};
static const attr_spec like_19[] = {{"saturate", ATTR_INT}, {NULL, 0}};
static const attr_spec like_24[] = {{"saturate", ATTR_INT}, {"round_mode", ATTR_STRING}, {NULL, 0}};

#define V(since, attrs) {"", "Cast", since, 1, 1, 1, 1, attrs, cast_infer, 0}
const op_schema op_Cast[] = {V(1, attrs_1),   V(6, attrs_6),   V(9, attrs_6),
                             V(13, attrs_6),  V(19, attrs_19), V(21, attrs_19),
                             V(23, attrs_19), V(24, attrs_24), V(25, attrs_24),
                             V(28, attrs_24), OP_END};
#undef V

#define V(since, attrs) {"", "CastLike", since, 2, 2, 1, 1, attrs, castlike_infer, 0}
const op_schema op_CastLike[] = {V(15, NULL),    V(19, like_19), V(21, like_19), V(23, like_19),
                                 V(24, like_24), V(25, like_24), OP_END};
#undef V

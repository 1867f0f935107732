/* Optional: wraps its input in an optional, or makes an empty optional of the `type` attribute.
 * v28 only widens the element types (onyx never restricted them). */
#include "ops/control/infer.h"

static const attr_spec optional_attrs[] = {
    {"type", ATTR_TYPE_PROTO},
    {NULL, ATTR_UNDEFINED},
};

static onyx_status optional_infer(infer_ctx *c) {
    const graph_attr *a = node_attr(c->node, "type");
    const type_info *given = c->n_in > 0 ? c->in[0] : NULL;
    if (!given && !(a && a->tp))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "an Optional without input needs the type "
                          "attribute");
    if (given && given->kind == ONYX_VALUE_OPTIONAL)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 is already an optional");
    const type_info *elem = given && given->kind != ONYX_VALUE_NONE ? given
                            : a && a->tp                             ? a->tp
                                                                     : NULL;
    return infer_ctl_container(&c->out[0], ONYX_VALUE_OPTIONAL, elem);
}

const op_schema op_Optional[] = {
    {"", "Optional", 15, 0, 1, 1, 1, optional_attrs, optional_infer, 0},
    {"", "Optional", 28, 0, 1, 1, 1, optional_attrs, optional_infer, 0},
    OP_END,
};

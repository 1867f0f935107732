/* OptionalGetElement: the value an optional holds; since v18 a plain tensor or sequence passes
 * through unchanged. v28 only widens the element types (onyx never restricted them). */
#include "ops/control/infer.h"

static onyx_status opt_get_infer(infer_ctx *c) {
    const type_info *t = c->in[0];
    if (!t) return onyx_error(ONYX_ERR_INVALID_MODEL, "input 0 is missing");
    type_release(&c->out[0]);
    type_init(&c->out[0]);
    switch (t->kind) {
    case ONYX_VALUE_NONE: return ONYX_OK;
    case ONYX_VALUE_OPTIONAL: return t->elem ? type_copy(&c->out[0], t->elem) : ONYX_OK;
    case ONYX_VALUE_TENSOR:
    case ONYX_VALUE_SEQUENCE:
        if (c->node->version >= 18) return type_copy(&c->out[0], t);
        break;
    default: break;
    }
    return onyx_error(ONYX_ERR_SHAPE, "input 0 must be an optional%s",
                      c->node->version >= 18 ? ", a tensor or a sequence" : "");
}

const op_schema op_OptionalGetElement[] = {
    {"", "OptionalGetElement", 15, 1, 1, 1, 1, NULL, opt_get_infer, 0},
    {"", "OptionalGetElement", 18, 1, 1, 1, 1, NULL, opt_get_infer, 0},
    {"", "OptionalGetElement", 28, 1, 1, 1, 1, NULL, opt_get_infer, 0},
    OP_END,
};

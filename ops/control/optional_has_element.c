/* OptionalHasElement: whether an optional holds a value; since v18 a plain tensor or sequence
 * counts as present and an omitted input as empty. v28 only widens the element types. */
#include "ops/control/infer.h"

static onyx_status opt_has_infer(infer_ctx *c) {
    const type_info *t = c->n_in > 0 ? c->in[0] : NULL;
    if (c->node->version < 18) {
        if (!t)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "input 0 is missing");
        if (t->kind != ONYX_VALUE_OPTIONAL && t->kind != ONYX_VALUE_NONE)
            return onyx_error(ONYX_ERR_SHAPE, "input 0 must be an optional");
    }
    type_set_tensor(&c->out[0], ONYX_BOOL, 0, NULL);
    return ONYX_OK;
}

const op_schema op_OptionalHasElement[] = {
    {"", "OptionalHasElement", 15, 1, 1, 1, 1, NULL, opt_has_infer, 0},
    {"", "OptionalHasElement", 18, 0, 1, 1, 1, NULL, opt_has_infer, 0},
    {"", "OptionalHasElement", 28, 0, 1, 1, 1, NULL, opt_has_infer, 0},
    OP_END,
};

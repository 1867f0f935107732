/* SequenceAt: the sequence's element at `position` (negative counts from the end). */
#include "ops/control/infer.h"

static onyx_status seq_at_infer(infer_ctx *c) {
    const type_info *elem;
    TRY(infer_ctl_need_seq(c, 0, &elem));
    if (c->n_in < 2 || !c->in[1])
        return onyx_error(ONYX_ERR_INVALID_MODEL, "input 1 (position) is missing");
    TRY(infer_ctl_position(c, 1));
    type_release(&c->out[0]);
    type_init(&c->out[0]);
    if (elem) return type_copy(&c->out[0], elem);
    type_set_tensor(&c->out[0], ONYX_UNDEFINED, -1, NULL);
    return ONYX_OK;
}

const op_schema op_SequenceAt[] = {
    {"", "SequenceAt", 11, 2, 2, 1, 1, NULL, seq_at_infer, 0},
    OP_END,
};

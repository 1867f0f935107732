/* SequenceErase: the input sequence without the element at `position` (default: the last). */
#include "ops/control/infer.h"

static onyx_status seq_erase_infer(infer_ctx *c) {
    const type_info *elem;
    TRY(infer_ctl_need_seq(c, 0, &elem));
    TRY(infer_ctl_position(c, 1));
    return infer_ctl_container(&c->out[0], ONYX_VALUE_SEQUENCE, elem);
}

const op_schema op_SequenceErase[] = {
    {"", "SequenceErase", 11, 1, 2, 1, 1, NULL, seq_erase_infer, 0},
    OP_END,
};

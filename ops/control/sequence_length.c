/* SequenceLength: the number of elements of a sequence, as an int64 scalar. */
#include "ops/control/infer.h"

static onyx_status seq_length_infer(infer_ctx *c) {
    const type_info *elem;
    TRY(infer_ctl_need_seq(c, 0, &elem));
    type_set_tensor(&c->out[0], ONYX_INT64, 0, NULL);
    return ONYX_OK;
}

const op_schema op_SequenceLength[] = {
    {"", "SequenceLength", 11, 1, 1, 1, 1, NULL, seq_length_infer, 0},
    OP_END,
};

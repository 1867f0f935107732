/* SequenceInsert: the input sequence with a tensor inserted at `position` (default: the end). */
#include "ops/control/infer.h"

static onyx_status seq_insert_infer(infer_ctx *c) {
    const type_info *elem;
    TRY(infer_ctl_need_seq(c, 0, &elem));
    TRY(infer_need_tensor(c, 1));
    TRY(infer_ctl_position(c, 2));
    const type_info *t = c->in[1];
    if (elem && elem->kind == ONYX_VALUE_TENSOR && elem->dtype != ONYX_UNDEFINED &&
        t->dtype != ONYX_UNDEFINED && t->dtype != elem->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "input 1 has type %s, expected %s like the sequence",
                          onyx_dtype_name(t->dtype), onyx_dtype_name(elem->dtype));
    type_info joined;
    type_init(&joined);
    /* elements keep the sequence's type or the tensor's: only what both share is known */
    onyx_status st = infer_ctl_join(&joined, t, elem);
    if (st == ONYX_OK)
        st = infer_ctl_container(&c->out[0], ONYX_VALUE_SEQUENCE,
                                 joined.kind == ONYX_VALUE_NONE ? NULL : &joined);
    type_release(&joined);
    return st;
}

const op_schema op_SequenceInsert[] = {
    {"", "SequenceInsert", 11, 2, 3, 1, 1, NULL, seq_insert_infer, 0},
    OP_END,
};

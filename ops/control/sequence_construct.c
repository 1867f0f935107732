/* SequenceConstruct: a sequence of its input tensors, which share one element type. */
#include "ops/control/infer.h"

static onyx_status seq_construct_infer(infer_ctx *c) {
    type_info elem, tmp;
    type_init(&elem);
    type_init(&tmp);
    onyx_status st = ONYX_OK;
    for (int i = 0; i < c->n_in; i++) {
        if (!c->in[i] || c->in[i]->kind == ONYX_VALUE_NONE) {
            CHECK(infer_ctl_join(&tmp, &elem, NULL));
        } else {
            CHECK(infer_need_tensor(c, i));
            if (i > 0 && elem.kind == ONYX_VALUE_TENSOR && elem.dtype != ONYX_UNDEFINED &&
                c->in[i]->dtype != ONYX_UNDEFINED && c->in[i]->dtype != elem.dtype) {
                st = onyx_error(ONYX_ERR_SHAPE, "input %d has type %s, expected %s like the "
                                "inputs before it", i, onyx_dtype_name(c->in[i]->dtype),
                                onyx_dtype_name(elem.dtype));
                goto done;
            }
            CHECK(infer_ctl_join(&tmp, i == 0 ? c->in[i] : &elem, c->in[i]));
        }
        type_release(&elem);
        elem = tmp;
        type_init(&tmp);
    }
    st = infer_ctl_container(&c->out[0], ONYX_VALUE_SEQUENCE,
                             elem.kind == ONYX_VALUE_NONE ? NULL : &elem);
done:
    type_release(&elem);
    type_release(&tmp);
    return st;
}

const op_schema op_SequenceConstruct[] = {
    {"", "SequenceConstruct", 11, 1, ONYX_VARIADIC, 1, 1, NULL, seq_construct_infer, 0},
    OP_END,
};

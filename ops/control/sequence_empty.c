/* SequenceEmpty: an empty sequence of tensors of the `dtype` attribute (default float). */
#include "ops/control/infer.h"

static const attr_spec seq_empty_attrs[] = {
    {"dtype", ATTR_INT},
    {NULL, ATTR_UNDEFINED},
};

static onyx_status seq_empty_infer(infer_ctx *c) {
    int64_t dt = attr_int(c->node, "dtype", ONYX_FLOAT);
    if (dt != (int)dt || !dtype_valid((int)dt))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute dtype = %lld is not a tensor type",
                          (long long)dt);
    type_info elem;
    type_init(&elem);
    type_set_tensor(&elem, (onyx_dtype)dt, -1, NULL);
    return infer_ctl_container(&c->out[0], ONYX_VALUE_SEQUENCE, &elem);
}

const op_schema op_SequenceEmpty[] = {
    {"", "SequenceEmpty", 11, 0, 0, 1, 1, seq_empty_attrs, seq_empty_infer, 0},
    OP_END,
};

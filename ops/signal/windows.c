/* Schemas of HannWindow, HammingWindow and BlackmanWindow: one file because the three differ only
 * in their cosine coefficients (the kernel's concern) and share inputs, attributes and shapes. */
#include "ops/signal/signal_common.h"

#include <inttypes.h>

#define WINDOW_TYPES                                                                              \
    (DT_INTS | DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16) |                 \
     DT_BIT(ONYX_BFLOAT16))

static onyx_status window_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64)));
    int64_t dt = attr_int(c->node, "output_datatype", ONYX_FLOAT);
    if (dt < 0 || dt > 31 || !dtype_in((onyx_dtype)dt, WINDOW_TYPES))
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "output_datatype %" PRId64 " is not an integer or float type", dt);
    const tensor *size = c->in_value ? c->in_value[0] : NULL;
    if (!size) {
        type_set_tensor(&c->out[0], (onyx_dtype)dt, 1, NULL);
        return ONYX_OK;
    }
    int64_t n;
    TRY(ops_scalar_int(size, "size", &n));
    if (n < 0 || n > ((int64_t)1 << 40))
        return onyx_error(ONYX_ERR_SHAPE, "size is %" PRId64 ", expected >= 0", n);
    type_set_tensor(&c->out[0], (onyx_dtype)dt, 1, &n);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"periodic", ATTR_INT}, {"output_datatype", ATTR_INT}, {NULL, 0}};

#define WINDOW_SCHEMA(Name)                                                                        \
    const op_schema op_##Name[] = {{"", #Name, 17, 1, 1, 1, 1, attrs, window_infer, 0}, OP_END};
WINDOW_SCHEMA(HannWindow)
WINDOW_SCHEMA(HammingWindow)
WINDOW_SCHEMA(BlackmanWindow)

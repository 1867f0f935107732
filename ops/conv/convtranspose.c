/* Schema of ConvTranspose (geometry and checks in ops/conv/conv.c). */
#include "ops/conv/conv.h"

static onyx_status convtranspose_infer(infer_ctx *c) { return conv_infer_float(c, true, 2); }

static const attr_spec convtranspose_attrs[] = {
    {"auto_pad", ATTR_STRING},  {"dilations", ATTR_INTS},      {"group", ATTR_INT},
    {"kernel_shape", ATTR_INTS}, {"output_padding", ATTR_INTS}, {"output_shape", ATTR_INTS},
    {"pads", ATTR_INTS},         {"strides", ATTR_INTS},        {NULL, 0}};

const op_schema op_ConvTranspose[] = {
    {"", "ConvTranspose", 1, 2, 3, 1, 1, convtranspose_attrs, convtranspose_infer, OP_GEOMETRY},
    {"", "ConvTranspose", 11, 2, 3, 1, 1, convtranspose_attrs, convtranspose_infer, OP_GEOMETRY},
    {"", "ConvTranspose", 22, 2, 3, 1, 1, convtranspose_attrs, convtranspose_infer, OP_GEOMETRY},
    OP_END,
};

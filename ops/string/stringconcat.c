/* Schema of StringConcat: two string tensors joined element by element, numpy-broadcast. */
#include "ops/elementwise/infer_elementwise.h"

static onyx_status string_concat_infer(infer_ctx *c) {
    return infer_ew_nary(c, DT_BIT(ONYX_STRING), ONYX_STRING);
}

const op_schema op_StringConcat[] = {
    {"", "StringConcat", 20, 2, 2, 1, 1, NULL, string_concat_infer, 0}, OP_END};

/* Schemas of BitShift and BitwiseAnd/Or/Xor/Not: integer elementwise ops. BitShift took unsigned
 * types until version 28, which adds the signed ones (arithmetic right shift). */
#include "ops/elementwise/infer_elementwise.h"

#include <string.h>

static onyx_status shift_infer(infer_ctx *c) {
    const char *dir = attr_string(c->node, "direction", NULL);
    if (!dir || (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute direction is '%s', expected "
                          "\"LEFT\" or \"RIGHT\"", dir ? dir : "(missing)");
    return infer_ew_nary(c, c->node->version >= 28 ? DT_INTS : DT_UINTS, ONYX_UNDEFINED);
}
static onyx_status bitwise_infer(infer_ctx *c) {
    return infer_ew_nary(c, DT_INTS, ONYX_UNDEFINED);
}
static onyx_status not_infer(infer_ctx *c) { return infer_ew_unary(c, DT_INTS); }

static const attr_spec shift_attrs[] = {{"direction", ATTR_STRING}, {NULL, 0}};

const op_schema op_BitShift[] = {{"", "BitShift", 11, 2, 2, 1, 1, shift_attrs, shift_infer, 0},
                                 {"", "BitShift", 28, 2, 2, 1, 1, shift_attrs, shift_infer, 0},
                                 OP_END};
const op_schema op_BitwiseAnd[] = {{"", "BitwiseAnd", 18, 2, 2, 1, 1, NULL, bitwise_infer, 0},
                                   OP_END};
const op_schema op_BitwiseOr[] = {{"", "BitwiseOr", 18, 2, 2, 1, 1, NULL, bitwise_infer, 0},
                                  OP_END};
const op_schema op_BitwiseXor[] = {{"", "BitwiseXor", 18, 2, 2, 1, 1, NULL, bitwise_infer, 0},
                                   OP_END};
const op_schema op_BitwiseNot[] = {{"", "BitwiseNot", 18, 1, 1, 1, 1, NULL, not_infer, 0},
                                   OP_END};

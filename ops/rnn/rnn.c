/* Schema of RNN: the simple (Elman) recurrent layer, H = f(X W^T + H R^T + Wb + Rb). */
#include "ops/rnn/rnn_common.h"

static onyx_status rnn_op_infer(infer_ctx *c) { return rnn_infer(c, RNN_CELL_RNN); }

/* output_sequence until 7, layout from 14 */
static const attr_spec attrs_1[] = {RNN_ATTRS, {"output_sequence", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_7[] = {RNN_ATTRS, {NULL, 0}};
static const attr_spec attrs_14[] = {RNN_ATTRS, {"layout", ATTR_INT}, {NULL, 0}};

const op_schema op_RNN[] = {
    {"", "RNN", 1, 3, 6, 0, 2, attrs_1, rnn_op_infer, 0},
    {"", "RNN", 7, 3, 6, 0, 2, attrs_7, rnn_op_infer, 0},
    {"", "RNN", 14, 3, 6, 0, 2, attrs_14, rnn_op_infer, 0},
    {"", "RNN", 22, 3, 6, 0, 2, attrs_14, rnn_op_infer, 0},
    OP_END,
};

/* Schema of RNN: the simple (Elman) recurrent layer, H = f(X W^T + H R^T + Wb + Rb). */
#include "ops/rnn_quant/rnn_common.h"

static onyx_status rnn_op_infer(infer_ctx *c) { return rnn_infer(c, RNN_CELL_RNN); }

static const attr_spec attrs[] = {
    {"activation_alpha", ATTR_FLOATS}, {"activation_beta", ATTR_FLOATS},
    {"activations", ATTR_STRINGS},     {"clip", ATTR_FLOAT},
    {"direction", ATTR_STRING},        {"hidden_size", ATTR_INT},
    {"output_sequence", ATTR_INT},     {"layout", ATTR_INT},
    {NULL, 0}};

const op_schema op_RNN[] = {
    {"", "RNN", 1, 3, 6, 0, 2, attrs, rnn_op_infer, 0},
    {"", "RNN", 7, 3, 6, 0, 2, attrs, rnn_op_infer, 0},
    {"", "RNN", 14, 3, 6, 0, 2, attrs, rnn_op_infer, 0},
    {"", "RNN", 22, 3, 6, 0, 2, attrs, rnn_op_infer, 0},
    OP_END,
};

/* Schema of LSTM: the long short-term memory layer (gates i, o, f, c; peepholes P). */
#include "ops/rnn_quant/rnn_common.h"

static onyx_status lstm_infer(infer_ctx *c) { return rnn_infer(c, RNN_CELL_LSTM); }

static const attr_spec attrs[] = {
    {"activation_alpha", ATTR_FLOATS}, {"activation_beta", ATTR_FLOATS},
    {"activations", ATTR_STRINGS},     {"clip", ATTR_FLOAT},
    {"direction", ATTR_STRING},        {"hidden_size", ATTR_INT},
    {"output_sequence", ATTR_INT},     {"layout", ATTR_INT},
    {"input_forget", ATTR_INT},        {NULL, 0}};

const op_schema op_LSTM[] = {
    {"", "LSTM", 1, 3, 8, 0, 3, attrs, lstm_infer, 0},
    {"", "LSTM", 7, 3, 8, 0, 3, attrs, lstm_infer, 0},
    {"", "LSTM", 14, 3, 8, 0, 3, attrs, lstm_infer, 0},
    {"", "LSTM", 22, 3, 8, 0, 3, attrs, lstm_infer, 0},
    OP_END,
};

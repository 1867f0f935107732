/* Schema of GRU: the gated recurrent unit layer (gates z, r, h; linear_before_reset from 3). */
#include "ops/rnn_quant/rnn_common.h"

static onyx_status gru_infer(infer_ctx *c) { return rnn_infer(c, RNN_CELL_GRU); }

static const attr_spec attrs[] = {
    {"activation_alpha", ATTR_FLOATS}, {"activation_beta", ATTR_FLOATS},
    {"activations", ATTR_STRINGS},     {"clip", ATTR_FLOAT},
    {"direction", ATTR_STRING},        {"hidden_size", ATTR_INT},
    {"output_sequence", ATTR_INT},     {"layout", ATTR_INT},
    {"linear_before_reset", ATTR_INT}, {NULL, 0}};

const op_schema op_GRU[] = {
    {"", "GRU", 1, 3, 6, 2, 2, attrs, gru_infer, 0},
    {"", "GRU", 3, 3, 6, 0, 2, attrs, gru_infer, 0},
    {"", "GRU", 7, 3, 6, 0, 2, attrs, gru_infer, 0},
    {"", "GRU", 14, 3, 6, 0, 2, attrs, gru_infer, 0},
    {"", "GRU", 22, 3, 6, 0, 2, attrs, gru_infer, 0},
    OP_END,
};

/* Schema of LSTM: the long short-term memory layer (gates i, o, f, c; peepholes P). */
#include "ops/rnn/rnn_common.h"

static onyx_status lstm_infer(infer_ctx *c) { return rnn_infer(c, RNN_CELL_LSTM); }

/* output_sequence until 7, layout from 14 */
static const attr_spec attrs_1[] = {RNN_ATTRS, {"input_forget", ATTR_INT},
                                    {"output_sequence", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_7[] = {RNN_ATTRS, {"input_forget", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_14[] = {RNN_ATTRS, {"input_forget", ATTR_INT}, {"layout", ATTR_INT},
                                     {NULL, 0}};

const op_schema op_LSTM[] = {
    {"", "LSTM", 1, 3, 8, 0, 3, attrs_1, lstm_infer, 0},
    {"", "LSTM", 7, 3, 8, 0, 3, attrs_7, lstm_infer, 0},
    {"", "LSTM", 14, 3, 8, 0, 3, attrs_14, lstm_infer, 0},
    {"", "LSTM", 22, 3, 8, 0, 3, attrs_14, lstm_infer, 0},
    OP_END,
};

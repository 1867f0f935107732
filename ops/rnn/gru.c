/* Schema of GRU: the gated recurrent unit layer (gates z, r, h; linear_before_reset from 3). */
#include "ops/rnn/rnn_common.h"

static onyx_status gru_infer(infer_ctx *c) { return rnn_infer(c, RNN_CELL_GRU); }

/* output_sequence until 7, linear_before_reset from 3, layout from 14 */
static const attr_spec attrs_1[] = {RNN_ATTRS, {"output_sequence", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_3[] = {RNN_ATTRS, {"output_sequence", ATTR_INT},
                                    {"linear_before_reset", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_7[] = {RNN_ATTRS, {"linear_before_reset", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_14[] = {RNN_ATTRS, {"linear_before_reset", ATTR_INT},
                                     {"layout", ATTR_INT}, {NULL, 0}};

const op_schema op_GRU[] = {
    {"", "GRU", 1, 3, 6, 2, 2, attrs_1, gru_infer, 0},
    {"", "GRU", 3, 3, 6, 0, 2, attrs_3, gru_infer, 0},
    {"", "GRU", 7, 3, 6, 0, 2, attrs_7, gru_infer, 0},
    {"", "GRU", 14, 3, 6, 0, 2, attrs_14, gru_infer, 0},
    {"", "GRU", 22, 3, 6, 0, 2, attrs_14, gru_infer, 0},
    OP_END,
};

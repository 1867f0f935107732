/* Attributes and type+shape inference shared by RNN, GRU and LSTM (ops/rnn/rnn.c, gru.c, lstm.c),
 * also read by their CPU kernel. */
#ifndef ONYX_OPS_RNN_COMMON_H
#define ONYX_OPS_RNN_COMMON_H

#include "ops/schema.h"

typedef enum rnn_cell { RNN_CELL_RNN, RNN_CELL_GRU, RNN_CELL_LSTM } rnn_cell;

typedef enum rnn_act_kind {
    RNN_ACT_RELU,
    RNN_ACT_TANH,
    RNN_ACT_SIGMOID,
    RNN_ACT_AFFINE,
    RNN_ACT_LEAKYRELU,
    RNN_ACT_THRESHOLDEDRELU,
    RNN_ACT_SCALEDTANH,
    RNN_ACT_HARDSIGMOID,
    RNN_ACT_ELU,
    RNN_ACT_SOFTSIGN,
    RNN_ACT_SOFTPLUS,
} rnn_act_kind;

typedef struct rnn_act {
    rnn_act_kind kind;
    float alpha, beta;
} rnn_act;

#define RNN_MAX_ACTS 3 /* per direction: f (RNN), f g (GRU), f g h (LSTM) */

typedef struct rnn_attrs {
    rnn_cell cell;
    int gates;          /* 1 (RNN), 3 (GRU: z r h), 4 (LSTM: i o f c) */
    int num_dir;        /* 1 or 2 */
    bool reverse;       /* num_dir 1 and direction "reverse" */
    int64_t hidden;     /* hidden_size, -1 when the attribute is absent */
    int layout;         /* 0: [seq, batch, ...]; 1: [batch, seq, ...] */
    bool has_clip;
    float clip;
    bool linear_before_reset, input_forget;
    int acts_per_dir;
    rnn_act act[2][RNN_MAX_ACTS]; /* [direction][f, g, h] */
} rnn_attrs;

/* Reads and checks the node's attributes. */
onyx_status rnn_parse_attrs(const graph_node *n, rnn_cell cell, rnn_attrs *out);

/* infer() of the three ops: checks X, W, R, B, sequence_lens, initial_h, initial_c, P and gives
 * Y, Y_h (and Y_c). */
onyx_status rnn_infer(infer_ctx *c, rnn_cell cell);

/* The attributes every version of RNN, GRU and LSTM has. */
#define RNN_ATTRS                                                                                  \
    {"activation_alpha", ATTR_FLOATS}, {"activation_beta", ATTR_FLOATS},                          \
        {"activations", ATTR_STRINGS}, {"clip", ATTR_FLOAT}, {"direction", ATTR_STRING},           \
        {"hidden_size", ATTR_INT}

#endif

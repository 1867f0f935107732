/* Attributes and type+shape inference shared by RNN, GRU and LSTM. */
#include "ops/rnn/rnn_common.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

static const struct {
    const char *name;
    rnn_act_kind kind;
    int params;          /* alpha (1) or alpha and beta (2) taken from activation_alpha/beta */
    float alpha, beta;   /* defaults, as the standalone ONNX ops (Affine/ScaledTanh: identity) */
} act_table[] = {
    {"Relu", RNN_ACT_RELU, 0, 0, 0},
    {"Tanh", RNN_ACT_TANH, 0, 0, 0},
    {"Sigmoid", RNN_ACT_SIGMOID, 0, 0, 0},
    {"Affine", RNN_ACT_AFFINE, 2, 1.0f, 0.0f},
    {"LeakyRelu", RNN_ACT_LEAKYRELU, 1, 0.01f, 0},
    {"ThresholdedRelu", RNN_ACT_THRESHOLDEDRELU, 1, 1.0f, 0},
    {"ScaledTanh", RNN_ACT_SCALEDTANH, 2, 1.0f, 1.0f},
    {"HardSigmoid", RNN_ACT_HARDSIGMOID, 2, 0.2f, 0.5f},
    {"Elu", RNN_ACT_ELU, 1, 1.0f, 0},
    {"Softsign", RNN_ACT_SOFTSIGN, 0, 0, 0},
    {"Softplus", RNN_ACT_SOFTPLUS, 0, 0, 0},
};

onyx_status rnn_parse_attrs(const graph_node *n, rnn_cell cell, rnn_attrs *out) {
    rnn_attrs a = {.cell = cell};
    a.gates = cell == RNN_CELL_RNN ? 1 : cell == RNN_CELL_GRU ? 3 : 4;
    a.acts_per_dir = cell == RNN_CELL_RNN ? 1 : cell == RNN_CELL_GRU ? 2 : 3;
    const char *dir = attr_string(n, "direction", "forward");
    /* GRU-1's schema spells its default "foward" */
    if (!strcmp(dir, "forward") || !strcmp(dir, "foward")) a.num_dir = 1;
    else if (!strcmp(dir, "reverse")) a.num_dir = 1, a.reverse = true;
    else if (!strcmp(dir, "bidirectional")) a.num_dir = 2;
    else
        return onyx_error(ONYX_ERR_INVALID_MODEL, "direction is '%s', expected forward, reverse "
                          "or bidirectional", dir);
    a.hidden = attr_int(n, "hidden_size", -1);
    /* bounded so that gates * hidden_size and the other size products stay in int64 */
    if (node_attr(n, "hidden_size") && (a.hidden <= 0 || a.hidden > INT32_MAX))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "hidden_size is %lld, expected 1..%d",
                          (long long)a.hidden, INT32_MAX);
    int64_t layout = attr_int(n, "layout", 0);
    if (layout != 0 && layout != 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "layout is %lld, expected 0 or 1",
                          (long long)layout);
    a.layout = (int)layout;
    if (node_attr(n, "clip")) {
        a.has_clip = true;
        a.clip = attr_float(n, "clip", 0);
        if (!(a.clip >= 0))
            return onyx_error(ONYX_ERR_INVALID_MODEL, "clip is %g, expected >= 0", a.clip);
    }
    a.linear_before_reset = attr_int(n, "linear_before_reset", 0) != 0;
    a.input_forget = attr_int(n, "input_forget", 0) != 0;

    static const rnn_act_kind dflt[3][RNN_MAX_ACTS] = {
        {RNN_ACT_TANH},
        {RNN_ACT_SIGMOID, RNN_ACT_TANH},
        {RNN_ACT_SIGMOID, RNN_ACT_TANH, RNN_ACT_TANH},
    };
    const graph_attr *acts = node_attr(n, "activations");
    size_t na = acts && acts->type == ATTR_STRINGS ? acts->n : 0;
    size_t per = (size_t)a.acts_per_dir;
    if (na && na != per * (size_t)a.num_dir && na != per)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "activations has %zu entries, expected %zu",
                          na, per * (size_t)a.num_dir);
    const float *alphas = NULL, *betas = NULL;
    size_t nal = attr_floats(n, "activation_alpha", &alphas);
    size_t nbe = attr_floats(n, "activation_beta", &betas);
    size_t ial = 0, ibe = 0;
    for (int d = 0; d < a.num_dir; d++)
        for (size_t k = 0; k < per; k++) {
            rnn_act *x = &a.act[d][k];
            if (!na) {
                x->kind = dflt[cell][k];
                continue;
            }
            const char *name = acts->strings[na == per ? k : d * per + k];
            size_t t = 0, nt = sizeof act_table / sizeof act_table[0];
            while (t < nt && strcasecmp(name, act_table[t].name)) t++;
            if (t == nt)
                return onyx_error(ONYX_ERR_UNSUPPORTED, "activation '%s' is not one onyx knows",
                                  name);
            x->kind = act_table[t].kind;
            x->alpha = act_table[t].alpha;
            x->beta = act_table[t].beta;
            /* alphas and betas are consumed in order by the activations that take them */
            if (act_table[t].params >= 1 && ial < nal) x->alpha = alphas[ial++];
            if (act_table[t].params >= 2 && ibe < nbe) x->beta = betas[ibe++];
        }
    *out = a;
    return ONYX_OK;
}

/* Checks that input i, when present with known rank, has `rank` and the given dims (-1: any);
 * what = its name for messages. */
static onyx_status check_input(infer_ctx *c, int i, const char *what, onyx_dtype dt, int rank,
                               const int64_t *want) {
    if (i >= c->n_in || !c->in[i]) return ONYX_OK;
    const type_info *t = c->in[i];
    if (t->kind != ONYX_VALUE_TENSOR)
        return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) is not a tensor", i, what);
    if (t->dtype != dt)
        return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) has type %s, expected %s", i, what,
                          onyx_dtype_name(t->dtype), onyx_dtype_name(dt));
    if (t->rank < 0) return ONYX_OK;
    if (t->rank != rank)
        return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) has rank %d, expected %d", i, what,
                          t->rank, rank);
    for (int d = 0; d < rank; d++)
        if (want[d] >= 0 && t->dims[d] >= 0 && t->dims[d] != want[d])
            return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) dim %d is %lld, expected %lld", i,
                              what, d, (long long)t->dims[d], (long long)want[d]);
    return ONYX_OK;
}

onyx_status rnn_infer(infer_ctx *c, rnn_cell cell) {
    rnn_attrs a;
    TRY(rnn_parse_attrs(c->node, cell, &a));
    int v = c->node->version;
    dtype_mask m = DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16) |
                   (v >= 22 ? DT_BIT(ONYX_BFLOAT16) : 0);
    TRY(infer_dtype_in(c, 0, m));
    TRY(infer_need_tensor(c, 1));
    TRY(infer_need_tensor(c, 2));
    const type_info *x = c->in[0], *w = c->in[1], *r = c->in[2];
    onyx_dtype dt = x->dtype;
    int64_t nd = a.num_dir, g = a.gates, H = a.hidden;
    int64_t seq = -1, batch = -1, in = -1;
    if (x->rank >= 0) {
        if (x->rank != 3)
            return onyx_error(ONYX_ERR_SHAPE, "input 0 (X) has rank %d, expected 3", x->rank);
        seq = x->dims[a.layout ? 1 : 0];
        batch = x->dims[a.layout ? 0 : 1];
        in = x->dims[2];
    }
    if (H < 0 && r->rank == 3) H = r->dims[2];
    if (H < 0 && w->rank == 3 && w->dims[1] >= 0) {
        if (w->dims[1] % g)
            return onyx_error(ONYX_ERR_SHAPE, "input 1 (W) dim 1 is %lld, not a multiple of %lld",
                              (long long)w->dims[1], (long long)g);
        H = w->dims[1] / g;
    }
    if (H > INT32_MAX)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "hidden size %lld, at most %d supported",
                          (long long)H, INT32_MAX);
    int64_t gh = H >= 0 ? g * H : -1;
    int64_t wd[3] = {nd, gh, in}, rd[3] = {nd, gh, H}, bd[2] = {nd, gh >= 0 ? 2 * gh : -1};
    TRY(check_input(c, 1, "W", dt, 3, wd));
    TRY(check_input(c, 2, "R", dt, 3, rd));
    TRY(check_input(c, 3, "B", dt, 2, bd));
    int64_t sd[1] = {batch};
    TRY(check_input(c, 4, "sequence_lens", ONYX_INT32, 1, sd));
    int64_t hd[3] = {nd, batch, H};
    if (a.layout) hd[0] = batch, hd[1] = nd;
    TRY(check_input(c, 5, "initial_h", dt, 3, hd));
    if (cell == RNN_CELL_LSTM) {
        TRY(check_input(c, 6, "initial_c", dt, 3, hd));
        int64_t pd[2] = {nd, H >= 0 ? 3 * H : -1};
        TRY(check_input(c, 7, "P", dt, 2, pd));
    }
    int64_t yd[4] = {seq, nd, batch, H};
    if (a.layout) yd[0] = batch, yd[1] = seq, yd[2] = nd;
    if (c->n_out > 0) type_set_tensor(&c->out[0], dt, 4, yd);
    for (int o = 1; o < c->n_out && o < (cell == RNN_CELL_LSTM ? 3 : 2); o++)
        type_set_tensor(&c->out[o], dt, 3, hd);
    return ONYX_OK;
}

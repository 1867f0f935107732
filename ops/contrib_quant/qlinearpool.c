/* Schemas of com.microsoft QLinearGlobalAveragePool and QLinearAveragePool: average pools of a
 * quantized NCHW (or, with channels_last, NHWC) tensor requantized to Y's parameters. The windowed
 * pool hands its kernels the window from the plan (core/op_params.h), in NCHW order whatever the
 * layout. */
#include "ops/spatial.h"
#include "ops/contrib_quant/cq_infer.h"

static onyx_status qpool_params(infer_ctx *c) {
    TRY(cq_infer_quantized(c, 0, ONYX_UNDEFINED, "X"));
    onyx_dtype t = c->in[0]->dtype;
    TRY(cq_infer_scale(c, 1, "x_scale"));
    TRY(cq_infer_zero_point(c, 2, t, true, "x_zero_point"));
    TRY(cq_infer_scale(c, 3, "y_scale"));
    TRY(cq_infer_zero_point(c, 4, t, true, "y_zero_point"));
    int64_t cl = attr_int(c->node, "channels_last", 0);
    if (cl != 0 && cl != 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute channels_last is %lld, expected 0 "
                          "or 1", (long long)cl);
    int rank = c->in[0]->rank;
    if (rank >= 0 && rank < 3)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 (X) has rank %d, expected at least 3 (N, C "
                          "and spatial dims)", rank);
    return ONYX_OK;
}

static onyx_status qgap_infer(infer_ctx *c) {
    TRY(qpool_params(c));
    const type_info *x = c->in[0];
    if (x->rank < 0) {
        type_set_tensor(&c->out[0], x->dtype, -1, NULL);
        return ONYX_OK;
    }
    bool cl = attr_int(c->node, "channels_last", 0) != 0;
    int64_t dims[ONYX_MAX_RANK];
    for (int d = 0; d < x->rank; d++) dims[d] = 1;
    dims[0] = x->dims[0];
    if (cl) dims[x->rank - 1] = x->dims[x->rank - 1];
    else dims[1] = x->dims[1];
    type_set_tensor(&c->out[0], x->dtype, x->rank, dims);
    return ONYX_OK;
}

static onyx_status qavg_infer(infer_ctx *c) {
    TRY(qpool_params(c));
    const graph_node *n = c->node;
    int64_t cip = attr_int(n, "count_include_pad", 0);
    if (cip != 0 && cip != 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute count_include_pad is %lld, expected "
                          "0 or 1", (long long)cip);
    const type_info *x = c->in[0];
    int rank = x->rank;
    if (rank < 0) {
        const int64_t *k;
        size_t nk = attr_ints(n, "kernel_shape", &k);
        if (nk < 1 || nk > SPATIAL_MAX_DIMS)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute kernel_shape has %zu values, "
                              "expected 1..%d", nk, SPATIAL_MAX_DIMS);
        rank = (int)nk + 2;
        int64_t dims[ONYX_MAX_RANK];
        for (int d = 0; d < rank; d++) dims[d] = -1;
        type_set_tensor(&c->out[0], x->dtype, rank, dims);
        return ONYX_OK;
    }
    int nd = rank - 2;
    if (nd > SPATIAL_MAX_DIMS)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 (X) has %d spatial dims, supported "
                          "1..%d", nd, SPATIAL_MAX_DIMS);
    spatial_params p;
    TRY(spatial_parse(n, nd, NULL, &p));
    for (int i = 0; i < nd; i++)
        if (p.dilation[i] != 1)
            return onyx_error(ONYX_ERR_UNSUPPORTED, "attribute dilations is not all 1: "
                              "QLinearAveragePool has no dilations");
    bool cl = attr_int(n, "channels_last", 0) != 0;
    int first = cl ? 1 : 2; /* the first spatial dim */
    int64_t dims[ONYX_MAX_RANK];
    dims[0] = x->dims[0];
    if (cl) dims[rank - 1] = x->dims[rank - 1];
    else dims[1] = x->dims[1];
    TRY(spatial_resolve(&p, x->dims + first, dims + first));
    type_set_tensor(&c->out[0], x->dtype, rank, dims);
    int64_t nchw[ONYX_MAX_RANK] = {x->dims[0], cl ? x->dims[rank - 1] : x->dims[1]};
    for (int i = 0; i < nd; i++) nchw[2 + i] = x->dims[first + i];
    geom_window w;
    spatial_pool_window(&p, nchw, dims + first, &w);
    infer_set_window(c, &w);
    return ONYX_OK;
}

static const attr_spec gap_attrs[] = {{"channels_last", ATTR_INT}, {NULL, 0}};
static const attr_spec avg_attrs[] = {
    {"kernel_shape", ATTR_INTS}, {"strides", ATTR_INTS},       {"pads", ATTR_INTS},
    {"auto_pad", ATTR_STRING},   {"count_include_pad", ATTR_INT}, {"ceil_mode", ATTR_INT},
    {"channels_last", ATTR_INT}, {NULL, 0}};

const op_schema op_QLinearGlobalAveragePool[] = {
    {"com.microsoft", "QLinearGlobalAveragePool", 1, 4, 5, 1, 1, gap_attrs, qgap_infer, 0},
    OP_END,
};

const op_schema op_QLinearAveragePool[] = {
    {"com.microsoft", "QLinearAveragePool", 1, 4, 5, 1, 1, avg_attrs, qavg_infer, OP_GEOMETRY},
    OP_END,
};

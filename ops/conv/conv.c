/* Schema of Conv, and the convolution geometry (attribute checks, channels and groups, pads and
 * output sizes by geometry/window.h's rules) that ConvTranspose, ConvInteger and QLinearConv
 * share (ops/conv/conv.h): their inference resolves it once per plan into the window every
 * device's conv kernel gets (core/op_params.h). Written here rather than on the pooling helpers
 * because a convolution also checks W against X. */
#include "ops/conv/conv.h"

#include <string.h>

#include "geometry/window.h"

static onyx_status parse_auto_pad(const graph_node *node, geom_auto_pad *out) {
    const char *s = attr_string(node, "auto_pad", "NOTSET");
    if (!geom_auto_pad_parse(s, out))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "auto_pad is '%s', expected NOTSET, SAME_UPPER, "
                          "SAME_LOWER or VALID", s);
    return ONYX_OK;
}

/* Reads an INTS attribute of `want` entries (each >= lo) into out, or fills `dflt` when absent. */
static onyx_status spatial_ints(const graph_node *node, const char *name, size_t want, int64_t lo,
                                int64_t dflt, int64_t *out) {
    const int64_t *v = NULL;
    size_t n = attr_ints(node, name, &v);
    if (!v) {
        for (size_t i = 0; i < want; i++) out[i] = dflt;
        return ONYX_OK;
    }
    if (n != want)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "%s has %zu values, expected %zu", name, n, want);
    for (size_t i = 0; i < n; i++) {
        if (v[i] < lo)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "%s[%zu] is %lld, expected >= %lld", name, i,
                              (long long)v[i], (long long)lo);
        out[i] = v[i];
    }
    return ONYX_OK;
}

/* Dims past this make products overflow long before any real model gets there. */
#define CONV_DIM_MAX GEOM_WINDOW_DIM_MAX

onyx_status conv_geometry(const graph_node *node, bool transpose, int x_rank, const int64_t *x_dims,
                          int w_rank, const int64_t *w_dims, geom_window *g) {
    memset(g, 0, sizeof *g);
    g->transposed = transpose;
    int rank = x_rank >= 0 ? x_rank : w_rank;
    if (rank < 0) return onyx_error(ONYX_ERR_SHAPE, "ranks of X and W are unknown");
    if (rank < 3)
        return onyx_error(ONYX_ERR_SHAPE, "X has rank %d, expected >= 3 ([N, C, spatial...])", rank);
    if (rank > ONYX_MAX_RANK) return onyx_error(ONYX_ERR_SHAPE, "rank %d is too large", rank);
    if (x_rank >= 0 && w_rank >= 0 && x_rank != w_rank)
        return onyx_error(ONYX_ERR_SHAPE, "W has rank %d, expected %d (the rank of X)", w_rank,
                          x_rank);
    int64_t xd[ONYX_MAX_RANK], wd[ONYX_MAX_RANK];
    for (int i = 0; i < rank; i++) {
        xd[i] = x_rank >= 0 ? x_dims[i] : -1;
        wd[i] = w_rank >= 0 ? w_dims[i] : -1;
        if (xd[i] > CONV_DIM_MAX || wd[i] > CONV_DIM_MAX)
            return onyx_error(ONYX_ERR_SHAPE, "dim %d of X or W is too large", i);
    }
    int nsp = rank - 2;
    size_t un = (size_t)nsp;
    g->nsp = nsp;
    g->group = attr_int(node, "group", 1);
    if (g->group < 1 || g->group > CONV_DIM_MAX)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "group is %lld, expected >= 1",
                          (long long)g->group);
    geom_auto_pad ap = GEOM_PAD_NOTSET;
    TRY(parse_auto_pad(node, &ap));
    TRY(spatial_ints(node, "strides", un, 1, 1, g->stride));
    TRY(spatial_ints(node, "dilations", un, 1, 1, g->dil));
    int64_t pads[2 * GEOM_WINDOW_MAX_SPATIAL];
    TRY(spatial_ints(node, "pads", 2 * un, 0, 0, pads));
    for (int i = 0; i < nsp; i++)
        if (g->stride[i] > CONV_DIM_MAX || g->dil[i] > CONV_DIM_MAX || pads[i] > CONV_DIM_MAX ||
            pads[nsp + i] > CONV_DIM_MAX)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "strides, dilations or pads too large");
    const int64_t *ks = NULL;
    size_t nks = attr_ints(node, "kernel_shape", &ks);
    if (ks && nks != un)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "kernel_shape has %zu values, expected %d", nks,
                          nsp);
    for (int i = 0; i < nsp; i++) {
        int64_t k = wd[2 + i];
        if (ks) {
            if (ks[i] < 1)
                return onyx_error(ONYX_ERR_INVALID_MODEL, "kernel_shape[%d] is %lld, expected >= 1",
                                  i, (long long)ks[i]);
            if (k >= 0 && ks[i] != k)
                return onyx_error(ONYX_ERR_SHAPE, "kernel_shape[%d] is %lld but W has %lld there",
                                  i, (long long)ks[i], (long long)k);
            k = ks[i];
        }
        if (k == 0) return onyx_error(ONYX_ERR_SHAPE, "W has a zero kernel dim %d", 2 + i);
        /* the dilated kernel (k - 1) * dilation + 1 must stay in range (found by fuzzing: a
         * kernel_shape of 2^63 - 2 overflowed a transposed conv's output size) */
        if (k > CONV_DIM_MAX || (k > 1 && k - 1 > CONV_DIM_MAX / g->dil[i]))
            return onyx_error(ONYX_ERR_INVALID_MODEL, "kernel dim %d of %lld with dilation %lld is "
                              "too large", i, (long long)k, (long long)g->dil[i]);
        g->k[i] = k;
    }

    g->n = xd[0];
    g->c = xd[1];
    if (!transpose) {
        g->m = wd[0];
        if (g->m >= 0 && g->m % g->group != 0)
            return onyx_error(ONYX_ERR_SHAPE, "W has %lld output channels, not a multiple of "
                              "group %lld", (long long)g->m, (long long)g->group);
        if (g->c >= 0 && g->c % g->group != 0)
            return onyx_error(ONYX_ERR_SHAPE, "X has %lld channels, not a multiple of group %lld",
                              (long long)g->c, (long long)g->group);
        if (g->c >= 0 && wd[1] >= 0 && wd[1] * g->group != g->c)
            return onyx_error(ONYX_ERR_SHAPE, "W has %lld input channels per group, expected "
                              "%lld (X's %lld channels / group %lld)", (long long)wd[1],
                              (long long)(g->c / g->group), (long long)g->c, (long long)g->group);
    } else {
        g->m = wd[1] >= 0 ? wd[1] * g->group : -1;
        if (g->c >= 0 && wd[0] >= 0 && wd[0] != g->c)
            return onyx_error(ONYX_ERR_SHAPE, "W has %lld input channels, expected %lld (X's "
                              "channels)", (long long)wd[0], (long long)g->c);
        int64_t c = g->c >= 0 ? g->c : wd[0];
        if (c >= 0 && c % g->group != 0)
            return onyx_error(ONYX_ERR_SHAPE, "X has %lld channels, not a multiple of group %lld",
                              (long long)c, (long long)g->group);
    }

    geom_msg m;
    if (!transpose) {
        for (int i = 0; i < nsp; i++) {
            g->in[i] = xd[2 + i];
            g->pad_b[i] = pads[i];
            g->pad_e[i] = pads[nsp + i];
            if (geom_window_out(g->in[i], g->k[i], g->stride[i], g->dil[i], ap, false,
                                &g->pad_b[i], &g->pad_e[i], &g->out[i], &m) != ONYX_OK)
                return onyx_error(ONYX_ERR_SHAPE, "spatial dim %d: %s", i, m.text);
        }
        return ONYX_OK;
    }

    TRY(spatial_ints(node, "output_padding", un, 0, 0, g->out_pad));
    const int64_t *os = NULL;
    size_t nos = attr_ints(node, "output_shape", &os);
    if (os && nos != un && nos != un + 2)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "output_shape has %zu values, expected %d", nos,
                          nsp);
    if (os && nos == un + 2) os += 2;
    for (int i = 0; i < nsp; i++) {
        g->in[i] = xd[2 + i];
        if (g->out_pad[i] > CONV_DIM_MAX || (os && (os[i] < 1 || os[i] > CONV_DIM_MAX)))
            return onyx_error(ONYX_ERR_INVALID_MODEL, "output_padding or output_shape[%d] out of "
                              "range", i);
        g->pad_b[i] = pads[i];
        g->pad_e[i] = pads[nsp + i];
        if (geom_transposed_window_out(g->in[i], g->k[i], g->stride[i], g->dil[i], g->out_pad[i],
                                       ap, os ? os[i] : -1, &g->pad_b[i], &g->pad_e[i],
                                       &g->out[i], &m) != ONYX_OK)
            return onyx_error(ONYX_ERR_SHAPE, "spatial dim %d: %s", i, m.text);
    }
    return ONYX_OK;
}

#define CONV_TYPES (DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE))

onyx_status conv_infer_float(infer_ctx *c, bool transpose, int bias_index) {
    dtype_mask m = CONV_TYPES | (c->node->version >= 22 ? DT_BIT(ONYX_BFLOAT16) : 0);
    TRY(infer_need_tensor(c, 0));
    TRY(infer_need_tensor(c, 1));
    TRY(infer_dtype_in(c, 0, m));
    bool has_b = c->n_in > bias_index && c->in[bias_index];
    TRY(infer_same_dtypes(c, 0, 2));
    if (has_b) {
        TRY(infer_need_tensor(c, bias_index));
        if (c->in[bias_index]->dtype != c->in[0]->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "B is %s, expected %s like X",
                              onyx_dtype_name(c->in[bias_index]->dtype),
                              onyx_dtype_name(c->in[0]->dtype));
    }
    const type_info *x = c->in[0], *w = c->in[1];
    geom_window g;
    TRY(conv_geometry(c->node, transpose, x->rank, x->dims, w->rank, w->dims, &g));
    if (has_b) {
        const type_info *b = c->in[bias_index];
        if (b->rank >= 0 && b->rank != 1)
            return onyx_error(ONYX_ERR_SHAPE, "B has rank %d, expected 1", b->rank);
        if (b->rank == 1 && b->dims[0] >= 0 && g.m >= 0 && b->dims[0] != g.m)
            return onyx_error(ONYX_ERR_SHAPE, "B has %lld values, expected %lld (output channels)",
                              (long long)b->dims[0], (long long)g.m);
    }
    int64_t dims[ONYX_MAX_RANK];
    geom_window_out_dims(&g, dims);
    type_set_tensor(&c->out[0], x->dtype, g.nsp + 2, dims);
    infer_set_window(c, &g);
    return ONYX_OK;
}

static onyx_status conv_infer(infer_ctx *c) { return conv_infer_float(c, false, 2); }

static const attr_spec conv_attrs[] = {
    {"auto_pad", ATTR_STRING}, {"dilations", ATTR_INTS}, {"group", ATTR_INT},
    {"kernel_shape", ATTR_INTS}, {"pads", ATTR_INTS}, {"strides", ATTR_INTS}, {NULL, 0}};

const op_schema op_Conv[] = {
    {"", "Conv", 1, 2, 3, 1, 1, conv_attrs, conv_infer, OP_GEOMETRY},
    {"", "Conv", 11, 2, 3, 1, 1, conv_attrs, conv_infer, OP_GEOMETRY},
    {"", "Conv", 22, 2, 3, 1, 1, conv_attrs, conv_infer, OP_GEOMETRY},
    OP_END,
};

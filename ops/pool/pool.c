/* Schemas of the pooling ops MaxPool, AveragePool, LpPool and their Global* forms. They share one
 * file because they share one inference (window attributes through spatial.h, output [N, C,
 * pooled spatial dims], the window handed to the kernels) and differ only in their attribute
 * lists and type sets. */
#include <string.h>

#include "ops/spatial.h"

#define POOL_T (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16))
#define POOL_T22 (POOL_T | DT_BIT(ONYX_BFLOAT16))
#define MAXPOOL_T12 (POOL_T | DT_BIT(ONYX_INT8) | DT_BIT(ONYX_UINT8))

static dtype_mask pool_types(const graph_node *n) {
    if (!strcmp(n->op_type, "MaxPool") && n->version >= 12)
        return MAXPOOL_T12 | (n->version >= 22 ? DT_BIT(ONYX_BFLOAT16) : 0);
    return n->version >= 22 ? POOL_T22 : POOL_T;
}

/* Checks the attributes that only some pools have; the window ones go through spatial_parse. */
static onyx_status pool_check_attrs(const graph_node *n) {
    if (!strcmp(n->op_type, "MaxPool")) {
        int64_t so = attr_int(n, "storage_order", 0);
        if (so != 0 && so != 1)
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "attribute storage_order is %lld, expected 0 or 1", (long long)so);
    } else if (!strcmp(n->op_type, "AveragePool")) {
        int64_t cip = attr_int(n, "count_include_pad", 0);
        if (cip != 0 && cip != 1)
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "attribute count_include_pad is %lld, expected 0 or 1",
                              (long long)cip);
    } else if (strstr(n->op_type, "LpPool")) {
        /* version 1 has a float p; later versions an int */
        const graph_attr *a = node_attr(n, "p");
        double p = !a ? 2.0 : a->type == ATTR_FLOAT ? (double)a->f : (double)a->i;
        if (!(p > 0) || p > 1e6)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute p is %g, expected > 0", p);
    }
    return ONYX_OK;
}

static onyx_status pool_infer(infer_ctx *c) {
    const graph_node *n = c->node;
    TRY(infer_dtype_in(c, 0, pool_types(n)));
    TRY(pool_check_attrs(n));
    const type_info *x = c->in[0];
    int rank = x->kind == ONYX_VALUE_TENSOR ? x->rank : -1;
    bool global = !strncmp(n->op_type, "Global", 6);
    int64_t dims[ONYX_MAX_RANK];
    if (rank >= 0 && rank < 3)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected at least 3 "
                          "(N, C, spatial dims)", rank);
    if (rank >= 0) {
        dims[0] = x->dims[0];
        dims[1] = x->dims[1];
        if (global) {
            for (int i = 2; i < rank; i++) dims[i] = 1;
        } else {
            if (rank - 2 > SPATIAL_MAX_DIMS)
                return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has %d spatial dims, "
                                  "supported 1..%d", rank - 2, SPATIAL_MAX_DIMS);
            spatial_params p;
            TRY(spatial_parse(n, rank - 2, NULL, &p));
            TRY(spatial_resolve(&p, x->dims + 2, dims + 2));
            geom_window w;
            spatial_pool_window(&p, x->dims, dims + 2, &w);
            infer_set_window(c, &w);
        }
    } else if (!global) {
        /* the attributes alone tell the spatial rank */
        const int64_t *k;
        size_t nk = attr_ints(n, "kernel_shape", &k);
        if (nk >= 1 && nk <= SPATIAL_MAX_DIMS) {
            spatial_params p;
            TRY(spatial_parse(n, (int)nk, NULL, &p));
            rank = (int)nk + 2;
            for (int i = 0; i < rank; i++) dims[i] = -1;
        } else {
            return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute kernel_shape has %zu values, "
                              "expected 1..%d", nk, SPATIAL_MAX_DIMS);
        }
    }
    type_set_tensor(&c->out[0], x->dtype, rank, rank >= 0 ? dims : NULL);
    if (c->n_out > 1) {
        if (strcmp(n->op_type, "MaxPool") != 0 || n->version < 8)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "%d outputs, expected 1", c->n_out);
        type_set_tensor(&c->out[1], ONYX_INT64, rank, rank >= 0 ? dims : NULL);
    }
    return ONYX_OK;
}

#define WINDOW_ATTRS {"kernel_shape", ATTR_INTS}, {"strides", ATTR_INTS}, {"pads", ATTR_INTS}, \
                     {"auto_pad", ATTR_STRING}

/* storage_order from MaxPool-8; ceil_mode and dilations from MaxPool-10 and LpPool-18;
 * count_include_pad from AveragePool-7, ceil_mode from 10, dilations from 19 */
static const attr_spec max1_attrs[] = {WINDOW_ATTRS, {NULL, 0}};
static const attr_spec max8_attrs[] = {WINDOW_ATTRS, {"storage_order", ATTR_INT}, {NULL, 0}};
static const attr_spec max_attrs[] = {WINDOW_ATTRS, {"storage_order", ATTR_INT},
                                      {"dilations", ATTR_INTS}, {"ceil_mode", ATTR_INT},
                                      {NULL, 0}};
static const attr_spec avg1_attrs[] = {WINDOW_ATTRS, {NULL, 0}};
static const attr_spec avg7_attrs[] = {WINDOW_ATTRS, {"count_include_pad", ATTR_INT}, {NULL, 0}};
static const attr_spec avg10_attrs[] = {WINDOW_ATTRS, {"count_include_pad", ATTR_INT},
                                        {"ceil_mode", ATTR_INT}, {NULL, 0}};
static const attr_spec avg_attrs[] = {WINDOW_ATTRS, {"count_include_pad", ATTR_INT},
                                      {"dilations", ATTR_INTS}, {"ceil_mode", ATTR_INT},
                                      {NULL, 0}};
static const attr_spec lp1_attrs[] = {WINDOW_ATTRS, {"p", ATTR_FLOAT}, {NULL, 0}};
static const attr_spec lp2_attrs[] = {WINDOW_ATTRS, {"p", ATTR_INT}, {NULL, 0}};
static const attr_spec lp_attrs[] = {WINDOW_ATTRS, {"p", ATTR_INT}, {"dilations", ATTR_INTS},
                                     {"ceil_mode", ATTR_INT}, {NULL, 0}};
static const attr_spec glp1_attrs[] = {{"p", ATTR_FLOAT}, {NULL, 0}};
static const attr_spec glp_attrs[] = {{"p", ATTR_INT}, {NULL, 0}};

/* the windowed pools hand their kernels the window; the global ones have none */
#define POOL(name, v, nout, attrs) {"", name, v, 1, 1, 1, nout, attrs, pool_infer, OP_GEOMETRY}
#define GLOBAL_POOL(name, v, attrs) {"", name, v, 1, 1, 1, 1, attrs, pool_infer, 0}

const op_schema op_MaxPool[] = {
    POOL("MaxPool", 1, 1, max1_attrs), POOL("MaxPool", 8, 2, max8_attrs),
    POOL("MaxPool", 10, 2, max_attrs), POOL("MaxPool", 11, 2, max_attrs),
    POOL("MaxPool", 12, 2, max_attrs), POOL("MaxPool", 22, 2, max_attrs),
    OP_END,
};

const op_schema op_AveragePool[] = {
    POOL("AveragePool", 1, 1, avg1_attrs),  POOL("AveragePool", 7, 1, avg7_attrs),
    POOL("AveragePool", 10, 1, avg10_attrs), POOL("AveragePool", 11, 1, avg10_attrs),
    POOL("AveragePool", 19, 1, avg_attrs), POOL("AveragePool", 22, 1, avg_attrs),
    OP_END,
};

const op_schema op_LpPool[] = {
    POOL("LpPool", 1, 1, lp1_attrs), POOL("LpPool", 2, 1, lp2_attrs),
    POOL("LpPool", 11, 1, lp2_attrs), POOL("LpPool", 18, 1, lp_attrs),
    POOL("LpPool", 22, 1, lp_attrs), OP_END,
};

const op_schema op_GlobalAveragePool[] = {
    GLOBAL_POOL("GlobalAveragePool", 1, NULL), GLOBAL_POOL("GlobalAveragePool", 22, NULL), OP_END,
};

const op_schema op_GlobalMaxPool[] = {
    GLOBAL_POOL("GlobalMaxPool", 1, NULL), GLOBAL_POOL("GlobalMaxPool", 22, NULL), OP_END,
};

const op_schema op_GlobalLpPool[] = {
    GLOBAL_POOL("GlobalLpPool", 1, glp1_attrs), GLOBAL_POOL("GlobalLpPool", 2, glp_attrs),
    GLOBAL_POOL("GlobalLpPool", 22, glp_attrs), OP_END,
};

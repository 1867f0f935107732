/* Schema of GridSample: X [N, C, D1..Dr] sampled at grid [N, O1..Or, r] gives [N, C, O1..Or].
 * v16 is 2-D only with modes bilinear/nearest/bicubic; v20 adds N-d and renames them
 * linear/cubic; v22 adds bfloat16. */
#include "ops/schema.h"

#include <string.h>

static onyx_status gridsample_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    TRY(infer_need_tensor(c, 1));
    TRY(infer_dtype_in(c, 1, DT_FLOATS));
    const graph_node *n = c->node;
    const char *mode = attr_string(n, "mode", n->version < 20 ? "bilinear" : "linear");
    bool ok = strcmp(mode, "nearest") == 0 ||
              (n->version < 20 ? strcmp(mode, "bilinear") == 0 || strcmp(mode, "bicubic") == 0
                               : strcmp(mode, "linear") == 0 || strcmp(mode, "cubic") == 0);
    if (!ok)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "mode '%s' is not supported by GridSample-%d",
                          mode, n->version);
    const char *pad = attr_string(n, "padding_mode", "zeros");
    if (strcmp(pad, "zeros") && strcmp(pad, "border") && strcmp(pad, "reflection"))
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "padding_mode '%s' is not one of zeros, border, reflection", pad);
    const type_info *x = c->in[0], *g = c->in[1];
    if (x->rank < 0 || g->rank < 0) {
        int r = x->rank >= 0 ? x->rank : g->rank;
        type_set_tensor(&c->out[0], x->dtype, r, NULL);
        return ONYX_OK;
    }
    if (x->rank < 3 || (n->version < 20 && x->rank != 4))
        return onyx_error(ONYX_ERR_SHAPE, "X has rank %d, expected %s", x->rank,
                          n->version < 20 ? "4" : "at least 3");
    if (g->rank != x->rank)
        return onyx_error(ONYX_ERR_SHAPE, "grid has rank %d, expected %d like X", g->rank,
                          x->rank);
    int r = x->rank - 2;
    if (g->dims[g->rank - 1] >= 0 && g->dims[g->rank - 1] != r)
        return onyx_error(ONYX_ERR_SHAPE, "grid's last dim is %lld, expected %d (spatial dims of X)",
                          (long long)g->dims[g->rank - 1], r);
    if (x->dims[0] >= 0 && g->dims[0] >= 0 && x->dims[0] != g->dims[0])
        return onyx_error(ONYX_ERR_SHAPE, "grid has batch %lld, X has %lld",
                          (long long)g->dims[0], (long long)x->dims[0]);
    int64_t dims[ONYX_MAX_RANK];
    dims[0] = x->dims[0] >= 0 ? x->dims[0] : g->dims[0];
    dims[1] = x->dims[1];
    for (int i = 0; i < r; i++) dims[2 + i] = g->dims[1 + i];
    type_set_tensor(&c->out[0], x->dtype, x->rank, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {
    {"align_corners", ATTR_INT}, {"mode", ATTR_STRING}, {"padding_mode", ATTR_STRING}, {NULL, 0}};

const op_schema op_GridSample[] = {{"", "GridSample", 16, 2, 2, 1, 1, attrs, gridsample_infer, 0},
                                   {"", "GridSample", 20, 2, 2, 1, 1, attrs, gridsample_infer, 0},
                                   {"", "GridSample", 22, 2, 2, 1, 1, attrs, gridsample_infer, 0},
                                   OP_END};

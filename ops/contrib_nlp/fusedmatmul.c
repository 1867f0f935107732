/* Schema of com.microsoft.FusedMatMul: alpha * op(A) @ op(B) with numpy matmul broadcasting,
 * where op transposes the last two axes (transA/transB) after moving the first axis behind the
 * batch axes (transBatchA/transBatchB). */
#include "ops/contrib_nlp/contrib_nlp.h"

#include "geometry/matmul.h"

/* dims of op(X): the batch move, then the swap of the last two */
static void op_dims(int rank, const int64_t *in, bool tbatch, bool t, int64_t *out) {
    for (int i = 0; i < rank; i++) out[i] = in[i];
    if (tbatch && rank >= 3) {
        for (int i = 0; i < rank - 2; i++) out[i] = in[i + 1];
        out[rank - 2] = in[0];
    }
    if (t && rank >= 2) {
        int64_t s = out[rank - 1];
        out[rank - 1] = out[rank - 2];
        out[rank - 2] = s;
    }
}

static onyx_status fmm_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, CNLP_TD));
    TRY(infer_need_tensor(c, 1));
    TRY(cnlp_same_dtype(c, 0, 1));
    const graph_node *n = c->node;
    const type_info *a = c->in[0], *b = c->in[1];
    onyx_dtype yd = a->dtype;
    if (a->rank < 0 || b->rank < 0) {
        type_set_tensor(&c->out[0], yd, -1, NULL);
        return ONYX_OK;
    }
    int64_t ad[ONYX_MAX_RANK], bd[ONYX_MAX_RANK], dims[ONYX_MAX_RANK];
    op_dims(a->rank, a->dims, attr_int(n, "transBatchA", 0), attr_int(n, "transA", 0), ad);
    op_dims(b->rank, b->dims, attr_int(n, "transBatchB", 0), attr_int(n, "transB", 0), bd);
    int r;
    geom_msg m;
    if (geom_matmul_dims(a->rank, ad, b->rank, bd, &r, dims, &m) != ONYX_OK)
        return onyx_error(ONYX_ERR_SHAPE, "after the transposes, %s", m.text);
    type_set_tensor(&c->out[0], yd, r, dims);
    /* the kernels' product is over the transposed operands */
    return infer_set_matmul(c, a->rank, ad, b->rank, bd);
}

static const attr_spec attrs[] = {{"alpha", ATTR_FLOAT},     {"transA", ATTR_INT},
                                  {"transB", ATTR_INT},      {"transBatchA", ATTR_INT},
                                  {"transBatchB", ATTR_INT}, {NULL, 0}};

const op_schema op_MsFusedMatMul[] = {
    {CNLP_MS, "FusedMatMul", 1, 2, 2, 1, 1, attrs, fmm_infer, OP_GEOMETRY},
    OP_END,
};

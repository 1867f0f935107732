/* Schema of com.microsoft.FusedMatMul: alpha * op(A) @ op(B) with numpy matmul broadcasting,
 * where op transposes the last two axes (transA/transB) after moving the first axis behind the
 * batch axes (transBatchA/transBatchB). */
#include "ops/contrib_nlp/contrib_nlp.h"

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
    if (a->rank == 0 || b->rank == 0)
        return onyx_error(ONYX_ERR_SHAPE, "input %c is a scalar, expected rank >= 1",
                          a->rank == 0 ? 'A' : 'B');
    int64_t ad[ONYX_MAX_RANK], bd[ONYX_MAX_RANK];
    op_dims(a->rank, a->dims, attr_int(n, "transBatchA", 0), attr_int(n, "transA", 0), ad);
    op_dims(b->rank, b->dims, attr_int(n, "transBatchB", 0), attr_int(n, "transB", 0), bd);
    int64_t ka = ad[a->rank - 1], kb = bd[b->rank == 1 ? 0 : b->rank - 2];
    if (!cnlp_agree(ka, kb))
        return onyx_error(ONYX_ERR_SHAPE,
                          "inner dims %lld (A) and %lld (B) differ after the "
                          "transposes",
                          (long long)ka, (long long)kb);
    int ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
    int nb = ba > bb ? ba : bb;
    int64_t dims[ONYX_MAX_RANK];
    for (int i = 0; i < nb; i++) {
        int ia = i - (nb - ba), ib = i - (nb - bb);
        int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
        if (da >= 0 && db >= 0 && da != db && da != 1 && db != 1)
            return onyx_error(ONYX_ERR_SHAPE, "batch dim %d: %lld and %lld do not broadcast", i,
                              (long long)da, (long long)db);
        dims[i] = da == 1 ? db : db == 1 ? da : da < 0 ? db : da;
    }
    int r = nb;
    if (a->rank > 1) dims[r++] = ad[a->rank - 2];
    if (b->rank > 1) dims[r++] = bd[b->rank - 1];
    type_set_tensor(&c->out[0], yd, r, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"alpha", ATTR_FLOAT},     {"transA", ATTR_INT},
                                  {"transB", ATTR_INT},      {"transBatchA", ATTR_INT},
                                  {"transBatchB", ATTR_INT}, {NULL, 0}};

const op_schema op_MsFusedMatMul[] = {
    {CNLP_MS, "FusedMatMul", 1, 2, 2, 1, 1, attrs, fmm_infer, 0},
    OP_END,
};

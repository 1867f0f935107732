/* Schema of Transpose: output dim i is input dim perm[i] (default: reversed). */
#include "ops/shape_common.h"

static onyx_status transpose_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    const type_info *x = c->in[0];
    if (x->rank < 0) {
        const int64_t *p;
        size_t k = attr_ints(c->node, "perm", &p);
        int r = node_attr(c->node, "perm") && k <= ONYX_MAX_RANK ? (int)k : -1;
        type_set_tensor(&c->out[0], x->dtype, r, NULL);
        return ONYX_OK;
    }
    int64_t perm[ONYX_MAX_RANK], dims[ONYX_MAX_RANK];
    TRY(node_transpose_perm(c->node, x->rank, perm));
    for (int i = 0; i < x->rank; i++) dims[i] = x->dims[perm[i]];
    type_set_tensor(&c->out[0], x->dtype, x->rank, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"perm", ATTR_INTS}, {NULL, 0}};

#define TRANSPOSE_V(v)                                                                             \
    { "", "Transpose", v, 1, 1, 1, 1, attrs, transpose_infer, 0 }
const op_schema op_Transpose[] = {TRANSPOSE_V(1),  TRANSPOSE_V(13), TRANSPOSE_V(21),
                                  TRANSPOSE_V(23), TRANSPOSE_V(24), TRANSPOSE_V(25),
                                  OP_END};

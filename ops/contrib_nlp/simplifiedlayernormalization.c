/* Schema of SimplifiedLayerNormalization, the RMS normalization onnxruntime registers in the
 * default domain (version 1) and its transformer optimizer emits: x / sqrt(mean(x^2) + eps) *
 * scale over the axes from `axis` on. Its inference hands the axis to the kernels
 * (core/op_params.h). */
#include "ops/contrib_nlp/contrib_nlp.h"

static onyx_status sln_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, CNLP_TD));
    TRY(infer_dtype_in(c, 1, CNLP_TD));
    const type_info *x = c->in[0], *s = c->in[1];
    int64_t st = attr_int(c->node, "stash_type", 1);
    if (st != ONYX_FLOAT && st != ONYX_DOUBLE)
        return onyx_error(ONYX_ERR_UNSUPPORTED,
                          "stash_type %lld is not supported (1 float or "
                          "11 double)",
                          (long long)st);
    onyx_dtype yt = s->dtype != ONYX_UNDEFINED ? s->dtype : x->dtype;
    if (x->rank < 0) {
        type_set_tensor(&c->out[0], yt, -1, NULL);
        if (c->n_out > 1) type_set_tensor(&c->out[1], (onyx_dtype)st, -1, NULL);
        return ONYX_OK;
    }
    if (x->rank == 0) return onyx_error(ONYX_ERR_SHAPE, "X is a scalar, expected rank >= 1");
    int axis;
    TRY(infer_kernel_axis(c, attr_int(c->node, "axis", -1), x->rank, &axis));
    if (s->rank >= 0) {
        bool ok = s->rank <= x->rank - axis;
        for (int i = 0; ok && i < s->rank; i++) {
            int64_t sd = s->dims[i], xd = x->dims[x->rank - s->rank + i];
            ok = sd == 1 || cnlp_agree(sd, xd);
        }
        if (!ok) {
            char a[160], b[160];
            return onyx_error(ONYX_ERR_SHAPE,
                              "scale has shape %s, which does not broadcast over "
                              "the normalized axes of X %s",
                              shape_str(s->rank, s->dims, a, sizeof a),
                              shape_str(x->rank, x->dims, b, sizeof b));
        }
    }
    type_set_tensor(&c->out[0], yt, x->rank, x->dims);
    if (c->n_out > 1) {
        int64_t d[ONYX_MAX_RANK];
        for (int i = 0; i < x->rank; i++) d[i] = i < axis ? x->dims[i] : 1;
        type_set_tensor(&c->out[1], (onyx_dtype)st, x->rank, d);
    }
    return ONYX_OK;
}

static const attr_spec attrs[] = {
    {"axis", ATTR_INT}, {"epsilon", ATTR_FLOAT}, {"stash_type", ATTR_INT}, {NULL, 0}};

const op_schema op_OrtSimplifiedLayerNormalization[] = {
    {"", "SimplifiedLayerNormalization", 1, 2, 2, 1, 2, attrs, sln_infer, OP_GEOMETRY},
    OP_END,
};

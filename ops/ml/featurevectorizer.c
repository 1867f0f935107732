/* Schema of ai.onnx.ml FeatureVectorizer: inputs [N, ...] (a 1-D input is one row [1, C], higher
 * ranks flatten past the first dim, as onnxruntime reads them) → Y [N, Σ inputdimensions] float,
 * each input cut or zero-padded to its inputdimensions entry. */
#include <inttypes.h>

#include "ops/ml/common.h"

static onyx_status featurevectorizer_infer(infer_ctx *c) {
    const int64_t *dims;
    size_t nd = attr_ints(c->node, "inputdimensions", &dims);
    if ((int)nd != c->n_in)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "inputdimensions has %zu entries for %d inputs", nd, c->n_in);
    int64_t total = 0, rows = -1;
    for (int i = 0; i < c->n_in; i++) {
        TRY(infer_dtype_in(c, i, ML_DT_NUMERIC));
        if (dims[i] < 0 || dims[i] > INT32_MAX)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "inputdimensions[%d] = %" PRId64 " is out of range", i,
                              dims[i]);
        total += dims[i];
        const type_info *t = c->in[i];
        if (t->rank == 0) return onyx_error(ONYX_ERR_SHAPE, "input %d is a scalar, expected [N, C] or [C]", i);
        int64_t r = t->rank < 0 ? -1 : t->rank == 1 ? 1 : t->dims[0];
        if (r < 0) continue;
        if (rows >= 0 && r != rows)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has %" PRId64 " rows, input 0 has %" PRId64, i, r, rows);
        rows = r;
    }
    int64_t out[2] = {rows, total};
    type_set_tensor(&c->out[0], ONYX_FLOAT, 2, out);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"inputdimensions", ATTR_INTS}, {NULL, 0}};

const op_schema op_FeatureVectorizer[] = {
    {ML_DOMAIN, "FeatureVectorizer", 1, 1, ONYX_VARIADIC, 1, 1, attrs, featurevectorizer_infer, 0}, OP_END};

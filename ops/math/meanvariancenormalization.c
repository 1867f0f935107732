/* Schema of MeanVarianceNormalization: (x - mean) / sqrt(variance) over `axes` (default
 * [0, 2, 3]), handed to the kernels (core/op_params.h). */
#include "ops/schema.h"

#define MVN_TYPES (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16))

static onyx_status mvn_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, MVN_TYPES | (c->node->version >= 13 ? DT_BIT(ONYX_BFLOAT16) : 0)));
    int rank = c->in[0]->rank;
    if (rank >= 0) {
        const int64_t *axes;
        size_t n = attr_ints(c->node, "axes", &axes);
        static const int64_t dflt[] = {0, 2, 3};
        if (!axes) {
            axes = dflt;
            n = 3;
        }
        bool mask[ONYX_MAX_RANK] = {false};
        for (size_t i = 0; i < n; i++) {
            int a;
            TRY(infer_axis(c, axes[i], rank, &a));
            mask[a] = true;
        }
        infer_set_axes(c, rank, mask); /* the kernels' axes */
    }
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs[] = {{"axes", ATTR_INTS}, {NULL, 0}};

const op_schema op_MeanVarianceNormalization[] = {
    {"", "MeanVarianceNormalization", 9, 1, 1, 1, 1, attrs, mvn_infer, OP_GEOMETRY},
    {"", "MeanVarianceNormalization", 13, 1, 1, 1, 1, attrs, mvn_infer, OP_GEOMETRY},
    OP_END,
};

/* Schema of Multinomial: sample_size class indices per batch row, drawn from the row's
 * unnormalized log-probabilities. */
#include "ops/random/random.h"

static onyx_status multinomial_infer(infer_ctx *c) {
    dtype_mask in_m = DT_FLOATS;
    if (c->node->version < 22) in_m &= ~DT_BIT(ONYX_BFLOAT16);
    TRY(infer_dtype_in(c, 0, in_m));
    TRY(ops_random_check_seed(c->node));
    onyx_dtype dt;
    TRY(ops_random_dtype(c->node, ONYX_INT32, DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64), &dt));
    int64_t samples = attr_int(c->node, "sample_size", 1);
    if (samples < 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "sample_size is %lld, expected >= 0",
                          (long long)samples);
    const type_info *x = c->in[0];
    if (x->rank >= 0 && x->rank != 2)
        return onyx_error(ONYX_ERR_SHAPE, "input has rank %d, expected 2 ([batch, classes])",
                          x->rank);
    int64_t dims[2] = {x->rank == 2 ? x->dims[0] : -1, samples};
    type_set_tensor(&c->out[0], dt, 2, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {
    {"dtype", ATTR_INT}, {"seed", ATTR_FLOAT}, {"sample_size", ATTR_INT}, {NULL, 0}};

const op_schema op_Multinomial[] = {
    {"", "Multinomial", 7, 1, 1, 1, 1, attrs, multinomial_infer, OP_NONDETERMINISTIC},
    {"", "Multinomial", 22, 1, 1, 1, 1, attrs, multinomial_infer, OP_NONDETERMINISTIC},
    OP_END};

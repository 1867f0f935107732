/* Schema of Bernoulli: 0/1 draws with the input's probabilities, in the dtype attribute's type
 * (the input's type when absent). */
#include "ops/random/random.h"

static onyx_status bernoulli_infer(infer_ctx *c) {
    dtype_mask in_m = DT_FLOATS, out_m = DT_NUMERIC | DT_BIT(ONYX_BOOL);
    if (c->node->version < 22) in_m &= ~DT_BIT(ONYX_BFLOAT16);
    TRY(infer_dtype_in(c, 0, in_m));
    TRY(ops_random_check_seed(c->node));
    const type_info *x = c->in[0];
    onyx_dtype dt;
    TRY(ops_random_dtype(c->node, x->dtype, out_m, &dt));
    type_set_tensor(&c->out[0], dt, x->rank, x->rank >= 0 ? x->dims : NULL);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"dtype", ATTR_INT}, {"seed", ATTR_FLOAT}, {NULL, 0}};

const op_schema op_Bernoulli[] = {
    {"", "Bernoulli", 15, 1, 1, 1, 1, attrs, bernoulli_infer, OP_NONDETERMINISTIC},
    {"", "Bernoulli", 22, 1, 1, 1, 1, attrs, bernoulli_infer, OP_NONDETERMINISTIC},
    OP_END};

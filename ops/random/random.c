/* Schemas of RandomNormal, RandomUniform, RandomNormalLike and RandomUniformLike: one file since
 * the four differ only in the distribution's attributes and where the shape comes from. */
#include <math.h>

#include "ops/random/random.h"

onyx_status ops_random_init(const graph_node *n, rng *r) {
    const graph_attr *a = node_attr(n, "seed");
    if (!a) {
        rng_seed_random(r);
        return ONYX_OK;
    }
    double s = a->f;
    if (!isfinite(s))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "seed is %g, expected a finite number", s);
    /* fmod keeps the truncated integer part exactly, and any float in range is an integer */
    double m = fmod(trunc(s), 4294967296.0);
    if (m < 0) m += 4294967296.0;
    rng_seed(r, (uint32_t)m);
    return ONYX_OK;
}

onyx_status ops_random_dtype(const graph_node *n, onyx_dtype dflt, dtype_mask allowed,
                             onyx_dtype *out) {
    onyx_dtype dt = dflt;
    if (node_attr(n, "dtype")) {
        int64_t d = attr_int(n, "dtype", 0);
        if (d != (int)d || !dtype_valid((int)d))
            return onyx_error(ONYX_ERR_INVALID_MODEL, "dtype %lld is not a tensor type",
                              (long long)d);
        dt = (onyx_dtype)d;
    }
    if (!dtype_in(dt, allowed))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "output type %s is not allowed here",
                          onyx_dtype_name(dt));
    *out = dt;
    return ONYX_OK;
}

static dtype_mask random_out_types(const graph_node *n) {
    dtype_mask m = DT_FLOATS;
    if (n->version < 22) m &= ~DT_BIT(ONYX_BFLOAT16);
    return m;
}

onyx_status ops_random_check_seed(const graph_node *n) {
    const graph_attr *a = node_attr(n, "seed");
    if (a && !isfinite(a->f))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "seed is %g, expected a finite number", a->f);
    return ONYX_OK;
}

/* RandomNormal / RandomUniform: the shape attribute, the dtype attribute (float by default). */
static onyx_status random_infer(infer_ctx *c) {
    TRY(ops_random_check_seed(c->node));
    onyx_dtype dt;
    TRY(ops_random_dtype(c->node, ONYX_FLOAT, random_out_types(c->node), &dt));
    const graph_attr *a = node_attr(c->node, "shape");
    if (!a || a->type != ATTR_INTS)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute 'shape' (ints) is required");
    if (a->n > ONYX_MAX_RANK)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "shape has %zu dims, at most %d supported", a->n,
                          ONYX_MAX_RANK);
    int64_t n;
    if (!shape_numel((int)a->n, a->ints, &n))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "shape has a negative dim or too many elements");
    type_set_tensor(&c->out[0], dt, (int)a->n, a->ints);
    return ONYX_OK;
}

/* The *Like forms: the input's shape, the dtype attribute or else the input's type. */
static onyx_status random_like_infer(infer_ctx *c) {
    TRY(ops_random_check_seed(c->node));
    TRY(infer_need_tensor(c, 0));
    const type_info *x = c->in[0];
    onyx_dtype dt;
    TRY(ops_random_dtype(c->node, x->dtype, random_out_types(c->node), &dt));
    type_set_tensor(&c->out[0], dt, x->rank, x->rank >= 0 ? x->dims : NULL);
    return ONYX_OK;
}

static const attr_spec normal_attrs[] = {{"shape", ATTR_INTS}, {"dtype", ATTR_INT},
                                         {"seed", ATTR_FLOAT}, {"scale", ATTR_FLOAT},
                                         {"mean", ATTR_FLOAT}, {NULL, 0}};
static const attr_spec uniform_attrs[] = {{"shape", ATTR_INTS}, {"dtype", ATTR_INT},
                                          {"seed", ATTR_FLOAT}, {"high", ATTR_FLOAT},
                                          {"low", ATTR_FLOAT},  {NULL, 0}};
/* the Like forms take their shape from the input */
static const attr_spec normal_like_attrs[] = {{"dtype", ATTR_INT},
                                              {"seed", ATTR_FLOAT},
                                              {"scale", ATTR_FLOAT},
                                              {"mean", ATTR_FLOAT},
                                              {NULL, 0}};
static const attr_spec uniform_like_attrs[] = {{"dtype", ATTR_INT},
                                               {"seed", ATTR_FLOAT},
                                               {"high", ATTR_FLOAT},
                                               {"low", ATTR_FLOAT},
                                               {NULL, 0}};

#define RANDOM_SCHEMA(name, nin, attrs, infer)                                                     \
    const op_schema op_##name[] = {                                                                \
        {"", #name, 1, nin, nin, 1, 1, attrs, infer, OP_NONDETERMINISTIC},                         \
        {"", #name, 22, nin, nin, 1, 1, attrs, infer, OP_NONDETERMINISTIC},                        \
        OP_END};

RANDOM_SCHEMA(RandomNormal, 0, normal_attrs, random_infer)
RANDOM_SCHEMA(RandomUniform, 0, uniform_attrs, random_infer)
RANDOM_SCHEMA(RandomNormalLike, 1, normal_like_attrs, random_like_infer)
RANDOM_SCHEMA(RandomUniformLike, 1, uniform_like_attrs, random_like_infer)

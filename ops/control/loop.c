/* Loop: runs its body while the trip count and condition allow. Carried outputs have the carried
 * inputs' types (dims the body may change become unknown); scan outputs stack the body's per-
 * iteration values along a new first axis whose length is only known at run time. */
#include "ops/control/infer.h"

static const attr_spec loop_attrs[] = {
    {"body", ATTR_GRAPH},
    {NULL, ATTR_UNDEFINED},
};

static onyx_status scalar_input(infer_ctx *c, int i, onyx_dtype dt, const char *what) {
    if (i >= c->n_in || !c->in[i] || c->in[i]->kind == ONYX_VALUE_NONE) return ONYX_OK;
    TRY(infer_need_tensor(c, i));
    if (c->in[i]->dtype != ONYX_UNDEFINED && c->in[i]->dtype != dt)
        return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) has type %s, expected %s", i, what,
                          onyx_dtype_name(c->in[i]->dtype), onyx_dtype_name(dt));
    for (int k = 0; k < c->in[i]->rank; k++)
        if (c->in[i]->dims[k] > 1)
            return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) must hold one element, got dim %d "
                              "of %lld", i, what, k, (long long)c->in[i]->dims[k]);
    return ONYX_OK;
}

static onyx_status loop_infer(infer_ctx *c) {
    const graph *body;
    TRY(infer_ctl_body(c->node, "body", &body));
    int n_carried = c->n_in - 2;
    if (n_carried < 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "expected at least 2 inputs (M, cond), got %d",
                          c->n_in);
    if (body->n_inputs != n_carried + 2)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "body has %d inputs, expected %d (iteration "
                          "number, condition and %d carried values)",
                          body->n_inputs, n_carried + 2, n_carried);
    if (c->n_out < n_carried || body->n_outputs != c->n_out + 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "body has %d outputs and the node %d, expected "
                          "the node to have one fewer (no condition) and at least %d",
                          body->n_outputs, c->n_out, n_carried);
    TRY(scalar_input(c, 0, ONYX_INT64, "M"));
    TRY(scalar_input(c, 1, ONYX_BOOL, "cond"));
    for (int i = 0; i < n_carried; i++) {
        if (!c->in[2 + i])
            return onyx_error(ONYX_ERR_INVALID_MODEL, "carried input %d is missing", 2 + i);
        TRY(infer_ctl_join(&c->out[i], c->in[2 + i], infer_ctl_graph_out(body, 1 + i)));
    }
    for (int i = n_carried; i < c->n_out; i++) {
        const type_info *b = infer_ctl_graph_out(body, 1 + i);
        type_info *o = &c->out[i];
        if (b->kind != ONYX_VALUE_NONE && b->kind != ONYX_VALUE_TENSOR)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "scan output %d of the body must be a "
                              "tensor", i - n_carried);
        if (b->kind == ONYX_VALUE_NONE || b->rank < 0 || b->rank + 1 > ONYX_MAX_RANK) {
            type_set_tensor(o, b->kind == ONYX_VALUE_NONE ? ONYX_UNDEFINED : b->dtype, -1, NULL);
            continue;
        }
        int64_t dims[ONYX_MAX_RANK];
        dims[0] = -1;
        for (int k = 0; k < b->rank; k++) dims[k + 1] = b->dims[k];
        type_set_tensor(o, b->dtype, b->rank + 1, dims);
    }
    return ONYX_OK;
}

#define LOOP_V(v, min_in) {"", "Loop", v, min_in, ONYX_VARIADIC, 1, ONYX_VARIADIC, loop_attrs, loop_infer, 0}
const op_schema op_Loop[] = {
    LOOP_V(1, 3),  LOOP_V(11, 2), LOOP_V(13, 2), LOOP_V(16, 2), LOOP_V(19, 2),
    LOOP_V(21, 2), LOOP_V(23, 2), LOOP_V(24, 2), LOOP_V(25, 2), OP_END,
};

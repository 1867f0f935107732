/* If: runs one of two subgraphs; each output has the type both branches agree on. */
#include "ops/control/infer.h"

static const attr_spec if_attrs[] = {
    {"then_branch", ATTR_GRAPH},
    {"else_branch", ATTR_GRAPH},
    {NULL, ATTR_UNDEFINED},
};

static onyx_status if_infer(infer_ctx *c) {
    const graph *tg, *eg;
    TRY(infer_ctl_body(c->node, "then_branch", &tg));
    TRY(infer_ctl_body(c->node, "else_branch", &eg));
    if (c->in[0] && c->in[0]->kind != ONYX_VALUE_NONE) {
        TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_BOOL)));
        if (c->in[0]->rank > 0)
            for (int k = 0; k < c->in[0]->rank; k++)
                if (c->in[0]->dims[k] > 1)
                    return onyx_error(ONYX_ERR_SHAPE, "input 0 (cond) must hold one element, "
                                      "got dim %d of %lld", k, (long long)c->in[0]->dims[k]);
    }
    if (tg->n_inputs != 0 || eg->n_inputs != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "then_branch has %d inputs and else_branch %d, expected none (branches "
                          "read enclosing values directly)", tg->n_inputs, eg->n_inputs);
    if (tg->n_outputs != c->n_out || eg->n_outputs != c->n_out)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "then_branch has %d outputs and else_branch %d, expected %d like the node",
                          tg->n_outputs, eg->n_outputs, c->n_out);
    for (int i = 0; i < c->n_out; i++) {
        const type_info *a = infer_ctl_graph_out(tg, i), *b = infer_ctl_graph_out(eg, i);
        if (a->kind == ONYX_VALUE_TENSOR && b->kind == ONYX_VALUE_TENSOR &&
            a->dtype != ONYX_UNDEFINED && b->dtype != ONYX_UNDEFINED && a->dtype != b->dtype)
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "output %d is %s in then_branch but %s in else_branch", i,
                              onyx_dtype_name(a->dtype), onyx_dtype_name(b->dtype));
        TRY(infer_ctl_join(&c->out[i], a, b));
    }
    return ONYX_OK;
}

#define IF_V(v) {"", "If", v, 1, 1, 1, ONYX_VARIADIC, if_attrs, if_infer, 0}
const op_schema op_If[] = {
    IF_V(1), IF_V(11), IF_V(13), IF_V(16), IF_V(19), IF_V(21), IF_V(23), IF_V(24), IF_V(25), OP_END,
};

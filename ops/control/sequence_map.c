/* SequenceMap: runs its body once per element of the input sequences; each output is a sequence
 * of the body's corresponding output. */
#include "ops/control/infer.h"

static const attr_spec seqmap_attrs[] = {
    {"body", ATTR_GRAPH},
    {NULL, ATTR_UNDEFINED},
};

static onyx_status seqmap_infer(infer_ctx *c) {
    const graph *body;
    TRY(infer_ctl_body(c->node, "body", &body));
    if (body->n_inputs != c->n_in || body->n_outputs != c->n_out)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "body has %d inputs and %d outputs, expected %d "
                          "and %d like the node", body->n_inputs, body->n_outputs, c->n_in,
                          c->n_out);
    for (int i = 0; i < c->n_in; i++) {
        if (!c->in[i])
            return onyx_error(ONYX_ERR_INVALID_MODEL, "input %d is missing", i);
        onyx_value_kind k = c->in[i]->kind;
        if ((i == 0 && k != ONYX_VALUE_SEQUENCE && k != ONYX_VALUE_NONE) ||
            (k != ONYX_VALUE_SEQUENCE && k != ONYX_VALUE_TENSOR && k != ONYX_VALUE_NONE))
            return onyx_error(ONYX_ERR_SHAPE, "input %d must be a %s", i,
                              i == 0 ? "sequence" : "sequence or a tensor");
    }
    for (int i = 0; i < c->n_out; i++) {
        const type_info *b = infer_ctl_graph_out(body, i);
        TRY(infer_ctl_container(&c->out[i], ONYX_VALUE_SEQUENCE,
                                b->kind == ONYX_VALUE_NONE ? NULL : b));
    }
    return ONYX_OK;
}

const op_schema op_SequenceMap[] = {
    {"", "SequenceMap", 17, 1, ONYX_VARIADIC, 1, ONYX_VARIADIC, seqmap_attrs, seqmap_infer, 0},
    OP_END,
};

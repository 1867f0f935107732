/* Schema of Gradient (ai.onnx.preview.training): the gradients of the graph value named by `y`
 * with respect to the values named by `xs`, the node's inputs being the values of xs then zs. */
#include "ops/training/optimizer.h"

static onyx_status gradient_infer(infer_ctx *c) {
    const graph_attr *xs = node_attr(c->node, "xs"), *zs = node_attr(c->node, "zs");
    if (!xs || xs->n == 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute 'xs' (strings) is required");
    if (!node_attr(c->node, "y"))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute 'y' (string) is required");
    size_t nz = zs ? zs->n : 0;
    if ((size_t)c->n_in != xs->n + nz)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "has %d inputs, expected %zu (xs then zs)",
                          c->n_in, xs->n + nz);
    if ((size_t)c->n_out != xs->n)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "has %d outputs, expected %zu (one per xs)",
                          c->n_out, xs->n);
    for (int i = 0; i < c->n_out; i++) {
        TRY(infer_need_tensor(c, i));
        const type_info *x = c->in[i];
        /* a gradient is real-valued: non-float inputs get float gradients */
        onyx_dtype dt = dtype_in(x->dtype, DT_FLOATS) ? x->dtype : ONYX_FLOAT;
        type_set_tensor(&c->out[i], dt, x->rank, x->rank >= 0 ? x->dims : NULL);
    }
    return ONYX_OK;
}

static const attr_spec attrs[] = {
    {"xs", ATTR_STRINGS}, {"zs", ATTR_STRINGS}, {"y", ATTR_STRING}, {NULL, 0}};

const op_schema op_Gradient[] = {{OPS_TRAINING_DOMAIN, "Gradient", 1, 1, ONYX_VARIADIC, 1,
                                  ONYX_VARIADIC, attrs, gradient_infer, 0},
                                 OP_END};

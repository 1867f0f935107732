/* The types of a graph's values inferred once, before any plan (core/graph_types.h). */
#include "core/graph_types.h"

#include <stdlib.h>
#include <string.h>

#include "core/status.h"

onyx_status graph_infer_types(const graph *g, type_info **out) {
    *out = NULL;
    type_info *types = calloc((size_t)g->n_values + 1, sizeof *types);
    if (!types) return onyx_oom("graph types");
    for (int v = 0; v < g->n_values; v++) {
        const graph_value *gv = &g->values[v];
        type_init(&types[v]);
        onyx_status st = ONYX_OK;
        if ((gv->flags & GV_INITIALIZER) && gv->init)
            type_set_tensor(&types[v], gv->init->dtype, gv->init->rank, gv->init->dims);
        else if ((gv->flags & GV_INPUT) && gv->type.kind == ONYX_VALUE_TENSOR)
            st = type_copy(&types[v], &gv->type);
        if (st != ONYX_OK) {
            graph_types_free(g, types);
            return st;
        }
    }
    for (int n = 0; n < g->n_nodes; n++) {
        const graph_node *nd = &g->nodes[n];
        if (!nd->schema || !nd->schema->infer) continue;
        const type_info **in = calloc((size_t)nd->n_inputs + 1, sizeof *in);
        const tensor **in_value = calloc((size_t)nd->n_inputs + 1, sizeof *in_value);
        type_info *outs = calloc((size_t)nd->n_outputs + 1, sizeof *outs);
        bool known = in && in_value && outs;
        for (int i = 0; i < nd->n_inputs && known; i++) {
            int v = nd->inputs[i];
            if (v < 0) continue;
            known = types[v].kind != ONYX_VALUE_NONE;
            in[i] = &types[v];
            /* a constant's value, as an initializer or from a Constant node (TorchScript's
             * exports give Reshapes their shapes so) */
            int p = g->values[v].producer;
            const graph_node *c = p >= 0 ? &g->nodes[p] : NULL;
            in_value[i] = (g->values[v].flags & GV_INITIALIZER) ? g->values[v].init
                          : c && !*c->domain && !strcmp(c->op_type, "Constant")
                              ? attr_tensor(c, "value")
                              : NULL;
        }
        for (int o = 0; o < nd->n_outputs && outs; o++) type_init(&outs[o]);
        if (known) {
            infer_ctx ctx = {.node = nd, .n_in = nd->n_inputs, .n_out = nd->n_outputs, .in = in,
                             .in_value = in_value, .out = outs};
            if (nd->schema->infer(&ctx) == ONYX_OK) {
                for (int o = 0; o < nd->n_outputs; o++) {
                    int v = nd->outputs[o];
                    if (v < 0) continue;
                    type_release(&types[v]);
                    types[v] = outs[o];
                    type_init(&outs[o]);
                }
            } else {
                /* a real refusal, recovered from: the outputs stay unknown here, and the
                 * node's inference reports it again when a plan prepares the node */
                onyx_error_clear();
            }
        }
        for (int o = 0; outs && o < nd->n_outputs; o++) type_release(&outs[o]);
        free(in);
        free(in_value);
        free(outs);
    }
    *out = types;
    return ONYX_OK;
}

void graph_types_free(const graph *g, type_info *types) {
    if (!types) return;
    for (int v = 0; v < g->n_values; v++) type_release(&types[v]);
    free(types);
}


/* Tied embeddings: the embedding table read as the transpose of the output projection's weight
 * (onnxruntime-genai's builder writes Gather(Transpose(lm_head weight), ids) when a model ties
 * them). Folded as written, the Transpose would be a second copy of the largest weight (544 MB in
 * float for a Qwen2-0.5B-sized vocabulary), beside the projection's own; gathering the weight's
 * columns and transposing the few rows gathered reads the one copy:
 *   Gather(Transpose(W, [1, 0]), ids, axis 0) -> Transpose(Gather(W, ids, axis 1), [1..r, 0])
 *   (W a constant matrix, ids of rank r; the same values, moved, not computed) */
#include <stdlib.h>

#include "core/rules/rules.h"

onyx_status rule_gather_transposed_weight(rewriter *r, const graph_node *gather) {
    if (gather->n_inputs != 2 || gather->n_outputs != 1) return ONYX_OK;
    int64_t axis = attr_int(gather, "axis", 0);
    const graph_node *t = rw_producer(r, gather->inputs[0]);
    const int64_t *perm;
    if (!t || !rw_is_op(t, "Transpose") || t->n_inputs != 1 || (axis != 0 && axis != -2) ||
        attr_ints(t, "perm", &perm) != 2 || perm[0] != 1 || perm[1] != 0 ||
        rw_sole_reader(r, t->outputs[0]) != gather)
        return ONYX_OK;
    const tensor *w = rw_constant(r, t->inputs[0]);
    const int64_t *dims;
    int rank = rw_known_dims(r, gather->inputs[1], &dims);
    if (!w || w->rank != 2 || rank < 0 || rank + 1 > ONYX_MAX_RANK) return ONYX_OK;
    int64_t *order = malloc(sizeof *order * (size_t)(rank + 1));
    if (!rw_keep(r, order)) return onyx_oom("graph rewrite");
    for (int i = 0; i < rank; i++) order[i] = i + 1;
    order[rank] = 0;
    int columns = rw_add_value(r, gather->outputs[0], "/columns", NULL);
    if (columns < 0) return onyx_oom("graph rewrite");
    graph_attr axis1 = {.name = "axis", .type = ATTR_INT, .i = 1};
    graph_attr order_attr = {.name = "perm", .type = ATTR_INTS, .n = (size_t)rank + 1,
                             .ints = order};
    const graph_node *members[] = {gather};
    int ins[2] = {t->inputs[0], gather->inputs[1]};
    TRY(rw_place(r, gather, members, 1, "Gather", gather->version, ins, 2, columns, &axis1, 1));
    if (!rw_replaced(r, gather)) return ONYX_OK;
    r->gone[rw_index(r, t)] = true;
    r->retyped[gather->outputs[0]] = true;
    return rw_place_at(r, gather, true, t->name, NULL, 0, "", "Transpose", 1, &columns, 1,
                       gather->outputs[0], &order_attr, 1);
}

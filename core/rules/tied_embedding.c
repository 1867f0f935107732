/* Tied embeddings: the embedding table read through the output projection's weight, as
 * onnxruntime-genai's builder writes it when a model ties them.
 * In float, Gather(Transpose(lm_head weight), ids). Folded as written, the Transpose would be a
 * second copy of the largest weight (544 MB in float for a Qwen2-0.5B-sized vocabulary), beside
 * the projection's own; gathering the weight's columns and transposing the few rows gathered
 * reads the one copy:
 *   Gather(Transpose(W, [1, 0]), ids, axis 0) -> Transpose(Gather(W, ids, axis 1), [1..r, 0])
 *   (W a constant matrix, ids of rank r; the same values, moved, not computed)
 * In int4, GatherBlockQuantized(Reshape(B, [N, K * bits / 8]), ids, scales[, zp]) beside
 * MatMulNBits(x, B, scales[, zp]). The two kernels would keep the codes in two forms (the file's
 * for the gather, the int8 repack for the product at accuracy_level 4); reading rows of the
 * product's weight, in the product's form, keeps one:
 *   -> ai.onyx GatherNBits(B, ids, scales[, zp]) with the product's K, N, bits, block_size and
 *      accuracy_level (rows of whole blocks only: K a multiple of block_size, the gather's row) */
#include <stdlib.h>
#include <string.h>

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

/* The MatMulNBits reading B as its weight with these scales and zero points (zp -1: none) and
 * blocks, whose K is a row of `row` codes, or NULL. */
static const graph_node *product_of(const rewriter *r, int b, int scales, int zp, int64_t bits,
                                    int64_t block, int64_t n, int64_t row) {
    const int *readers;
    int count = rw_readers(r, b, &readers);
    for (int i = 0; i < count; i++) {
        const graph_node *m = &r->g->nodes[readers[i]];
        if (r->gone[readers[i]] || strcmp(m->domain, "com.microsoft") != 0 ||
            strcmp(m->op_type, "MatMulNBits") != 0 || m->n_inputs < 3 || m->inputs[1] != b ||
            m->inputs[2] != scales || (m->n_inputs > 3 ? m->inputs[3] : -1) != zp)
            continue;
        if (attr_int(m, "bits", 4) == bits && attr_int(m, "block_size", 0) == block &&
            attr_int(m, "N", 0) == n && attr_int(m, "K", 0) == row)
            return m;
    }
    return NULL;
}

onyx_status rule_gather_nbits_weight(rewriter *r, const graph_node *gather) {
    if (gather->n_inputs < 3 || gather->n_inputs > 4 || gather->n_outputs != 1) return ONYX_OK;
    const graph_node *reshape = rw_producer(r, gather->inputs[0]);
    if (!reshape || !rw_is_op(reshape, "Reshape") || reshape->n_inputs < 1 ||
        rw_sole_reader(r, reshape->outputs[0]) != gather)
        return ONYX_OK;
    const int b = reshape->inputs[0], zp = gather->n_inputs > 3 ? gather->inputs[3] : -1;
    const tensor *codes = rw_constant(r, b);
    const int64_t *dims;
    const int64_t bits = attr_int(gather, "bits", 4), block = attr_int(gather, "block_size", 128);
    if (!codes || codes->dtype != ONYX_UINT8 || rw_static_dims(r, reshape->outputs[0], &dims) != 2 ||
        attr_int(gather, "gather_axis", 0) != 0 || (bits != 2 && bits != 4 && bits != 8))
        return ONYX_OK;
    const int64_t qa = attr_int(gather, "quantize_axis", 1), row = dims[1] * (8 / bits);
    if ((qa != 1 && qa != -1) || block <= 0 || row % block != 0) return ONYX_OK;
    /* the gather's own checks: scales [N, K / block], zero points those packed in bytes */
    const int64_t n = dims[0], *sd, *zd;
    if (rw_static_dims(r, gather->inputs[2], &sd) != 2 || sd[0] != n || sd[1] != row / block ||
        (zp >= 0 && (rw_static_dims(r, zp, &zd) != 2 || zd[0] != n ||
                     zd[1] != (row / block * bits + 7) / 8)))
        return ONYX_OK;
    const graph_node *m = product_of(r, b, gather->inputs[2], zp, bits, block, n, row);
    if (!m) return ONYX_OK;
    graph_attr attrs[] = {
        {.name = "K", .type = ATTR_INT, .i = row},
        {.name = "N", .type = ATTR_INT, .i = n},
        {.name = "bits", .type = ATTR_INT, .i = bits},
        {.name = "block_size", .type = ATTR_INT, .i = block},
        {.name = "accuracy_level", .type = ATTR_INT, .i = attr_int(m, "accuracy_level", 0)},
    };
    const graph_node *members[] = {gather};
    int ins[4] = {b, gather->inputs[1], gather->inputs[2], zp};
    TRY(rw_place_at(r, gather, false, gather->name, members, 1, "ai.onyx", "GatherNBits", 1, ins,
                    gather->n_inputs, gather->outputs[0], attrs, 5));
    if (!rw_replaced(r, gather)) return ONYX_OK;
    r->gone[rw_index(r, reshape)] = true;
    if (reshape->n_inputs > 1) rw_release(r, reshape->inputs[1]);
    return ONYX_OK;
}

/* Shape and type inference of the elementwise families (see infer_elementwise.h). */
#include "ops/elementwise/infer_elementwise.h"

onyx_status infer_ew_unary(infer_ctx *c, dtype_mask mask) {
    TRY(infer_dtype_in(c, 0, mask));
    return infer_same_as_input(c, 0, 0);
}

onyx_status infer_ew_legacy_dims(int rank_a, const int64_t *dims_a, int rank_b,
                                 const int64_t *dims_b, int64_t axis, bool has_axis,
                                 int64_t *out) {
    if (rank_b > rank_a)
        return onyx_error(ONYX_ERR_SHAPE, "input 1 has rank %d, expected at most input 0's %d",
                          rank_b, rank_a);
    int64_t start = has_axis ? axis : rank_a - rank_b;
    if (start < 0) start += rank_a;
    if (start < 0 || start > rank_a - rank_b) /* not start + rank_b: axis is untrusted */
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "axis %lld does not place input 1 (rank %d) inside input 0 (rank %d)",
                          (long long)axis, rank_b, rank_a);
    for (int d = 0; d < rank_a; d++) out[d] = 1;
    for (int d = 0; d < rank_b; d++) {
        int64_t a = dims_a[start + d], b = dims_b[d];
        if (b != 1 && a >= 0 && b >= 0 && a != b)
            return onyx_error(ONYX_ERR_SHAPE, "input 1 dim %d is %lld, expected 1 or %lld "
                              "(input 0 dim %lld)", d, (long long)b, (long long)a,
                              (long long)(start + d));
        out[start + d] = b;
    }
    return ONYX_OK;
}

/* Every input has input 0's shape (where both are known); the output has it too. */
static onyx_status infer_ew_equal_shapes(infer_ctx *c, onyx_dtype dt) {
    const type_info *a = c->in[0];
    int64_t dims[ONYX_MAX_RANK];
    for (int d = 0; d < a->rank; d++) dims[d] = a->dims[d];
    for (int i = 1; i < c->n_in; i++) {
        const type_info *b = c->in[i];
        if (!b || a->rank < 0 || b->rank < 0) continue;
        bool same = b->rank == a->rank;
        for (int d = 0; same && d < a->rank; d++) {
            if (dims[d] < 0) dims[d] = b->dims[d];
            same = b->dims[d] < 0 || b->dims[d] == dims[d];
        }
        if (!same) {
            char sa[96], sb[96];
            return onyx_error(ONYX_ERR_SHAPE,
                              "input %d has shape %s, expected input 0's %s (this opset "
                              "broadcasts only with broadcast=1)",
                              i, shape_str(b->rank, b->dims, sb, sizeof sb),
                              shape_str(a->rank, a->dims, sa, sizeof sa));
        }
    }
    type_set_tensor(&c->out[0], dt, a->rank, a->rank >= 0 ? dims : NULL);
    return ONYX_OK;
}

onyx_status infer_ew_nary(infer_ctx *c, dtype_mask mask, onyx_dtype out) {
    int n = c->n_in;
    for (int i = 0; i < n; i++) TRY(infer_need_tensor(c, i));
    TRY(infer_dtype_in(c, 0, mask));
    TRY(infer_same_dtypes(c, 0, n));
    return infer_ew_shape(c, out == ONYX_UNDEFINED ? c->in[0]->dtype : out);
}

onyx_status infer_ew_shape(infer_ctx *c, onyx_dtype dt) {
    int n = c->n_in;
    int rank;
    int64_t dims[ONYX_MAX_RANK];
    /* Before opset 7 the binary ops broadcast only when asked, and then one way (input 1 into
     * input 0 at `axis`); without the attribute (and for the variadic ops of that age) the spec
     * wants equal shapes. */
    if (c->node->version < 7 && attr_int(c->node, "broadcast", 0) == 0)
        return infer_ew_equal_shapes(c, dt);
    if (n == 2 && c->node->version < 7) {
        const type_info *a = c->in[0], *b = c->in[1];
        if (a->rank >= 0 && b->rank >= 0) {
            const graph_attr *ax = node_attr(c->node, "axis");
            TRY(infer_ew_legacy_dims(a->rank, a->dims, b->rank, b->dims, ax ? ax->i : 0,
                                     ax != NULL, dims));
        }
        type_set_tensor(&c->out[0], dt, a->rank, a->rank >= 0 ? a->dims : NULL);
        return ONYX_OK;
    }
    TRY(infer_broadcast(c, 0, n, &rank, dims));
    type_set_tensor(&c->out[0], dt, rank, rank >= 0 ? dims : NULL);
    return ONYX_OK;
}

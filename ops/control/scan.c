/* Scan: runs its body once per slice of the scan inputs, carrying states. v8 has a leading batch
 * axis and optional per-batch lengths; v9+ has per-input/output axes and directions. */
#include "ops/control/infer.h"

static const attr_spec scan8_attrs[] = {
    {"body", ATTR_GRAPH},
    {"num_scan_inputs", ATTR_INT},
    {"directions", ATTR_INTS},
    {NULL, ATTR_UNDEFINED},
};

static const attr_spec scan9_attrs[] = {
    {"body", ATTR_GRAPH},
    {"num_scan_inputs", ATTR_INT},
    {"scan_input_axes", ATTR_INTS},
    {"scan_input_directions", ATTR_INTS},
    {"scan_output_axes", ATTR_INTS},
    {"scan_output_directions", ATTR_INTS},
    {NULL, ATTR_UNDEFINED},
};

/* An INTS attribute that, when present, must have `want` entries each in [lo, hi]. */
static onyx_status check_list(const graph_node *n, const char *name, int64_t want, int64_t lo,
                              int64_t hi) {
    const int64_t *v;
    size_t count = attr_ints(n, name, &v);
    if (!node_attr(n, name)) return ONYX_OK;
    if ((int64_t)count != want)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute %s has %zu entries, expected %lld",
                          name, count, (long long)want);
    for (size_t k = 0; k < count; k++)
        if (v[k] < lo || v[k] > hi)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute %s[%zu] = %lld, expected %lld..%lld",
                              name, k, (long long)v[k], (long long)lo, (long long)hi);
    return ONYX_OK;
}

static onyx_status scan_infer(infer_ctx *c) {
    const graph *body;
    TRY(infer_ctl_body(c->node, "body", &body));
    bool v8 = c->node->version < 9;
    int first = v8 ? 1 : 0; /* v8's input 0 is sequence_lens */
    int64_t n_scan_in = attr_int(c->node, "num_scan_inputs", -1);
    if (n_scan_in < 1 || n_scan_in > c->n_in - first)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "num_scan_inputs is %lld, expected 1..%d",
                          (long long)n_scan_in, c->n_in - first);
    int n_state = c->n_in - first - (int)n_scan_in;
    int n_scan_out = c->n_out - n_state;
    if (body->n_inputs != n_state + n_scan_in)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "body has %d inputs, expected %lld",
                          body->n_inputs, (long long)(n_state + n_scan_in));
    if (n_scan_out < 0 || body->n_outputs != c->n_out)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "body has %d outputs, expected %d like the node "
                          "(at least the %d states)", body->n_outputs, c->n_out, n_state);
    for (int i = first; i < c->n_in; i++) TRY(infer_need_tensor(c, i));
    if (v8 && c->in[0]) TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_INT64)));

    const int64_t *in_axes = NULL, *out_axes = NULL;
    if (v8) {
        TRY(check_list(c->node, "directions", n_scan_in, 0, 1));
    } else {
        TRY(check_list(c->node, "scan_input_directions", n_scan_in, 0, 1));
        TRY(check_list(c->node, "scan_output_directions", n_scan_out, 0, 1));
        TRY(check_list(c->node, "scan_input_axes", n_scan_in, -ONYX_MAX_RANK, ONYX_MAX_RANK - 1));
        TRY(check_list(c->node, "scan_output_axes", n_scan_out, -ONYX_MAX_RANK, ONYX_MAX_RANK));
        attr_ints(c->node, "scan_input_axes", &in_axes);
        attr_ints(c->node, "scan_output_axes", &out_axes);
    }

    /* sequence length (and for v8 the batch size) from the first scan input */
    const type_info *x0 = c->in[first + n_state];
    int64_t seq_len = -1, batch = -1;
    int lead = v8 ? 1 : 0;
    if (x0->rank >= 0) {
        int axis = 0;
        if (x0->rank < lead + 1)
            return onyx_error(ONYX_ERR_SHAPE, "scan input 0 has rank %d, expected at least %d",
                              x0->rank, lead + 1);
        if (in_axes) TRY(infer_axis(c, in_axes[0], x0->rank, &axis));
        seq_len = x0->dims[lead + axis];
        if (v8) batch = x0->dims[0];
    }
    for (int i = 0; i < n_state; i++) TRY(infer_same_as_input(c, i, first + i));
    for (int j = 0; j < n_scan_out; j++) {
        const type_info *b = infer_ctl_graph_out(body, n_state + j);
        type_info *o = &c->out[n_state + j];
        if (b->kind != ONYX_VALUE_NONE && b->kind != ONYX_VALUE_TENSOR)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "scan output %d of the body must be a tensor",
                              j);
        onyx_dtype dt = b->kind == ONYX_VALUE_TENSOR ? b->dtype : ONYX_UNDEFINED;
        int r = b->kind == ONYX_VALUE_TENSOR ? b->rank : -1;
        if (r < 0 || r + 1 + lead > ONYX_MAX_RANK) {
            type_set_tensor(o, dt, -1, NULL);
            continue;
        }
        int axis = 0;
        if (out_axes) TRY(infer_axis(c, out_axes[j], r + 1, &axis));
        int64_t dims[ONYX_MAX_RANK];
        int k = 0;
        if (v8) dims[k++] = batch;
        for (int d = 0; d <= r; d++) {
            if (d == axis) dims[k++] = seq_len;
            if (d < r) dims[k++] = b->dims[d];
        }
        type_set_tensor(o, dt, k, dims);
    }
    return ONYX_OK;
}

#define SCAN_V(v) {"", "Scan", v, 1, ONYX_VARIADIC, 1, ONYX_VARIADIC, scan9_attrs, scan_infer, 0}
const op_schema op_Scan[] = {
    {"", "Scan", 8, 2, ONYX_VARIADIC, 1, ONYX_VARIADIC, scan8_attrs, scan_infer, 0},
    SCAN_V(9), SCAN_V(11), SCAN_V(16), SCAN_V(19), SCAN_V(21), SCAN_V(23), SCAN_V(24), SCAN_V(25),
    OP_END,
};

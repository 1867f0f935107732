/* Schemas of the ten Reduce* ops. They share attributes, arity and inference (only the allowed
 * element types differ), so one file stamps all their version lists. Their inference hands the
 * axes reduced to every device's kernel (core/op_params.h); axes from an input whose value the
 * plan does not know are resolved per run. */
#include "ops/reduce/reduce.h"

#include <string.h>

#include "geometry/axes.h"

#define BASE_TYPES (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16) |           \
                    DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64) | DT_BIT(ONYX_UINT32) |              \
                    DT_BIT(ONYX_UINT64))

bool reduce_axes_from_input(const graph_node *n) {
    return n->version >= (strcmp(n->op_type, "ReduceSum") == 0 ? 13 : 18);
}

static dtype_mask reduce_types(const graph_node *n) {
    dtype_mask m = BASE_TYPES;
    bool minmax = strcmp(n->op_type, "ReduceMax") == 0 || strcmp(n->op_type, "ReduceMin") == 0;
    bool logs =
        strcmp(n->op_type, "ReduceLogSum") == 0 || strcmp(n->op_type, "ReduceLogSumExp") == 0;
    if (n->version >= 13) m |= DT_BIT(ONYX_BFLOAT16);
    /* the log of an integer sum has no integer meaning: 28 keeps only the float types */
    if (logs && n->version >= 28) m &= DT_FLOATS;
    if (minmax && n->version >= 12) m |= DT_BIT(ONYX_INT8) | DT_BIT(ONYX_UINT8);
    if (minmax && n->version >= 20) m |= DT_BIT(ONYX_BOOL);
    return m;
}

onyx_status reduce_axes_mask(const graph_node *n, const tensor *axes, int rank, bool *mask) {
    int64_t buf[64];
    const int64_t *list = NULL;
    size_t count = 0;
    bool noop = false;
    if (reduce_axes_from_input(n)) {
        noop = attr_int(n, "noop_with_empty_axes", 0) != 0;
        if (axes) {
            if (axes->dtype != ONYX_INT64)
                return onyx_error(ONYX_ERR_SHAPE, "axes (input 1) has type %s, expected int64",
                                  onyx_dtype_name(axes->dtype));
            TRY(tensor_to_i64s(axes, buf, sizeof buf / sizeof buf[0], &count));
            list = buf;
        }
    } else {
        count = attr_ints(n, "axes", &list);
    }
    geom_msg m;
    GEOM_TRY(m, geom_reduce_axes(list, count, noop, rank, mask, &m));
    return ONYX_OK;
}

static onyx_status reduce_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, reduce_types(c->node)));
    const type_info *x = c->in[0];
    bool keep = attr_int(c->node, "keepdims", 1) != 0;
    const tensor *axes = NULL;
    bool axes_unknown = false;
    if (reduce_axes_from_input(c->node) && c->n_in > 1 && c->in[1]) {
        TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT64)));
        axes = c->in_value[1];
        axes_unknown = axes == NULL;
    }
    if (x->rank < 0 || axes_unknown) {
        type_set_tensor(&c->out[0], x->dtype, keep ? x->rank : -1, NULL);
        return ONYX_OK;
    }
    bool mask[ONYX_MAX_RANK];
    TRY(reduce_axes_mask(c->node, axes, x->rank, mask));
    infer_set_axes(c, x->rank, mask);
    int64_t dims[ONYX_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!mask[i]) dims[r++] = x->dims[i];
        else if (keep) dims[r++] = 1;
    }
    type_set_tensor(&c->out[0], x->dtype, r, dims);
    return ONYX_OK;
}

static const attr_spec attrs_axes[] = {{"axes", ATTR_INTS}, {"keepdims", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_input[] = {
    {"keepdims", ATTR_INT}, {"noop_with_empty_axes", ATTR_INT}, {NULL, 0}};

#define R_ATTR(op, v) {"", #op, v, 1, 1, 1, 1, attrs_axes, reduce_infer, OP_GEOMETRY}
#define R_INPUT(op, v) {"", #op, v, 1, 2, 1, 1, attrs_input, reduce_infer, OP_GEOMETRY}

/* The usual history: axes attribute at 1, negative axes at 11, bfloat16 at 13, axes input at 18. */
#define REDUCE_SCHEMA(op)                                                                          \
    const op_schema op_##op[] = {R_ATTR(op, 1), R_ATTR(op, 11), R_ATTR(op, 13), R_INPUT(op, 18),   \
                                 OP_END};

REDUCE_SCHEMA(ReduceMean)
REDUCE_SCHEMA(ReduceProd)
REDUCE_SCHEMA(ReduceL1)
REDUCE_SCHEMA(ReduceL2)
REDUCE_SCHEMA(ReduceSumSquare)

/* LogSum and LogSumExp lost their integer types at 28 (reduce_types). */
#define LOG_REDUCE_SCHEMA(op)                                                                      \
    const op_schema op_##op[] = {R_ATTR(op, 1),   R_ATTR(op, 11),  R_ATTR(op, 13),                 \
                                 R_INPUT(op, 18), R_INPUT(op, 28), OP_END};

LOG_REDUCE_SCHEMA(ReduceLogSum)
LOG_REDUCE_SCHEMA(ReduceLogSumExp)

const op_schema op_ReduceSum[] = {R_ATTR(ReduceSum, 1), R_ATTR(ReduceSum, 11),
                                  R_INPUT(ReduceSum, 13), OP_END};

/* Max/Min also gained int8/uint8 at 12 and bool at 20. */
#define MINMAX_SCHEMA(op)                                                                          \
    const op_schema op_##op[] = {R_ATTR(op, 1),   R_ATTR(op, 11),  R_ATTR(op, 12),                 \
                                 R_ATTR(op, 13),  R_INPUT(op, 18), R_INPUT(op, 20), OP_END};

MINMAX_SCHEMA(ReduceMax)
MINMAX_SCHEMA(ReduceMin)

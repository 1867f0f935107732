/* Schema of MaxUnpool: scatters pooled values back to the positions MaxPool's Indices name. Its
 * kernels get the unpooling window from the plan (core/op_params.h): the transposed window of the
 * pool it undoes, whose output is the default unpooled shape the indices address. */
#include "ops/shape_common.h"
#include "ops/spatial.h"

#define UNPOOL_T (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16))

static onyx_status maxunpool_infer(infer_ctx *c) {
    const graph_node *n = c->node;
    TRY(infer_dtype_in(c, 0, UNPOOL_T | (n->version >= 22 ? DT_BIT(ONYX_BFLOAT16) : 0)));
    TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT64)));
    const type_info *x = c->in[0];
    int rank = x->kind == ONYX_VALUE_TENSOR ? x->rank : -1;
    int64_t dims[ONYX_MAX_RANK];
    if (rank >= 0 && (rank < 3 || rank - 2 > SPATIAL_MAX_DIMS))
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected 3..%d", rank,
                          2 + SPATIAL_MAX_DIMS);
    const type_info *ix = c->in[1];
    if (rank >= 0 && ix->kind == ONYX_VALUE_TENSOR && ix->rank >= 0) {
        if (!shape_equal(rank, x->dims, ix->rank, ix->dims)) {
            /* unknown dims may still agree */
            bool clash = ix->rank != rank;
            for (int i = 0; !clash && i < rank; i++)
                clash = x->dims[i] >= 0 && ix->dims[i] >= 0 && x->dims[i] != ix->dims[i];
            if (clash) {
                char a[128], b[128];
                return onyx_error(ONYX_ERR_SHAPE, "input 1 (indices) has shape %s, expected "
                                  "the shape of input 0 %s", shape_str(ix->rank, ix->dims, a,
                                  sizeof a), shape_str(rank, x->dims, b, sizeof b));
            }
        }
    }
    if (rank >= 0) {
        spatial_params p;
        TRY(spatial_parse(n, rank - 2, NULL, &p));
        dims[0] = x->dims[0];
        dims[1] = x->dims[1];
        for (int i = 0; i < p.nd; i++) {
            int64_t in = x->dims[2 + i], span;
            if (in < 0) {
                dims[2 + i] = -1;
                continue;
            }
            /* attributes are at most 2^30 (spatial_parse): only the product can overflow */
            if (__builtin_mul_overflow(in > 0 ? in - 1 : 0, p.stride[i], &span) ||
                span > INT64_MAX / 2)
                return onyx_error(ONYX_ERR_SHAPE, "spatial dim %d: %lld with stride %lld is too "
                                  "large", i, (long long)in, (long long)p.stride[i]);
            dims[2 + i] = (in - 1) * p.stride[i] - p.pad_begin[i] - p.pad_end[i] + p.kernel[i];
            if (dims[2 + i] < 0)
                return onyx_error(ONYX_ERR_SHAPE, "spatial dim %d: pads %lld+%lld leave a "
                                  "negative output size", i, (long long)p.pad_begin[i],
                                  (long long)p.pad_end[i]);
        }
        geom_window w;
        spatial_pool_window(&p, x->dims, dims + 2, &w);
        w.transposed = true; /* input i scatters to outputs i*stride - pad_begin + j */
        infer_set_window(c, &w);
    }
    if (ops_has_input(c, 2)) {
        TRY(infer_dtype_in(c, 2, DT_BIT(ONYX_INT64)));
        const tensor *os = ops_value(c, 2);
        if (!os) {
            type_set_tensor(&c->out[0], x->dtype, rank, NULL);
            return ONYX_OK;
        }
        int64_t want[ONYX_MAX_RANK];
        size_t cnt;
        TRY(ops_read_ints(os, 2, want, ONYX_MAX_RANK, &cnt));
        if (rank >= 0 && (int)cnt != rank)
            return onyx_error(ONYX_ERR_SHAPE, "input 2 (output_shape) has %zu values, expected "
                              "%d", cnt, rank);
        int xr = rank;
        rank = (int)cnt;
        for (int i = 0; i < rank; i++) {
            /* indices address the default unpooled shape; output_shape may only pad it */
            if (want[i] < 0 || (xr >= 0 && dims[i] >= 0 && want[i] < dims[i]) ||
                (i < 2 && xr >= 0 && dims[i] >= 0 && want[i] != dims[i]))
                return onyx_error(ONYX_ERR_SHAPE, "output_shape[%d] is %lld, expected %s%lld",
                                  i, (long long)want[i], i < 2 ? "" : "at least ",
                                  (long long)dims[i]);
            dims[i] = want[i];
        }
    }
    type_set_tensor(&c->out[0], x->dtype, rank, rank >= 0 ? dims : NULL);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"kernel_shape", ATTR_INTS}, {"strides", ATTR_INTS},
                                  {"pads", ATTR_INTS}, {NULL, 0}};

const op_schema op_MaxUnpool[] = {
    {"", "MaxUnpool", 9, 2, 3, 1, 1, attrs, maxunpool_infer, OP_GEOMETRY},
    {"", "MaxUnpool", 11, 2, 3, 1, 1, attrs, maxunpool_infer, OP_GEOMETRY},
    {"", "MaxUnpool", 22, 2, 3, 1, 1, attrs, maxunpool_infer, OP_GEOMETRY},
    OP_END,
};

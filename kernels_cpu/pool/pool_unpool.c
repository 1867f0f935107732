/* CPU kernel of MaxUnpool: zero the output, then put each pooled value where its index says.
 * Indices address the default unpooled shape ((in-1)*stride - pads + kernel); a larger
 * output_shape only pads that at the end of each dim, as onnx's reference does. */
#include <string.h>

#include "ops/spatial.h"
#include "kernels_cpu/cpu_kernels.h"

onyx_status cpu_maxunpool_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *ix = kernel_input(c, 1);
    tensor *y = kernel_output(c, 0);
    int rank = x->rank;
    if (rank < 3 || rank - 2 > SPATIAL_MAX_DIMS)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected 3..%d", rank,
                          2 + SPATIAL_MAX_DIMS);
    if (!shape_equal(rank, x->dims, ix->rank, ix->dims))
        return onyx_error(ONYX_ERR_SHAPE, "input 1 (indices) must have the shape of input 0");
    if (y->rank != rank)
        return onyx_error(ONYX_ERR_SHAPE, "output has rank %d, expected %d", y->rank, rank);
    spatial_params p;
    TRY(spatial_parse(c->node, rank - 2, NULL, &p));
    int64_t dflt[2 + SPATIAL_MAX_DIMS] = {x->dims[0], x->dims[1]};
    for (int i = 0; i < p.nd; i++) {
        int64_t span;
        if (__builtin_mul_overflow(x->dims[2 + i] > 0 ? x->dims[2 + i] - 1 : 0, p.stride[i],
                                   &span) ||
            span > INT64_MAX / 2)
            return onyx_error(ONYX_ERR_SHAPE, "spatial dim %d is too large for stride %lld", i,
                              (long long)p.stride[i]);
        dflt[2 + i] = (x->dims[2 + i] - 1) * p.stride[i] - p.pad_begin[i] - p.pad_end[i] +
                      p.kernel[i];
    }
    for (int i = 0; i < rank; i++)
        if (dflt[i] < 0 || y->dims[i] < dflt[i])
            return onyx_error(ONYX_ERR_SHAPE, "output dim %d is %lld, expected at least %lld", i,
                              (long long)y->dims[i], (long long)dflt[i]);
    int64_t total;
    if (!shape_numel(rank, dflt, &total))
        return onyx_error(ONYX_ERR_SHAPE, "unpooled shape overflows");
    size_t es = dtype_size(y->dtype);
    if (y->numel) memset(y->data, 0, (size_t)y->numel * es);
    bool same = shape_equal(rank, dflt, rank, y->dims);
    const int64_t *id = ix->data;
    const unsigned char *src = x->data;
    unsigned char *dst = y->data;
    for (int64_t e = 0; e < x->numel; e++) {
        int64_t k = id[e];
        if (k < 0 || k >= total)
            return onyx_error(ONYX_ERR_SHAPE, "indices[%lld] is %lld, expected 0..%lld",
                              (long long)e, (long long)k, (long long)total - 1);
        int64_t off = k;
        if (!same) {
            /* re-address the index from the default shape into the padded output */
            int64_t stride = 1;
            off = 0;
            for (int d = rank - 1; d >= 0; d--) {
                off += (k % dflt[d]) * stride;
                k /= dflt[d];
                stride *= y->dims[d];
            }
        }
        memcpy(dst + (size_t)off * es, src + (size_t)e * es, es);
    }
    return ONYX_OK;
}

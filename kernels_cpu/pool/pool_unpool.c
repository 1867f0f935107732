/* CPU kernel of MaxUnpool: zero the output, then put each pooled value where its index says.
 * Indices address the default unpooled shape ((in-1)*stride - pads + kernel: the output of the
 * plan's transposed window, core/op_params.h); a larger output_shape only pads that at the end of
 * each dim, as onnx's reference does. */
#include <string.h>

#include "kernels_cpu/cpu_kernels.h"

onyx_status cpu_maxunpool_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *ix = kernel_input(c, 1);
    tensor *y = kernel_output(c, 0);
    const geom_window *w;
    TRY(kernel_window(c->params, &w));
    /* the plan's window is the schema's for X: a check, not a second derivation */
    int rank = x->rank;
    bool fits = w->transposed && w->nsp >= 1 && w->nsp <= GEOM_WINDOW_MAX_SPATIAL &&
                rank == w->nsp + 2 && y->rank == rank && x->dims[0] == w->n && x->dims[1] == w->c;
    for (int i = 0; i < w->nsp && fits; i++) fits = x->dims[2 + i] == w->in[i];
    if (!fits) return onyx_error(ONYX_ERR_RUNTIME, "the plan's unpooling window is for other dims");
    if (!shape_equal(rank, x->dims, ix->rank, ix->dims))
        return onyx_error(ONYX_ERR_SHAPE, "input 1 (indices) must have the shape of input 0");
    int64_t dflt[2 + GEOM_WINDOW_MAX_SPATIAL]; /* the shape the indices address */
    geom_window_out_dims(w, dflt);
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

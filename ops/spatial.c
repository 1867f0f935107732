/* Parsing of the sliding-window attributes shared by the pooling ops, and their output sizes by
 * geometry/window.h's rule (see spatial.h). */
#include "ops/spatial.h"

#include <string.h>

/* Bound on every window attribute, so that (k-1)*d + pads + dims never overflows int64. */
#define SPATIAL_ATTR_MAX ((int64_t)1 << 30)
/* Bound on an input spatial dim (declared shapes and Col2Im's image_shape are unchecked numbers):
 * with the attribute bound above, every sum and product of dim_out stays inside int64. */
#define SPATIAL_DIM_MAX ((int64_t)1 << 60)

static onyx_status read_list(const graph_node *n, const char *name, int want, int64_t dflt,
                             int64_t min, int64_t *out, bool *present) {
    const int64_t *v;
    size_t cnt = attr_ints(n, name, &v);
    if (present) *present = v != NULL;
    if (!v) {
        for (int i = 0; i < want; i++) out[i] = dflt;
        return ONYX_OK;
    }
    if ((int64_t)cnt != want)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute %s has %zu values, expected %d", name,
                          cnt, want);
    for (int i = 0; i < want; i++) {
        if (v[i] < min || v[i] > SPATIAL_ATTR_MAX)
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "attribute %s[%d] is %lld, expected %lld..%lld", name, i,
                              (long long)v[i], (long long)min, (long long)SPATIAL_ATTR_MAX);
        out[i] = v[i];
    }
    return ONYX_OK;
}

onyx_status spatial_parse(const graph_node *n, int nd, const int64_t *kernel_from_w,
                          spatial_params *p) {
    if (nd < 1 || nd > SPATIAL_MAX_DIMS)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "%d spatial dims, supported 1..%d", nd,
                          SPATIAL_MAX_DIMS);
    spatial_params r;
    memset(&r, 0, sizeof r);
    r.nd = nd;

    bool has_kernel;
    TRY(read_list(n, "kernel_shape", nd, 0, 1, r.kernel, &has_kernel));
    if (!has_kernel && !kernel_from_w)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute kernel_shape is required");
    if (kernel_from_w) {
        for (int i = 0; i < nd; i++) {
            if (has_kernel && r.kernel[i] != kernel_from_w[i])
                return onyx_error(ONYX_ERR_INVALID_MODEL,
                                  "attribute kernel_shape[%d] is %lld but the weights give %lld",
                                  i, (long long)r.kernel[i], (long long)kernel_from_w[i]);
            if (kernel_from_w[i] < 1 || kernel_from_w[i] > SPATIAL_ATTR_MAX)
                return onyx_error(ONYX_ERR_SHAPE, "kernel spatial dim %d is %lld, expected 1..%lld",
                                  i, (long long)kernel_from_w[i], (long long)SPATIAL_ATTR_MAX);
            r.kernel[i] = kernel_from_w[i];
        }
    }
    TRY(read_list(n, "strides", nd, 1, 1, r.stride, NULL));
    TRY(read_list(n, "dilations", nd, 1, 1, r.dilation, NULL));

    const char *ap = attr_string(n, "auto_pad", "NOTSET");
    if (!geom_auto_pad_parse(ap, &r.auto_pad))
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "attribute auto_pad is '%s', expected NOTSET, SAME_UPPER, SAME_LOWER or "
                          "VALID", ap);

    int64_t ceil_mode = attr_int(n, "ceil_mode", 0);
    if (ceil_mode != 0 && ceil_mode != 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute ceil_mode is %lld, expected 0 or 1",
                          (long long)ceil_mode);
    r.ceil_mode = ceil_mode != 0;

    /* pads are meaningless with an auto_pad mode: onnxruntime ignores them, so do we */
    if (r.auto_pad == GEOM_PAD_NOTSET) {
        int64_t pads[2 * SPATIAL_MAX_DIMS];
        TRY(read_list(n, "pads", 2 * nd, 0, 0, pads, NULL));
        for (int i = 0; i < nd; i++) {
            r.pad_begin[i] = pads[i];
            r.pad_end[i] = pads[nd + i];
            if (!kernel_from_w &&
                (r.pad_begin[i] >= spatial_window(&r, i) || r.pad_end[i] >= spatial_window(&r, i)))
                return onyx_error(ONYX_ERR_INVALID_MODEL,
                                  "pads of spatial dim %d are %lld and %lld, expected less than "
                                  "the window %lld",
                                  i, (long long)r.pad_begin[i], (long long)r.pad_end[i],
                                  (long long)spatial_window(&r, i));
        }
    }
    *p = r;
    return ONYX_OK;
}

static onyx_status dim_out(spatial_params *p, int i, int64_t in, int64_t *out) {
    if (in > SPATIAL_DIM_MAX)
        return onyx_error(ONYX_ERR_SHAPE, "spatial dim %d is %lld, expected at most %lld", i,
                          (long long)in, (long long)SPATIAL_DIM_MAX);
    geom_msg m;
    if (geom_window_out(in, p->kernel[i], p->stride[i], p->dilation[i], p->auto_pad, p->ceil_mode,
                        &p->pad_begin[i], &p->pad_end[i], out, &m) != ONYX_OK)
        return onyx_error(ONYX_ERR_SHAPE, "spatial dim %d: %s", i, m.text);
    return ONYX_OK;
}

onyx_status spatial_resolve(spatial_params *p, const int64_t *in_dims, int64_t *out_dims) {
    int64_t o[SPATIAL_MAX_DIMS];
    for (int i = 0; i < p->nd; i++) TRY(dim_out(p, i, in_dims[i], &o[i]));
    memcpy(out_dims, o, (size_t)p->nd * sizeof *o);
    return ONYX_OK;
}

onyx_status spatial_output_dims(const spatial_params *p, const int64_t *in_dims,
                                int64_t *out_dims) {
    spatial_params tmp = *p;
    return spatial_resolve(&tmp, in_dims, out_dims);
}

void spatial_pool_window(const spatial_params *p, const int64_t *x_dims, const int64_t *out_dims,
                         geom_window *w) {
    memset(w, 0, sizeof *w);
    w->nsp = p->nd;
    w->n = x_dims[0];
    w->c = w->m = w->group = x_dims[1];
    for (int i = 0; i < p->nd; i++) {
        w->in[i] = x_dims[2 + i];
        w->out[i] = out_dims[i];
        w->k[i] = p->kernel[i];
        w->stride[i] = p->stride[i];
        w->dil[i] = p->dilation[i];
        w->pad_b[i] = p->pad_begin[i];
        w->pad_e[i] = p->pad_end[i];
    }
}

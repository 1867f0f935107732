/* CPU kernel of Pad: the (cropped) input is copied into the output's interior, as the plan's pads
 * place it (core/op_params.h); constant mode fills the rest with the value, reflect/edge/wrap
 * fill it axis by axis (innermost first) by copying slabs of the output onto itself. */
#include <inttypes.h>
#include <string.h>

#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/move.h"

/* Interior coordinate that output coordinate x (relative to the interior start) reads. */
static int64_t source_index(int mode, int64_t x, int64_t n) {
    switch (mode) {
    case GEOM_PAD_EDGE: return x < 0 ? 0 : x >= n ? n - 1 : x;
    case GEOM_PAD_WRAP: return ((x % n) + n) % n;
    default: {
        if (n == 1) return 0;
        int64_t period = 2 * (n - 1), m = (x < 0 ? -x : x) % period;
        return m >= n ? period - m : m;
    }
    }
}

/* The constant to pad with, as one element of x's type (strings: a pointer to it). */
static onyx_status pad_value(const kernel_call *c, const tensor *x, unsigned char *value) {
    size_t es = cpu_move_esize(x);
    memset(value, 0, 16);
    if (c->node->version < 11)
        return cpu_scalar_from_double(x->dtype, attr_float(c->node, "value", 0.0f), value);
    const tensor *v = kernel_input(c, 2);
    if (!v || v->numel == 0) {
        if (x->dtype == ONYX_STRING) {
            static const char *const empty = "";
            memcpy(value, &empty, sizeof empty);
        }
        return ONYX_OK;
    }
    if (v->dtype != x->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "constant_value has type %s, expected %s",
                          onyx_dtype_name(v->dtype), onyx_dtype_name(x->dtype));
    memcpy(value, v->data, es);
    return ONYX_OK;
}

/* Whether the pads the plan handed are the ones of X and Y (made for them: a check, not a second
 * derivation). */
static onyx_status pads_check(const geom_pads *p, const tensor *x, const tensor *y) {
    bool fits = p->rank == x->rank && y->rank == x->rank;
    for (int k = 0; k < x->rank && fits; k++)
        fits = x->dims[k] == p->in[k] && y->dims[k] == p->out[k];
    return fits ? ONYX_OK : onyx_error(ONYX_ERR_RUNTIME, "the plan's pads are for other dims");
}

onyx_status cpu_pad_run(const kernel_call *c) {
    enum { R = ONYX_MAX_RANK };
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    const geom_pads *p;
    TRY(kernel_pads(c->params, &p));
    TRY(pads_check(p, x, y));
    int r = x->rank, mode = p->mode;
    size_t es = cpu_move_esize(x);
    unsigned char value[16];
    if (mode == GEOM_PAD_CONSTANT) TRY(pad_value(c, x, value));
    if (y->numel == 0) return ONYX_OK;

    /* interior: where the cropped input lands */
    int64_t xst[R], yst[R], xoff = 0, yoff = 0;
    const int64_t *lo = p->at, *len = p->kept;
    bool empty = false;
    cpu_strides(r, x->dims, xst);
    cpu_strides(r, y->dims, yst);
    for (int k = 0; k < r; k++) {
        if (len[k] <= 0) empty = true;
        xoff += p->crop[k] * xst[k];
        yoff += lo[k] * yst[k];
    }
    if (empty && mode != GEOM_PAD_CONSTANT)
        return onyx_error(ONYX_ERR_RUNTIME, "cannot pad an empty input in this mode");
    char *yd = y->data;
    cpu_move_begin(y);
    if (mode == GEOM_PAD_CONSTANT) cpu_fill(yd, value, es, y->numel);
    if (!empty)
        cpu_copy_strided(yd + yoff * (int64_t)es, (const char *)x->data + xoff * (int64_t)es, es, r,
                         len, yst, xst);
    if (mode != GEOM_PAD_CONSTANT) {
        /* axis k: slabs span the interior of outer axes and everything of the inner ones */
        for (int k = r - 1; k >= 0; k--) {
            int64_t dims[R], base = 0;
            for (int j = 0; j < r; j++) {
                dims[j] = j < k ? len[j] : y->dims[j];
                if (j < k) base += lo[j] * yst[j];
            }
            dims[k] = 1;
            for (int64_t pos = 0; pos < y->dims[k]; pos++) {
                if (pos == lo[k]) pos += len[k];
                if (pos >= y->dims[k]) break;
                int64_t from = lo[k] + source_index(mode, pos - lo[k], len[k]);
                cpu_copy_strided(yd + (base + pos * yst[k]) * (int64_t)es,
                                 yd + (base + from * yst[k]) * (int64_t)es, es, r, dims, yst, yst);
            }
        }
    }
    return cpu_move_end(y);
}

/* CenterCropPad: per axis a centred window of the input (crop) or a centred place in the
 * zeroed output (pad), then one strided copy. */
onyx_status cpu_center_crop_pad_run(const kernel_call *c) {
    enum { R = ONYX_MAX_RANK };
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    int r = x->rank;
    int64_t xst[R], yst[R], len[R], xoff = 0, yoff = 0;
    cpu_strides(r, x->dims, xst);
    cpu_strides(r, y->dims, yst);
    for (int k = 0; k < r; k++) {
        int64_t d = x->dims[k], t = y->dims[k];
        if (t <= d) {
            xoff += (d - t) / 2 * xst[k];
            len[k] = t;
        } else {
            yoff += (t - d) / 2 * yst[k];
            len[k] = d;
        }
    }
    if (y->numel == 0) return ONYX_OK;
    size_t es = cpu_move_esize(x);
    cpu_move_begin(y);
    /* zero bytes: numbers become 0, strings NULL, which cpu_move_end turns into "" */
    memset(y->data, 0, y->nbytes);
    cpu_copy_strided((char *)y->data + yoff * (int64_t)es,
                     (const char *)x->data + xoff * (int64_t)es, es, r, len, yst, xst);
    return cpu_move_end(y);
}

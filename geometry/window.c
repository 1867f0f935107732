/* Sliding-window geometry of the convolutions and pools (geometry/window.h). */
#include "geometry/window.h"

#include <string.h>

bool geom_auto_pad_parse(const char *s, geom_auto_pad *out) {
    if (!strcmp(s, "NOTSET") || !*s) *out = GEOM_PAD_NOTSET;
    else if (!strcmp(s, "SAME_UPPER")) *out = GEOM_PAD_SAME_UPPER;
    else if (!strcmp(s, "SAME_LOWER")) *out = GEOM_PAD_SAME_LOWER;
    else if (!strcmp(s, "VALID")) *out = GEOM_PAD_VALID;
    else return false;
    return true;
}

static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

void geom_split_pad(int64_t total, bool same_upper, int64_t *begin, int64_t *end) {
    int64_t half = floor_div(total, 2);
    *begin = same_upper ? half : total - half;
    *end = total - *begin;
}

static bool same_mode(geom_auto_pad ap) {
    return ap == GEOM_PAD_SAME_UPPER || ap == GEOM_PAD_SAME_LOWER;
}

onyx_status geom_window_out(int64_t in, int64_t k, int64_t stride, int64_t dilation,
                            geom_auto_pad auto_pad, bool ceil_mode, int64_t *pad_begin,
                            int64_t *pad_end, int64_t *out, geom_msg *msg) {
    if (auto_pad != GEOM_PAD_NOTSET) *pad_begin = *pad_end = 0;
    if (in < 0 || k < 0) {
        *out = -1;
        return ONYX_OK;
    }
    int64_t win = geom_window_extent(k, dilation);
    if (same_mode(auto_pad)) {
        int64_t o = (in + stride - 1) / stride;
        int64_t total = (o - 1) * stride + win - in;
        geom_split_pad(total < 0 ? 0 : total, auto_pad == GEOM_PAD_SAME_UPPER, pad_begin, pad_end);
        *out = o;
        return ONYX_OK;
    }
    int64_t span = in + *pad_begin + *pad_end - win;
    if (span < 0)
        return geom_fail(msg, ONYX_ERR_SHAPE,
                         "input %lld with pads %lld+%lld is smaller than the dilated kernel "
                         "window %lld",
                         (long long)in, (long long)*pad_begin, (long long)*pad_end,
                         (long long)win);
    int64_t o = span / stride + 1;
    if (ceil_mode && auto_pad == GEOM_PAD_NOTSET && span % stride != 0) {
        o++;
        /* the last window must start inside the input or its left padding */
        if ((o - 1) * stride >= in + *pad_begin) o--;
    }
    *out = o;
    return ONYX_OK;
}

onyx_status geom_transposed_window_out(int64_t in, int64_t k, int64_t stride, int64_t dilation,
                                       int64_t output_padding, geom_auto_pad auto_pad,
                                       int64_t output_shape, int64_t *pad_begin,
                                       int64_t *pad_end, int64_t *out, geom_msg *msg) {
    bool given = output_shape >= 0;
    if (auto_pad != GEOM_PAD_NOTSET) *pad_begin = *pad_end = 0;
    if (in < 0 || k < 0) {
        *out = given ? output_shape : -1;
        return ONYX_OK;
    }
    int64_t win = geom_window_extent(k, dilation), natural, o;
    if (__builtin_mul_overflow(stride, in - 1, &natural) ||
        __builtin_add_overflow(natural, output_padding + win, &natural) ||
        (!given && natural > GEOM_WINDOW_DIM_MAX))
        return geom_fail(msg, ONYX_ERR_SHAPE,
                         "the output of input %lld, stride %lld and kernel %lld is too large",
                         (long long)in, (long long)stride, (long long)win);
    if (given || same_mode(auto_pad)) {
        o = given ? output_shape : in * stride;
        geom_split_pad(natural - o, auto_pad == GEOM_PAD_SAME_UPPER, pad_begin, pad_end);
    } else {
        o = natural - *pad_begin - *pad_end;
    }
    if (o < 1 && in > 0)
        return geom_fail(msg, ONYX_ERR_SHAPE,
                         "output size %lld (input %lld, pads %lld+%lld), expected >= 1",
                         (long long)o, (long long)in, (long long)*pad_begin, (long long)*pad_end);
    *out = o < 0 ? 0 : o;
    return ONYX_OK;
}

bool geom_window_known(const geom_window *w) {
    if (w->n < 0 || w->c < 0 || w->m < 0 || w->group < 0) return false;
    for (int i = 0; i < w->nsp; i++)
        if (w->in[i] < 0 || w->k[i] < 0 || w->out[i] < 0) return false;
    return true;
}

void geom_window_out_dims(const geom_window *w, int64_t *dims) {
    dims[0] = w->n;
    dims[1] = w->m;
    for (int i = 0; i < w->nsp; i++) dims[2 + i] = w->out[i];
}

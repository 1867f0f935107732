/* Sliding-window geometry of the convolutions and pools: one spatial dim at a time, the auto_pad
 * modes, how a total padding splits, the forward window's output size (explicit pads, SAME_*,
 * VALID, ceil mode) and the transposed convolution's; and the resolved window of a whole node
 * (geom_window) that a schema hands to every device's kernel through its plan step
 * (core/op_params.h). Attribute parsing stays in ops/spatial.c and ops/conv/conv.c, which call
 * these. */
#ifndef ONYX_GEOMETRY_WINDOW_H
#define ONYX_GEOMETRY_WINDOW_H

#include "geometry/geom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The convolutions' bound on dims, window attributes and a transposed output's natural size
 * (ops/conv/conv.c checks the first two; geom_transposed_window_out the last). The rules below
 * take inputs so bounded, or the pools' tighter attributes (2^30) over dims up to 2^60, so that
 * (k-1)*d + pads + dims and stride * dim stay inside int64. */
#define GEOM_WINDOW_DIM_MAX ((int64_t)1 << 40)

typedef enum geom_auto_pad {
    GEOM_PAD_NOTSET = 0, /* explicit pads (the default) */
    GEOM_PAD_SAME_UPPER, /* output = ceil(in / stride); an odd padding's extra pixel at the end */
    GEOM_PAD_SAME_LOWER, /* output = ceil(in / stride); the extra pixel at the beginning */
    GEOM_PAD_VALID,      /* no padding */
} geom_auto_pad;

/* The auto_pad attribute's value ("" reads as NOTSET); false for any other string. */
bool geom_auto_pad_parse(const char *s, geom_auto_pad *out);

/* ONNX's split of a total padding (negative for a transposed convolution's crop): half each
 * side, floor division, the odd pixel at the end for SAME_UPPER, at the beginning otherwise. */
void geom_split_pad(int64_t total, bool same_upper, int64_t *begin, int64_t *end);

/* The dilated window (k-1)*d + 1. */
static inline int64_t geom_window_extent(int64_t k, int64_t dilation) {
    return (k - 1) * dilation + 1;
}

/* Output size of a forward window (pools, Conv, Col2Im's blocks) over an input dim `in`: kernel
 * k, stride, dilation >= 1. *pad_begin / *pad_end hold the explicit pads on entry (NOTSET); for
 * SAME_* they are set to the pads the mode implies (total max(0, (out-1)*s + extent - in)), for
 * VALID to 0. NOTSET: floor((in + pads - extent) / s) + 1, or in ceil mode rounded up, except a
 * last window that would start past the input and the left padding is dropped (as onnx's
 * reference and onnxruntime do); SAME_*: ceil(in / s); VALID: floor((in - extent) / s) + 1.
 * ceil_mode counts only with NOTSET. An unknown in or k (-1) gives -1. Fails with ONYX_ERR_SHAPE
 * when the padded input is smaller than one window. */
onyx_status geom_window_out(int64_t in, int64_t k, int64_t stride, int64_t dilation,
                            geom_auto_pad auto_pad, bool ceil_mode, int64_t *pad_begin,
                            int64_t *pad_end, int64_t *out, geom_msg *msg);

/* Output size of a transposed convolution over an input dim `in`: the natural size
 * stride*(in-1) + output_padding + extent, less the explicit pads (NOTSET, VALID: pads 0); or
 * the given output_shape (>= 1; -1 when absent), or in*stride for SAME_*, with the difference
 * to the natural size split into *pad_begin / *pad_end by geom_split_pad (negative: the output
 * reaches past the natural one). Unknown in or k (-1): *out is output_shape (-1 when absent).
 * Fails with ONYX_ERR_SHAPE when the natural size overflows or passes GEOM_WINDOW_DIM_MAX, or
 * the output of a non-empty input is smaller than 1; an empty input gives max(out, 0). */
onyx_status geom_transposed_window_out(int64_t in, int64_t k, int64_t stride, int64_t dilation,
                                       int64_t output_padding, geom_auto_pad auto_pad,
                                       int64_t output_shape, int64_t *pad_begin,
                                       int64_t *pad_end, int64_t *out, geom_msg *msg);

/* The most spatial dims a window has (ranks up to GEOM_MAX_RANK). */
#define GEOM_WINDOW_MAX_SPATIAL (GEOM_MAX_RANK - 2)

/* One node's window resolved over its input's shape: everything a convolution's or a pool's kernel
 * computes with, attributes and auto_pad already applied. Dims follow ONNX's [N, C, spatial...];
 * an unknown dim is -1, and so is what is computed from it. Output o of spatial dim i reads input
 * positions o*stride - pad_b + j*dil for j < k (outside [0, in): padding); a transposed window
 * (ConvTranspose) scatters input i to outputs i*stride - pad_b + j*dil instead, and its pads may
 * be negative (the output reaches past the natural one). */
typedef struct geom_window {
    int nsp;               /* spatial dims */
    bool transposed;       /* ConvTranspose */
    int64_t n, c, m;       /* batch, input channels, output channels (pools: m = c) */
    int64_t group;         /* convolution groups (pools: c, each channel pooled alone) */
    int64_t in[GEOM_WINDOW_MAX_SPATIAL], k[GEOM_WINDOW_MAX_SPATIAL], out[GEOM_WINDOW_MAX_SPATIAL];
    int64_t stride[GEOM_WINDOW_MAX_SPATIAL], dil[GEOM_WINDOW_MAX_SPATIAL];
    int64_t pad_b[GEOM_WINDOW_MAX_SPATIAL], pad_e[GEOM_WINDOW_MAX_SPATIAL];
    int64_t out_pad[GEOM_WINDOW_MAX_SPATIAL]; /* transposed only: output_padding */
} geom_window;

/* Whether every dim of w is known (none is -1): then it holds for every input of those shapes. */
bool geom_window_known(const geom_window *w);

/* The output's dims [N, M, out...] of w (rank nsp + 2). */
void geom_window_out_dims(const geom_window *w, int64_t *dims);

#ifdef __cplusplus
}
#endif

#endif

/* Sliding-window attributes shared by the pooling and convolution families (MaxPool, AveragePool,
 * LpPool, DeformConv, Col2Im, ...): kernel_shape, strides, dilations, pads, auto_pad and
 * ceil_mode, parsed and validated once; the output size rule itself is geometry/window.h's. */
#ifndef ONYX_OPS_SPATIAL_H
#define ONYX_OPS_SPATIAL_H

#include <stdbool.h>
#include <stdint.h>

#include "geometry/window.h"
#include "ops/schema.h"

/* Spatial dims supported (1-D, 2-D and 3-D windows). */
#define SPATIAL_MAX_DIMS 3

typedef struct spatial_params {
    int nd;                                  /* number of spatial dims */
    int64_t kernel[SPATIAL_MAX_DIMS];        /* window size (before dilation) */
    int64_t stride[SPATIAL_MAX_DIMS];
    int64_t dilation[SPATIAL_MAX_DIMS];
    /* Explicit pads; for SAME_* / VALID they are 0 after spatial_parse and filled by
     * spatial_resolve once the input's spatial dims are known. */
    int64_t pad_begin[SPATIAL_MAX_DIMS];
    int64_t pad_end[SPATIAL_MAX_DIMS];
    geom_auto_pad auto_pad;
    bool ceil_mode;                          /* pools only; Conv has no such attribute (0) */
} spatial_params;

/* Reads the window attributes of node n for nd spatial dims (1..SPATIAL_MAX_DIMS).
 * kernel_from_w: the kernel's spatial dims taken from a weight input (Conv/ConvTranspose/
 * DeformConv: W's dims 2.., Col2Im: block_shape), or NULL for pools, which then require the
 * kernel_shape attribute. When both are given they must agree. Every list attribute must have nd
 * entries (pads 2*nd: all begins then all ends); kernel, strides and dilations must be >= 1,
 * pads >= 0; for pools (kernel_from_w NULL) each pad must also be smaller than the dilated
 * window, as a window made only of padding has no value. Fails with ONYX_ERR_INVALID_MODEL and
 * a message naming the attribute. */
onyx_status spatial_parse(const graph_node *n, int nd, const int64_t *kernel_from_w,
                          spatial_params *p);

/* Output spatial dims of the forward sliding window (pools, DeformConv, Col2Im's block count)
 * for input spatial dims in_dims[nd] (the dims after N and C), by geom_window_out per dim (the
 * ONNX rule, ceil mode's dropped last window included). An unknown input dim (-1) gives -1.
 * Fails with ONYX_ERR_SHAPE when a known dim is too small for one window (which also refuses
 * zero-sized spatial dims without padding) or above 2^60. */
onyx_status spatial_output_dims(const spatial_params *p, const int64_t *in_dims,
                                int64_t *out_dims);

/* spatial_output_dims for known input dims, and, for the SAME_* modes, the pads they imply
 * written into p->pad_begin / p->pad_end (geom_window_out). Inference calls it with the
 * input's dims; after it the window of output o along dim i reads input positions
 * o*s - pad_begin + j*d for j < k (those outside [0, in) are padding). */
onyx_status spatial_resolve(spatial_params *p, const int64_t *in_dims, int64_t *out_dims);

/* The window of a pool (kernel_shape, strides, dilations and pads of p, resolved by
 * spatial_resolve for X's spatial dims) over X of rank p->nd + 2 with dims x_dims [N, C,
 * spatial...] (-1 unknown) and pooled spatial dims out_dims: what the pool's kernels get from the
 * plan (core/op_params.h). Each channel is its own group (m = group = c). The other windowed
 * schemas start from it: Col2Im (X the image, the window one per block), MaxUnpool (the
 * transposed window of the pool it undoes), DeformConv (a convolution's m and group set after). */
void spatial_pool_window(const spatial_params *p, const int64_t *x_dims, const int64_t *out_dims,
                         geom_window *w);

/* The dilated window extent (k-1)*d+1 of dim i. */
static inline int64_t spatial_window(const spatial_params *p, int i) {
    return geom_window_extent(p->kernel[i], p->dilation[i]);
}

#endif

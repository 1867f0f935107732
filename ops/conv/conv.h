/* Geometry of Conv, ConvTranspose, ConvInteger and QLinearConv: attribute checks, padding and
 * output sizes, shared by their inference (ops/) and their kernels (kernels_cpu/). */
#ifndef ONYX_OPS_CONV_H
#define ONYX_OPS_CONV_H

#include <stdbool.h>

#include "ops/schema.h"

#define CONV_MAX_SPATIAL (ONYX_MAX_RANK - 2)

/* One convolution's shape. Unknown input dims are -1, and so is everything computed from them.
 * For ConvTranspose `c` and `m` are still input and output channels. */
typedef struct conv_geom {
    int nsp;                        /* spatial dims */
    int64_t n, c, m, group;         /* batch, input channels, output channels, groups */
    int64_t in[CONV_MAX_SPATIAL], k[CONV_MAX_SPATIAL], out[CONV_MAX_SPATIAL];
    int64_t stride[CONV_MAX_SPATIAL], dil[CONV_MAX_SPATIAL];
    int64_t pad_b[CONV_MAX_SPATIAL], pad_e[CONV_MAX_SPATIAL]; /* ConvTranspose: may be < 0 */
    int64_t out_pad[CONV_MAX_SPATIAL];                        /* ConvTranspose only */
} conv_geom;

/* Resolves the geometry of `node` from the shapes of X (input 0) and W (input `w_index`), checking
 * every attribute against them. `transpose` selects ConvTranspose's rules. Fails with
 * ONYX_ERR_SHAPE / ONYX_ERR_INVALID_MODEL and a message naming what was wrong. */
onyx_status conv_geometry(const graph_node *node, bool transpose, int x_rank, const int64_t *x_dims,
                          int w_rank, const int64_t *w_dims, conv_geom *g);

/* Y's dims [N, M, out...] of a resolved geometry (rank nsp + 2). */
void conv_out_dims(const conv_geom *g, int64_t *dims);

/* infer() of the float convolutions: X, W, optional B of one float type. */
onyx_status conv_infer_float(infer_ctx *c, bool transpose, int bias_index);

#define CONV_Q8 (DT_BIT(ONYX_INT8) | DT_BIT(ONYX_UINT8))

/* Checks a zero point or scale (input i, if present): dtype in `types`, a scalar or 1-D of one
 * value, or, when per_channel > 0, of that many values (per_channel -1: count not known yet). */
onyx_status conv_check_qparam(infer_ctx *c, int i, const char *what, dtype_mask types,
                              int64_t per_channel);
/* Geometry and Y's type (dtype `out`) of an 8-bit convolution of x (input 0) by w (w_index). */
onyx_status conv_infer_quant(infer_ctx *c, int w_index, onyx_dtype out, conv_geom *g);

#endif

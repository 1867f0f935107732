/* Geometry of Conv, ConvTranspose, ConvInteger and QLinearConv: attribute checks, padding and
 * output sizes, resolved by their inference (ops/) into the window their kernels get from the
 * plan (core/op_params.h). */
#ifndef ONYX_OPS_CONV_H
#define ONYX_OPS_CONV_H

#include <stdbool.h>

#include "ops/schema.h"

/* Resolves the window of `node` from the shapes of X (input 0, dims in [N, C, spatial...] order)
 * and W (the weights), checking every attribute against them. `transpose` selects
 * ConvTranspose's rules (for which `c` and `m` are still input and output channels). Unknown dims
 * are -1, and so is everything computed from them. Fails with ONYX_ERR_SHAPE /
 * ONYX_ERR_INVALID_MODEL and a message naming what was wrong. */
onyx_status conv_geometry(const graph_node *node, bool transpose, int x_rank, const int64_t *x_dims,
                          int w_rank, const int64_t *w_dims, geom_window *g);

/* infer() of the float convolutions: X, W, optional B of one float type. */
onyx_status conv_infer_float(infer_ctx *c, bool transpose, int bias_index);

#define CONV_Q8 (DT_BIT(ONYX_INT8) | DT_BIT(ONYX_UINT8))

/* Checks a zero point or scale (input i, if present): dtype in `types`, a scalar or 1-D of one
 * value, or, when per_channel > 0, of that many values (per_channel -1: count not known yet). */
onyx_status conv_check_qparam(infer_ctx *c, int i, const char *what, dtype_mask types,
                              int64_t per_channel);
/* Geometry and Y's type (dtype `out`) of an 8-bit convolution of x (input 0) by w (w_index). */
onyx_status conv_infer_quant(infer_ctx *c, int w_index, onyx_dtype out, geom_window *g);

#endif

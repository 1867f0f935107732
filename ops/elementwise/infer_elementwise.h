/* Inference shared by the elementwise op files: unary, n-ary broadcasting and comparison shapes,
 * including the legacy (opset < 7) `broadcast`/`axis` attributes of the binary ops. */
#ifndef ONYX_OPS_INFER_ELEMENTWISE_H
#define ONYX_OPS_INFER_ELEMENTWISE_H

#include "ops/schema.h"

/* Output 0 = input 0's dtype and shape; input 0 must be a tensor with a dtype in mask. */
onyx_status infer_ew_unary(infer_ctx *c, dtype_mask mask);

/* Inputs [0, n_in) share one dtype in mask; output 0 has the broadcast shape and dtype `out`
 * (ONYX_UNDEFINED: the inputs' dtype). Two-input nodes before opset 7 with broadcast=1 follow
 * the legacy rule: input 1 is matched against input 0 at `axis`; the output is input 0's shape. */
onyx_status infer_ew_nary(infer_ctx *c, dtype_mask mask, onyx_dtype out);

/* The shape part of infer_ew_nary, without dtype checks: sets output 0 to dtype `out` and the
 * broadcast shape of inputs [0, n_in) (legacy rule included). For ops with mixed input types. */
onyx_status infer_ew_shape(infer_ctx *c, onyx_dtype out);

/* The legacy (opset < 7) placement of input 1 in input 0's rank: writes input 1's dims padded
 * with 1s to rank_a into `out`. Fails when they do not fit. Shared by schema and kernel. */
onyx_status infer_ew_legacy_dims(int rank_a, const int64_t *dims_a, int rank_b,
                                 const int64_t *dims_b, int64_t axis, bool has_axis,
                                 int64_t *out);

#endif

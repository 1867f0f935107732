/* Inference helpers shared by the com.microsoft quantized ops (QLinear*, QGemm): per-tensor
 * scales and zero points, and the int8/uint8 type set. */
#ifndef ONYX_OPS_CONTRIB_QUANT_CQ_INFER_H
#define ONYX_OPS_CONTRIB_QUANT_CQ_INFER_H

#include "ops/schema.h"

#define CQ_T8 (DT_BIT(ONYX_INT8) | DT_BIT(ONYX_UINT8))

/* Whether the node has input i (not omitted). */
static inline bool cq_has(const infer_ctx *c, int i) { return i < c->n_in && c->in[i]; }

/* Input i is a per-tensor scale: float, a scalar or a 1-element vector when its shape is known.
 * `name` names it in messages. */
onyx_status cq_infer_scale(infer_ctx *c, int i, const char *name);

/* Input i is a per-tensor zero point of type t (ONYX_UNDEFINED: any 8-bit type): a scalar or a
 * 1-element vector. An omitted one passes when `optional`. */
onyx_status cq_infer_zero_point(infer_ctx *c, int i, onyx_dtype t, bool optional,
                                const char *name);

/* Input i is a quantized tensor: int8 or uint8 (t, when known, must match). */
onyx_status cq_infer_quantized(infer_ctx *c, int i, onyx_dtype t, const char *name);

/* Output 0 of type t with the numpy-matmul shape of inputs a and b (1-D operands promoted and
 * their dim dropped again, batch dims broadcast), and the product's geometry for the kernels
 * (infer_set_matmul). */
onyx_status cq_infer_matmul(infer_ctx *c, int a, int b, onyx_dtype t);

#endif

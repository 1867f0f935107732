/* Scale/zero-point granularity shared by QuantizeLinear and DequantizeLinear (schemas and CPU
 * kernels): per tensor, per axis, or blocked along one axis. */
#ifndef ONYX_OPS_QUANT_COMMON_H
#define ONYX_OPS_QUANT_COMMON_H

#include "ops/schema.h"

/* x viewed as [outer, D, inner] around the quantization axis (per tensor: [1, 1, numel]); the
 * scale of element
 * (o, a, i) is at index 0 (per tensor), a (per axis) or (o * ceil(D / block) + a / block) *
 * inner + i (blocked). */
typedef struct quant_layout {
    int64_t outer, D, inner;
    int64_t block;   /* > 0: blocked */
    bool per_tensor;
} quant_layout;

/* From x's and the scale's shapes (all dims known) and the axis/block_size attributes; checks
 * that the scale has one of the three forms. `what` names the scale input for messages. */
onyx_status quant_layout_of(int xrank, const int64_t *xdims, int srank, const int64_t *sdims,
                            int64_t axis, int64_t block_size, const char *what,
                            quant_layout *out);

/* ceil(d / block) for d >= 0, block >= 1, without the overflow of d + block - 1 */
static inline int64_t quant_blocks(int64_t d, int64_t block) {
    return d > 0 ? (d - 1) / block + 1 : 0;
}

static inline int64_t quant_scale_index(const quant_layout *l, int64_t o, int64_t a, int64_t i) {
    if (l->per_tensor) return 0;
    if (!l->block) return a;
    return (o * quant_blocks(l->D, l->block) + a / l->block) * l->inner + i;
}

/* Infer-time check of inputs 1 (scale) and 2 (zero point, optional) against x (input 0), when
 * their shapes are known. */
onyx_status quant_infer_check(infer_ctx *c, int64_t axis, int64_t block_size);

#endif

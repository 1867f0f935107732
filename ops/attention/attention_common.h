/* What Attention and FlexAttention share between their schemas and the CPU kernels: the float
 * types, and for the schemas their geometry (geometry/attention.h) read from a node's input types
 * and head-count attributes, which they hand to every device's kernel (core/op_params.h); the
 * com.microsoft attention ops read shapes alike. */
#ifndef ONYX_OPS_ATTENTION_COMMON_H
#define ONYX_OPS_ATTENTION_COMMON_H

#include "geometry/attention.h"
#include "ops/schema.h"

#define OPS_ATT_FLOATS                                                                             \
    (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16))

/* t's shape as the geometry rules read it, in *s; NULL for an absent input (t NULL). */
static inline const geom_att_shape *ops_att_shape(const type_info *t, geom_att_shape *s) {
    if (!t) return NULL;
    *s = (geom_att_shape){t->rank, t->dims};
    return s;
}

/* geom_attention_onnx on the types of Q, K, V and (NULL when absent) past_key / past_value, with
 * the node's q_num_heads and kv_num_heads; a refusal is the thread's error. */
onyx_status ops_attention_dims(const graph_node *n, const type_info *q, const type_info *k,
                               const type_info *v, const type_info *past_k,
                               const type_info *past_v, geom_attention *out);

/* geom_attention_mask on attn_mask's type; a refusal is the thread's error. */
onyx_status ops_attention_check_mask(const type_info *mask, const geom_attention *d);

#endif

/* Geometry of Attention and FlexAttention (batch, heads, lengths, head sizes) read from the input
 * shapes and attributes, shared by their inference and the CPU kernels so both check alike. */
#ifndef ONYX_OPS_ATTENTION_COMMON_H
#define ONYX_OPS_ATTENTION_COMMON_H

#include "ops/schema.h"

#define OPS_ATT_FLOATS                                                                             \
    (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16))

/* Unknown sizes are -1 (inference before shapes are known); the kernels see them all known. */
typedef struct ops_att_dims {
    bool packed;               /* 3-D inputs [B, S, H*D] rather than 4-D [B, H, S, D] */
    int64_t batch, q_heads, kv_heads;
    int64_t q_len, kv_len;     /* sequence lengths of Q and of the new K/V */
    int64_t past_len, total_len; /* past_len 0 without a past cache; total = past + kv */
    int64_t head, v_head;      /* head sizes of Q/K and of V */
} ops_att_dims;

/* Attention's geometry from the shapes of Q, K, V and (NULL when absent) past_key/past_value,
 * each given as rank + dims (rank -1: unknown). Checks ranks, head counts (q a multiple of kv,
 * dividing the hidden sizes of 3-D inputs), matching batch/length/head sizes. */
onyx_status ops_attention_dims(const graph_node *n, const type_info *q, const type_info *k,
                               const type_info *v, const type_info *past_k,
                               const type_info *past_v, ops_att_dims *out);

/* Checks attn_mask's shape against [B, Hq, Sq, total]: rank <= 4, each leading dim 1 or equal;
 * the last dim at most total (padded with -inf; in v23 a last dim of 1 broadcasts instead). */
onyx_status ops_attention_check_mask(const graph_node *n, const type_info *mask,
                                     const ops_att_dims *d);

#endif

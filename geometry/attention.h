/* Attention geometry: the batch, head counts, sequence lengths and head sizes of the attention
 * ops (ONNX Attention 23-25 and FlexAttention, com.microsoft Attention, MultiHeadAttention and
 * GroupQueryAttention) from their input shapes and head-count attributes, and ONNX attn_mask's
 * fit to the scores. Unknown dims (-1, inference before shapes are known) stay unknown where they
 * decide; kernels pass known shapes. Reading the attributes and refusing the forms onyx does not
 * implement (rotary, quantized caches, ...) stays in ops/attention/ and ops/contrib_nlp/. */
#ifndef ONYX_GEOMETRY_ATTENTION_H
#define ONYX_GEOMETRY_ATTENTION_H

#include "geometry/geom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An input's shape as the rules read it: rank -1 when unknown (dims then unread). An optional
 * input that is absent is passed as a NULL pointer. */
typedef struct geom_att_shape {
    int rank;
    const int64_t *dims;
} geom_att_shape;

/* One attention's geometry; unknown sizes are -1. */
typedef struct geom_attention {
    int64_t batch, q_heads, kv_heads;
    int64_t q_len, kv_len;       /* sequence lengths of Q and of the new K/V */
    int64_t past_len, total_len; /* past_len 0 without a past cache; total = past + kv */
    int64_t head, v_head;        /* head sizes of Q/K and of V */
    bool packed;     /* ONNX Attention: 3-D inputs [B, S, H*D] rather than 4-D [B, H, S, D] */
    bool kv_bnsh;    /* MultiHeadAttention: key and value given as [B, N, L, D] */
    bool qkv_packed; /* GroupQueryAttention: key and value packed in the query */
    int64_t in_hidden; /* com.microsoft.Attention: the input's hidden size */
} geom_attention;

/* ONNX Attention (and FlexAttention, 4-D only) from Q, K, V and past_key / past_value (NULL when
 * absent): 3-D inputs split their hidden sizes into q_num_heads and kv_num_heads (attributes,
 * which 4-D inputs do not read). Checks ranks (3 or 4, one for the three; past 4), head counts
 * (at least one; Q's a multiple of K/V's, dividing the hidden sizes of 3-D inputs) and that
 * batch, lengths and head sizes agree; past_key and past_value go together. */
onyx_status geom_attention_onnx(const geom_att_shape *q, const geom_att_shape *k,
                                const geom_att_shape *v, const geom_att_shape *past_k,
                                const geom_att_shape *past_v, int64_t q_num_heads,
                                int64_t kv_num_heads, geom_attention *out, geom_msg *msg);

/* ONNX attn_mask against the scores [B, Hq, Sq, total]: rank 1 to 4 (unknown passes), each
 * leading dim 1 or equal, the last at most total (a shorter one is padded with -inf; v23 also
 * broadcasts a last dim of 1, which the kernels decide). */
onyx_status geom_attention_mask(const geom_att_shape *mask, const geom_attention *d,
                                geom_msg *msg);

/* com.microsoft.Attention: input [B, S, hidden], weights [hidden, Q+K+V widths], bias [widths]
 * and past [2, B, N, P, D] (NULL when absent), num_heads > 0, and the n_qkv values of
 * qkv_hidden_sizes (3 positive sizes; none: the weights' columns in three equal parts). Q and K
 * widths must be equal, and K and V's with a past. */
onyx_status geom_attention_ms(const geom_att_shape *input, const geom_att_shape *weights,
                              const geom_att_shape *bias, const geom_att_shape *past,
                              int64_t num_heads, const int64_t *qkv_hidden_sizes, size_t n_qkv,
                              geom_attention *out, geom_msg *msg);

/* com.microsoft.MultiHeadAttention: query [B, S, hidden], key and value [B, L, hidden] or
 * [B, N, L, D] (required), bias [Q+K+V hidden sizes], past_key / past_value [B, N, P, D] (with a
 * 3-D key only) and num_heads > 0. */
onyx_status geom_attention_mha(const geom_att_shape *query, const geom_att_shape *key,
                               const geom_att_shape *value, const geom_att_shape *bias,
                               const geom_att_shape *past_k, const geom_att_shape *past_v,
                               int64_t num_heads, geom_attention *out, geom_msg *msg);

/* com.microsoft.GroupQueryAttention: query [B, S, num_heads*D], or with key and value absent
 * [B, S, (num_heads + 2*kv_num_heads)*D] (packed QKV); key and value [B, S, kv_num_heads*D];
 * past_key / past_value [B, kv_num_heads, P, D]; num_heads a multiple of kv_num_heads > 0.
 * `total` is total_sequence_length's value when known (else -1): at least S, and total_len comes
 * out as the present buffers' length, max(total, P). With `window_cache` > 0 (sliding_window_cache
 * with that local_window_size) past and present are window-sized buffers: the past is required,
 * at least window_cache long, and total_len is its length. */
onyx_status geom_attention_gqa(const geom_att_shape *query, const geom_att_shape *key,
                               const geom_att_shape *value, const geom_att_shape *past_k,
                               const geom_att_shape *past_v, int64_t num_heads,
                               int64_t kv_num_heads, int64_t total, int64_t window_cache,
                               geom_attention *out, geom_msg *msg);

#ifdef __cplusplus
}
#endif

#endif

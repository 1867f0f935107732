/* Attention geometry: the batch, head counts, sequence lengths and head sizes of the attention
 * ops (ONNX Attention 23-25 and FlexAttention, com.microsoft Attention, MultiHeadAttention and
 * GroupQueryAttention) from their input shapes and head-count attributes, and ONNX attn_mask's
 * fit to the scores; a chain of products that the fusion pass makes one attention. Unknown dims
 * (-1, inference before shapes are known) stay unknown where they decide. The schemas resolve it
 * once per plan and every device's kernel reads it from there (core/op_params.h). Reading the attributes and refusing the forms onyx does not
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

/* Which op's rule made a geometry: what its fields mean and which of them a plan knows. */
typedef enum geom_att_form {
    GEOM_ATT_ONNX,  /* ONNX Attention and FlexAttention */
    GEOM_ATT_MS,    /* com.microsoft.Attention (in_hidden: its input's hidden size) */
    GEOM_ATT_MHA,   /* com.microsoft.MultiHeadAttention */
    GEOM_ATT_GQA,   /* com.microsoft.GroupQueryAttention: total_len is data of each run */
    GEOM_ATT_CHAIN, /* attention spelled out as products, which the fusion pass makes one node */
} geom_att_form;

/* How com.microsoft's mask_index / key_padding_mask restricts the keys each query sees (set by
 * ops/contrib_nlp/, which reads it with the refusals of the forms onyx does not implement). */
typedef enum geom_att_mask {
    GEOM_ATT_MASK_NONE,
    GEOM_ATT_MASK_UNKNOWN,   /* a mask of unknown rank: each run decides */
    GEOM_ATT_MASK_END,       /* [B]: keys at or after end[b] are padding */
    GEOM_ATT_MASK_END_START, /* [2B]: end positions, then start positions (left padding) */
    GEOM_ATT_MASK_2D,        /* [B, T] 0/1 */
    GEOM_ATT_MASK_3D,        /* [B, S, T] 0/1 */
} geom_att_mask;

/* One attention's geometry; unknown sizes are -1. A plan keeps it with the node's step
 * (core/op_params.h) and every device's kernel reads it from there. */
typedef struct geom_attention {
    geom_att_form form;
    int64_t batch, q_heads, kv_heads;
    int64_t q_len, kv_len;       /* sequence lengths of Q and of the new K/V */
    int64_t past_len, total_len; /* past_len 0 without a past cache; total = past + kv (GQA:
                                    the present buffers' length, geom_attention_gqa_total) */
    int64_t head, v_head;        /* head sizes of Q/K and of V */
    bool packed;     /* ONNX Attention: 3-D inputs [B, S, H*D] rather than 4-D [B, H, S, D] */
    bool kv_bnsh;    /* MultiHeadAttention: key and value given as [B, N, L, D] */
    bool qkv_packed; /* GroupQueryAttention: key and value packed in the query */
    int64_t in_hidden; /* com.microsoft.Attention: the input's hidden size */
    int64_t window_cache; /* GroupQueryAttention sliding_window_cache=1: local_window_size (past
                             and present are window-sized buffers), else 0 */
    int64_t rot, max_pos; /* GroupQueryAttention do_rotary: rotary dim and the cos/sin caches'
                             rows (set by ops/contrib_nlp/), else 0 */
    geom_att_mask mask;   /* com.microsoft Attention and MultiHeadAttention */
} geom_attention;

/* Whether d holds no unknown size: the same for every run of a plan. GroupQueryAttention's
 * total_len is not asked: it comes from each run's total_sequence_length. */
bool geom_attention_known(const geom_attention *d);

/* The element count of the op's first input (Q, or com.microsoft.Attention's input) that d is
 * for, all of d known: what a kernel checks its input against. */
int64_t geom_attention_query_numel(const geom_attention *d);

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

/* GroupQueryAttention's geometry for one run, from its plan's (*plan, of geom_attention_gqa) and
 * total_sequence_length's value `total` (-1: unknown): total_len as geom_attention_gqa says. */
onyx_status geom_attention_gqa_total(const geom_attention *plan, int64_t total,
                                     geom_attention *out, geom_msg *msg);

/* The attention a chain of products makes, Q [.., S, Dk] @ K^T [.., Dk, T] then the
 * probabilities @ V [.., T, Dv] into Y [.., S, Dv], from the views' dims: all of rank 3
 * ([H, rows, cols]: batch 1) or all of rank 4 ([B, H, rows, cols]), batch and heads equal. */
onyx_status geom_attention_chain(int rank, const int64_t *q, const int64_t *kt, const int64_t *v,
                                 const int64_t *y, geom_attention *out, geom_msg *msg);

#ifdef __cplusplus
}
#endif

#endif

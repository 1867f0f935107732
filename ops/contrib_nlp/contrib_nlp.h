/* Shared by the com.microsoft transformer ops' schemas and their CPU kernels: type masks, and the
 * geometry of Attention / MultiHeadAttention / GroupQueryAttention read from input shapes and
 * attributes (geometry/attention.h's geom_attention, with the mask's form and GQA's rotary
 * caches), which their schemas hand to every device's kernel (core/op_params.h). */
#ifndef ONYX_OPS_CONTRIB_NLP_H
#define ONYX_OPS_CONTRIB_NLP_H

#include "geometry/attention.h"
#include "geometry/nbits.h"
#include "ops/schema.h"

#define CNLP_MS "com.microsoft"
#define CNLP_T (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16))
#define CNLP_TD (CNLP_T | DT_BIT(ONYX_DOUBLE))

/* Known-or-unknown (-1) dims agree unless both are known and differ. */
static inline bool cnlp_agree(int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; }

/* Input i is present in the node. */
static inline bool cnlp_has(const infer_ctx *c, int i) { return i < c->n_in && c->in[i]; }

/* Requires input i, when present, to have input ref's dtype (when both are known). */
onyx_status cnlp_same_dtype(infer_ctx *c, int ref, int i);

/* com.microsoft.Attention: inputs input, weights, bias, mask_index, past, attention_bias,
 * past_sequence_length (types in `in`, NULL when absent); unknown sizes are -1. Refuses what the
 * kernels do not do (rotary, shared past/present buffers, 4-D Megatron masks) with a message
 * saying so. */
onyx_status cnlp_attention_dims(const graph_node *n, int n_in, const type_info *const *in,
                                geom_attention *d);

/* com.microsoft.MultiHeadAttention: query, key, value, bias, key_padding_mask, attention_bias,
 * past_key, past_value, past_sequence_length, cache_indirection. */
onyx_status cnlp_mha_dims(const graph_node *n, int n_in, const type_info *const *in,
                          geom_attention *d);

/* com.microsoft.GroupQueryAttention: query, key, value, past_key, past_value, seqlens_k,
 * total_sequence_length, cos_cache, sin_cache, position_ids, attention_bias, head_sink, k_scale,
 * v_scale (q_norm_weight and k_norm_weight, which onnxruntime's CPU kernel refuses too, are
 * refused). `total` is total_sequence_length's value when known (else -1); total_len comes out as
 * the present buffers' length, max(total, past buffer length), or with sliding_window_cache=1 the
 * past buffer's length (its capacity, at least local_window_size). */
onyx_status cnlp_gqa_dims(const graph_node *n, int n_in, const type_info *const *in, int64_t total,
                          geom_attention *d);

/* GroupQueryAttention's KV cache as onnxruntime's CPU kernel takes kv_cache_bit_width,
 * k_quant_type and v_quant_type: float (bits 0), or quantized symmetrically, q = clamp(rint(x /
 * scale)), to int8 (bits 8) or to int4 pairs in a uint8 (bits 4: +8 biased, the even column in
 * the low nibble), with k_scale and v_scale: one scale (PER_TENSOR) or one per kv head and
 * column (PER_CHANNEL), the same kind for both caches. */
typedef struct cnlp_kv_quant {
    int bits;
    bool per_channel;
} cnlp_kv_quant;

onyx_status cnlp_gqa_kv_quant(const graph_node *n, cnlp_kv_quant *q);

/* The attention_bias input (B or 1, N or 1, S, T) against the geometry. */
onyx_status cnlp_check_attn_bias(const type_info *t, const geom_attention *d);

/* Effective scale: the attribute when set and non-zero, else 1/sqrt(head). */
float cnlp_att_scale(const graph_node *n, int64_t head);

/* RotaryEmbedding's geometry (the com.microsoft form): input [B, S, H] with num_heads, or
 * [B, N, S, D]; position_ids [1] (a start offset) or [B, S]; cos/sin caches [max_pos, rot/2]. */
typedef struct cnlp_rope_dims {
    int64_t batch, seq, heads, head, rot, max_pos;
    bool bnsh;       /* 4-D input [B, N, S, D] */
    bool pos_offset; /* position_ids has one element: positions start + s */
} cnlp_rope_dims;

onyx_status cnlp_rope_dims_of(const graph_node *n, const type_info *x, const type_info *pos,
                              const type_info *cos, const type_info *sin, cnlp_rope_dims *d);

/* MatMulNBits' attributes and the packed sizes they imply (geometry/nbits.h). */
typedef geom_nbits cnlp_nbits;

onyx_status cnlp_nbits_of(const graph_node *n, cnlp_nbits *q);

/* Refuses t (named `name` in the message) when its shape and `want` are known and its element
 * count is not `want`: MatMulNBits' B, scales and zero points, which may come in any shape, and
 * GroupQueryAttention's cache scales. */
onyx_status cnlp_want_numel(const type_info *t, const char *name, int64_t want);

/* GatherBlockQuantized's geometry: data (int4/uint4, uint8 holding 2/4/8-bit codes packed along
 * its last axis, or a float8/float4 type) dequantized per block of `block` along quantize_axis with
 * scales (and zero points for the integer types), gathered along gather_axis. Dims are logical
 * (a packed uint8 row counts its codes). Unknown dims are -1 during inference. */
typedef struct cnlp_gbq {
    onyx_dtype data_t, scale_t;
    int rank, gather_axis, quantize_axis;
    int64_t bits, block;  /* block: the whole quantize axis for float data with block_size 0 */
    int64_t dims[ONYX_MAX_RANK];        /* data's logical dims */
    bool scale_bcast[ONYX_MAX_RANK];    /* float data: scales dim 1 broadcast along that axis */
    int64_t n_blocks;                   /* scales' dim along quantize_axis */
    bool has_zp;
} cnlp_gbq;

/* Checks the node's attributes and the data, scales and zero points (zp NULL when absent) against
 * each other as onnxruntime does, refusing what it refuses with a message naming it. */
onyx_status cnlp_gbq_of(const graph_node *n, const type_info *data, const type_info *scales,
                        const type_info *zp, cnlp_gbq *g);

#endif

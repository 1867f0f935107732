/* The chain a fused step carries (fuse_chain: post-ops after a Conv or a MatMul,
 * BatchNormalization folded into weights, pre-ops on a Conv's X, a squeeze-and-excitation scale,
 * channels-last reads and writes and the opaque layout between convolutions, strided views of a
 * MatMul's operands, attention spelled out), as a kernel flagged KF_POST_OPS or
 * KF_DEVICE_EPILOGUE receives it in kernel_prep.fused. Types only: the passes that build chains
 * are core/fuse.h's (the CPU's) and core/fuse_device.h's (the devices' epilogues). */
#ifndef ONYX_CORE_FUSE_CHAIN_H
#define ONYX_CORE_FUSE_CHAIN_H

#include "core/value.h"

typedef enum fuse_kind {
    FUSE_BATCHNORM,   /* y = (x - mean) * scale / sqrt(var + epsilon) + bias, per channel */
    FUSE_RELU,        /* alpha: slope below 0 (LeakyRelu), 0 for Relu */
    FUSE_CLIP,        /* alpha = low, beta = high */
    FUSE_SIGMOID,
    FUSE_TANH,
    FUSE_HARDSIGMOID, /* max(0, min(1, alpha * x + beta)) */
    FUSE_SWISH,       /* x * sigmoid(alpha * x) (SiLU: alpha 1) */
    FUSE_HARDSWISH,   /* x * max(0, min(1, x / 6 + 1 / 2)) */
    FUSE_GELU,        /* alpha 0: the erf form, 1: the tanh approximation */
    FUSE_SUM,         /* y = x + addend (same shape), the addend is fused-node input `input` */
    FUSE_SCALE,       /* y = x * scale[c] (scale: plan constant, float, [M] or [1]) */
    FUSE_SHIFT,       /* y = x + bias[c] (bias: plan constant, float, [M] or [1]) */
    FUSE_LINEAR,      /* y = alpha * x (a Mul or Div by one constant, after a non-affine step) */
} fuse_kind;

typedef struct fuse_op {
    fuse_kind kind;
    float alpha, beta, epsilon;
    const tensor *scale, *bias, *mean, *var; /* FUSE_BATCHNORM: plan constants, float, [M] */
    int input;
} fuse_op;

#define FUSE_MAX_OPS 8

/* What one fused step applies, a group of fields per idea, each filled by its file of the CPU
 * pass (core/fuse_*.c; a device epilogue, core/fuse_device.c, fills n and ops alone).
 *
 * Post-ops (core/fuse_postops.c), in order: BatchNormalization, FUSE_SCALE and FUSE_SHIFT,
 * which fold into constant weights, only before any other kind.
 *
 * The opaque layout (core/fuse_blocked.c): which of the step's tensors are opaque, read and
 * written only by conv steps of this same kernel (X as input 0, an addend, or its output) and by
 * CPU steps of KF_OPAQUE_LAYOUT kernels (channel Concat, pooling, global pooling, a
 * squeeze-and-excitation Mul: they get opaque_in0 and opaque_out0 together, all their tensors
 * opaque; a QuantizeLinear of a plain float X gets opaque_out0 alone). Opaque float tensors of
 * rank 3 to 5 are stored channels last ([N, spatial..., C] for the logical [N, C, spatial...]:
 * oneDNN's nwc / nhwc / ndhwc, the layout its brgemm convolution kernels take), no padding
 * (plan_value.channels_last); a Concat of them along channels joins them pixel by pixel. */
typedef struct fuse_chain {
    int n;
    fuse_op ops[FUSE_MAX_OPS];
    bool opaque_in0, opaque_out0, opaque_addend;
    /* Pre-ops (core/fuse_preops.c): steps applied to X before the convolution (pre-activation
     * networks: BatchNormalization, Mul / Add of per-channel constants, then at most one
     * FUSE_RELU last): the fused node's input 0 is their input. X is then never opaque. */
    int n_pre;
    fuse_op pre[FUSE_MAX_OPS];
    /* A squeeze-and-excitation scale on X (core/fuse_conv_io.c: X = x * s, s [1, C, 1, ...]
     * computed per run), taken into the weights per run instead (W[:, c] * s[c]: fewer values
     * than X where it is chosen): the fused node's input 0 is x, input 4 is s. Only on a float,
     * ungrouped Conv with constant weights and no pre-ops. */
    bool x_scale;
    /* Channels-last reads and writes (core/fuse_conv_io.c): a float Conv that reads X through the
     * Transpose that makes it from a channels-last tensor (perm [0, r-1, 1, ..., r-2]; the fused
     * node's input 0 is that tensor), or writes Y through the one that makes a channels-last
     * tensor of it (perm [0, 2, ..., r-1, 1]; the fused node's output is that): the Transpose is
     * the conv's own reorder (ConvNeXt's blocks and LayerNorm2d write their channels last around
     * each conv). */
    bool x_channels_last, y_channels_last;
    /* Strided views (core/fuse_views.c): a MatMul of two computed operands reads A (view 0) or B
     * (view 1) through the Transposes and Reshapes it absorbed, as a strided view of the tensor
     * they start from (the fused node's input), and may write its result through some (view 2:
     * the fused node's output is the last one's, stored dense). view_rank 0: no view; else the
     * operand's (result's) own dims and, per dim, its stride in elements over that tensor. */
    int view_rank[4];
    int64_t view_dims[4][ONYX_MAX_RANK], view_strides[4][ONYX_MAX_RANK];
    /* Where each view starts in its tensor, in elements: nonzero only for an attention chain's
     * Q, K^T and V read through a Gather of one index (torch's q, k and v from one packed
     * projection); a MatMul's views start at 0. */
    int64_t view_offset[4];
    /* The product of the constant scalars that multiplied (or divided) A and B on their way from
     * the views (or the fused node's inputs), where has_in_scale: applied to the product first.
     * Only with two computed operands, and never with a bias. */
    bool has_in_scale;
    float in_scale;
    /* Attention spelled out (core/fuse_attention.c), MatMul(Q, K^T) [scaled] [+ mask] -> Softmax
     * -> MatMul(., V), as one step of the CPU Attention kernel: its inputs are Q, K^T, V and the
     * mask (or none), read through views 0, 1 and 3, its output written through view 2, the
     * scores scaled by in_scale; nan_to_zero: probabilities that are NaN (a row masked out
     * entirely, or NaN in the scores: the whole row then) count as 0, as Where(IsNaN(P), 0, P)
     * has it. */
    bool attention, nan_to_zero;
} fuse_chain;

#endif

/* A node's resolved parameters (as ggml's op_params): the geometry its schema computes once, when
 * a plan infers the node's shapes, kept with the node's plan step and handed to every device's
 * kernel through kernel_prep and kernel_call (core/kernel.h). Kernels read it and never derive it
 * again from the attributes. A plan's parameters are read-only; where they have unknown dims (a
 * generic plan), each run resolves them again from its own inputs, for that run alone. So does a
 * node whose geometry comes from a non-constant input (a Slice's starts, ends, axes or steps, a
 * Pad's pads or axes, computed by the graph): its schema resolves none at plan time
 * (OP_PARAMS_UNRESOLVED), and each run's inference, which sees that run's inputs, resolves it.
 * What is data of each run, not geometry, stays per run and is read by the kernel from its
 * inputs: GroupQueryAttention's total_sequence_length value (the present buffers' length,
 * geom_attention_gqa_total) and seqlens_k (each row's past length). */
#ifndef ONYX_CORE_OP_PARAMS_H
#define ONYX_CORE_OP_PARAMS_H

#include "core/status.h"
#include "geometry/attention.h"
#include "geometry/axes.h"
#include "geometry/depth_space.h"
#include "geometry/matmul.h"
#include "geometry/pads.h"
#include "geometry/slice.h"
#include "geometry/window.h"

typedef enum op_params_kind {
    OP_PARAMS_NONE = 0,   /* the schema resolves nothing for its kernels */
    OP_PARAMS_UNRESOLVED, /* a plan's step of an OP_GEOMETRY schema that resolved none yet
                             (inputs of unknown type or rank, geometry inputs of unknown value):
                             each run resolves what it gives */
    OP_PARAMS_WINDOW,     /* convolutions and pools: geometry/window.h's geom_window */
    OP_PARAMS_SLICE,      /* Slice: geometry/slice.h's geom_slice */
    OP_PARAMS_PADS,       /* Pad: geometry/pads.h's geom_pads */
    OP_PARAMS_BLOCKS,     /* DepthToSpace, SpaceToDepth: geometry/depth_space.h's geom_blocks */
    /* the products and the ops along axes: written only once known (all dims of the operands;
     * the input's rank), so never partly unknown */
    OP_PARAMS_MATMUL,     /* MatMul, MatMulInteger, QLinearMatMul, FusedMatMul,
                             MatMulIntegerToFloat, DynamicQuantizeMatMul: geometry/matmul.h's
                             geom_matmul */
    OP_PARAMS_AXES,       /* the reductions, ArgMax/ArgMin, the softmaxes, the normalizations:
                             geometry/axes.h's geom_axis_set */
    OP_PARAMS_ATTENTION,  /* ONNX Attention and FlexAttention, com.microsoft Attention,
                             MultiHeadAttention and GroupQueryAttention, and the fusion pass's
                             Attention node: geometry/attention.h's geom_attention */
} op_params_kind;

typedef struct op_params {
    op_params_kind kind;
    union {
        geom_window window;
        geom_slice slice;
        geom_pads pads;
        geom_blocks blocks;
        geom_matmul matmul;
        geom_axis_set axes;
        geom_attention attention;
    } u;
} op_params;

/* Whether p holds no unknown dim: the same for every run of the plan. */
static inline bool op_params_known(const op_params *p) {
    switch (p->kind) {
    case OP_PARAMS_WINDOW: return geom_window_known(&p->u.window);
    case OP_PARAMS_SLICE: return geom_slice_known(&p->u.slice);
    case OP_PARAMS_PADS: return geom_pads_known(&p->u.pads);
    case OP_PARAMS_BLOCKS: return geom_blocks_known(&p->u.blocks);
    case OP_PARAMS_ATTENTION: return geom_attention_known(&p->u.attention);
    case OP_PARAMS_UNRESOLVED: return false;
    case OP_PARAMS_MATMUL: case OP_PARAMS_AXES: break;
    case OP_PARAMS_NONE: break;
    }
    return true;
}

/* p's window, or NULL when p is NULL or holds another kind. */
static inline const geom_window *op_params_window(const op_params *p) {
    return p && p->kind == OP_PARAMS_WINDOW ? &p->u.window : NULL;
}

/* p's slice, pads or depth/space blocks, or NULL when p is NULL or holds another kind. */
static inline const geom_slice *op_params_slice(const op_params *p) {
    return p && p->kind == OP_PARAMS_SLICE ? &p->u.slice : NULL;
}
static inline const geom_pads *op_params_pads(const op_params *p) {
    return p && p->kind == OP_PARAMS_PADS ? &p->u.pads : NULL;
}
static inline const geom_blocks *op_params_blocks(const op_params *p) {
    return p && p->kind == OP_PARAMS_BLOCKS ? &p->u.blocks : NULL;
}

/* ---- the products and the ops along axes */

/* p's product geometry, or NULL when p is NULL or holds another kind. */
static inline const geom_matmul *op_params_matmul(const op_params *p) {
    return p && p->kind == OP_PARAMS_MATMUL ? &p->u.matmul : NULL;
}

/* p's axes, or NULL when p is NULL or holds another kind. */
static inline const geom_axis_set *op_params_axes(const op_params *p) {
    return p && p->kind == OP_PARAMS_AXES ? &p->u.axes : NULL;
}

/* p's attention geometry, or NULL when p is NULL or holds another kind. */
static inline const geom_attention *op_params_attention(const op_params *p) {
    return p && p->kind == OP_PARAMS_ATTENTION ? &p->u.attention : NULL;
}

/* The attention geometry of a kernel's prepare or run, from its params; an error where the plan
 * handed none, or one for another form of attention, or (query_numel >= 0, a run's) for a first
 * input of another size than query_numel. */
static inline onyx_status kernel_attention(const op_params *params, geom_att_form form,
                                           int64_t query_numel, const geom_attention **out) {
    *out = op_params_attention(params);
    if (!*out) return onyx_error(ONYX_ERR_RUNTIME, "the plan handed the kernel no attention "
                                 "geometry");
    if ((*out)->form != form)
        return onyx_error(ONYX_ERR_RUNTIME, "the plan's attention geometry is for another op");
    int64_t want = geom_attention_query_numel(*out);
    if (query_numel >= 0 && query_numel != want)
        return onyx_error(ONYX_ERR_RUNTIME, "the plan's attention geometry is for a first input "
                          "of %lld elements, the input has %lld", (long long)want,
                          (long long)query_numel);
    return ONYX_OK;
}

/* The axes of a kernel's run over an input of rank `rank`, from its params; an error where the
 * plan handed none, or resolved them for another rank. */
static inline onyx_status kernel_axes(const op_params *params, int rank,
                                      const geom_axis_set **out) {
    *out = op_params_axes(params);
    if (!*out) return onyx_error(ONYX_ERR_RUNTIME, "the plan handed the kernel no axes");
    if ((*out)->rank != rank)
        return onyx_error(ONYX_ERR_RUNTIME, "the plan's axes are for rank %d, the input has rank "
                          "%d", (*out)->rank, rank);
    return ONYX_OK;
}

/* kernel_axes for an op along one axis: that axis in *axis. */
static inline onyx_status kernel_axis(const op_params *params, int rank, int *axis) {
    *axis = -1;
    const geom_axis_set *a;
    TRY(kernel_axes(params, rank, &a));
    if (a->axis < 0)
        return onyx_error(ONYX_ERR_RUNTIME, "the plan handed the kernel no single axis");
    *axis = a->axis;
    return ONYX_OK;
}

#endif

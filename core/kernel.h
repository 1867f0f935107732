/* The kernel interface every device table implements: prepare once with shapes known, run many
 * times computing only. Types and inline accessors only: what a kernel calls of the executor is
 * declared by the headers of the sources that define it, core/exec_run.h (kernel_shared,
 * kernel_shared_weight, kernel_weight_bytes, kernel_check_run) and core/exec_frame.h
 * (kernel_scratch, the frame's views). */
#ifndef ONYX_CORE_KERNEL_H
#define ONYX_CORE_KERNEL_H

#include "core/device.h"
#include "core/graph.h"
#include "core/op_params.h"

struct exec_frame;
struct subgraph;
struct exec_env;


enum {
    /* Output 0 may share input 0's buffer (Reshape, Flatten, Squeeze, Unsqueeze, Identity).
     * The kernel copies only when out->data != in->data. */
    KF_ALIAS_INPUT0 = 1u << 0,
    /* The kernel sizes its outputs itself (data-dependent shapes, sequences, control flow): the
     * executor hands it empty values and the kernel fills them (value_alloc_tensor, …). */
    KF_DYNAMIC_OUTPUT = 1u << 1,
    /* The kernel takes post-ops (core/fuse.h) in kernel_prep.fused: the planner may fuse the
     * nodes that follow it into its step. */
    KF_POST_OPS = 1u << 2,
    /* The kernel runs on tensors in the convolutions' opaque layout (channels last, core/fuse.h)
     * when all of its tensors are (a Concat along channels, Max/AveragePool, global pooling, a
     * per-channel Mul; a QuantizeLinear's Y alone): the fusion pass may keep them opaque
     * around it where its takes_chain says it takes them. */
    KF_OPAQUE_LAYOUT = 1u << 3,
    /* A copy between devices (core/exec_place.c): reads another device's memory by design. */
    KF_DEVICE_COPY = 1u << 4,
    /* Output 0 may take the bytes of an input of its size, type and layout that no later step
     * reads: every output element is computed from that input's element at the same index and
     * from what was read before it (elementwise arithmetic, activations; a normalization that
     * reads each row whole before writing it). Writing where the input was just read keeps the
     * output in cache instead of bringing cold memory in for it. */
    KF_INPLACE = 1u << 5,
    /* Output 0 may take the bytes of input 3, a fused step's addend of its shape (core/fuse.h
     * FUSE_SUM), when no later step reads it: the kernel then adds onto it where it is instead
     * of copying it into the output first. */
    KF_INPLACE_ADDEND = 1u << 6,
    /* Output 0 may take the bytes of input 0 where they are its first bytes (a Concat along an
     * axis after dims of 1, such as DenseNet's channel Concat at batch 1) and no later step reads
     * input 0: the kernel leaves them in place and writes the rest. Chained, a dense block's
     * Concats grow one buffer instead of copying all earlier features at every layer. */
    KF_INPLACE_PREFIX = 1u << 7,
    /* An output may point into input 0's bytes where it is one contiguous run of them (a
     * Transpose moving only dims of 1, a Gather of one constant index, a Split, along an axis
     * after dims of 1: core/exec_view.c): the kernel leaves an output whose data already is that
     * run. A view costs nothing where the copy would bring the bytes through the cache again. */
    KF_VIEW = 1u << 8,
    /* A device's Conv, MatMul or Gemm that applies a bias, a residual sum and a Relu after its
     * product in the same library call (cuDNN, cuBLASLt), or a BatchNormalization a Relu: the
     * device epilogue pass (core/fuse_device.c) offers it the nodes that follow it in
     * kernel_prep.fused. */
    KF_DEVICE_EPILOGUE = 1u << 9,
    /* The kernel reads a constant input either through an object of kernel_shared_weight (which
     * restores the weight itself when it must make one) or after kernel_weight_bytes: the
     * executor may then leave the weight evicted while the kernel prepares. Other kernels get
     * their constant inputs restored first. */
    KF_PACKED_WEIGHTS = 1u << 10,
    /* Outputs 1 and 2 may be the very buffers of inputs 3 and 4: a key/value cache of fixed
     * capacity that the caller binds as both past and present (GroupQueryAttention, as
     * onnxruntime-genai's past_present_share_buffer binds it). Where out->data == in->data the
     * kernel writes only the new rows and reads the rest where it is. The executor computes such
     * an output there only when the caller's target for it is exactly that input's memory and no
     * later step reads the input (core/exec_target.c). */
    KF_CACHE_IN_PLACE = 1u << 11,
    /* A device's kernel that reads every shape from its tensors (and its geometry from
     * kernel_call.params) at run, needing none at prepare: placement may give it a node whose
     * shapes are known only at run (a GroupQueryAttention's present cache, as long as
     * total_sequence_length's value). Its outputs, and the copies that bring its inputs, are
     * then allocated per run in the device's memory. Other device kernels get static shapes. */
    KF_RUN_SHAPES = 1u << 12,
};

struct fuse_chain;

/* What a kernel's prepare sees: the node and its (static, when the plan is static) types.
 * in_value[i] is input i's value when known at prepare (initializers, folded constants). params:
 * the node's geometry as its schema resolved it for these types (core/op_params.h; unknown dims
 * -1 in a generic plan), or NULL for ops whose schema resolves none. */
typedef struct kernel_prep {
    const graph_node *node;
    int n_in, n_out;
    const type_info *const *in_type;   /* NULL for omitted inputs */
    const tensor *const *in_value;
    const type_info *out_type;
    const struct exec_env *env;        /* to prepare subgraphs (control flow) */
    const struct fuse_chain *fused;    /* KF_POST_OPS and KF_DEVICE_EPILOGUE kernels: post-ops to
                                          apply, or NULL */
    bool *packed;                      /* per input: the kernel reads it only through an object
                                          of kernel_shared_weight (set by that call), or NULL */
    bool *raw;                         /* per input: the kernel reads it as stored (set by
                                          kernel_weight_bytes), or NULL */
    const op_params *params;
} kernel_prep;

/* What a kernel's run sees. in[i] NULL for omitted inputs, out[i] NULL for omitted outputs.
 * Unless the kernel is KF_DYNAMIC_OUTPUT, every out[i] is a tensor with its shape set and its
 * buffer ready. Runs of one plan may happen at the same time on several threads: a kernel's run
 * only reads its prepared state, and writes only into its outputs, its fork (below) and its
 * scratch (kernel_scratch). params: the node's geometry for this call's inputs (the plan's, or
 * where that has unknown dims, resolved for this run: valid until the run returns), or NULL. */
typedef struct kernel_call {
    const graph_node *node;
    void *state;                       /* the run context's fork when the kernel forks, else the
                                          prepared state (read-only), or NULL */
    int n_in, n_out;
    onyx_value *const *in;
    onyx_value *const *out;
    struct exec_frame *frame;          /* the running graph's frame (outer scope of subgraphs) */
    int threads;
    void *queue;                       /* the run context's queue for the kernel's device
                                          (device_ops.queue_create), or NULL */
    const op_params *params;
} kernel_call;

typedef struct kernel {
    const char *domain;                /* "" for ai.onnx */
    const char *op_type;
    int since_min, since_max;          /* resolved node versions this entry serves */
    device_kind device;
    dtype_mask dtypes;                 /* element types of input 0 (output 0 if no inputs); 0 = any */
    unsigned flags;
    onyx_status (*prepare)(const kernel_prep *p, void **state); /* may be NULL */
    onyx_status (*run)(const kernel_call *c);
    void (*release)(void *state);      /* may be NULL */
    /* Kernels whose run writes working state (value arrays for a subgraph call, accumulators,
     * oneDNN memory objects whose handles are set per run) give each run context its own copy:
     * fork makes one from the prepared state, sharing what stays read-only (weights, primitives,
     * subgraphs), and unfork frees what fork made. The run then gets the fork as its state. A
     * context lives for many runs, so a fork is made once, not per run. NULL when the run only
     * reads its state. */
    onyx_status (*fork)(const void *state, void **out);
    void (*unfork)(void *fork);
    /* Whether the kernel takes this node with these types (NULL: every node the entry matches).
     * A kernel that declines leaves the node to the next device in the session's priority order,
     * as ggml's supports_op. */
    bool (*supports)(const kernel_prep *p);
    /* Inputs (bit i: input i) that the kernel reads on the host whatever its device: shapes,
     * axes, indices of slices and pads, which a device kernel needs to size its launch. Placement
     * keeps them in CPU memory. */
    unsigned host_inputs;
    /* Whether the kernel's prepare applies the chain in p->fused (core/fuse_chain.h): its
     * post-ops, for a KF_POST_OPS or KF_DEVICE_EPILOGUE kernel; which of its tensors are opaque
     * (opaque_in0, opaque_out0, opaque_addend), for a KF_OPAQUE_LAYOUT kernel or a conv. The
     * fusion passes ask before they fuse a chain into its step or mark its tensors opaque, and
     * a prepare that fails after a yes is an error, not a refusal. The answer comes from the
     * rule the prepare itself follows, without building (oneDNN and cuBLASLt are asked for a
     * descriptor or a heuristic at most). NULL: the kernel takes no chain. */
    bool (*takes_chain)(const kernel_prep *p);
} kernel;

/* The window (core/op_params.h) of a convolution's or pool's prepare or run, from its params;
 * an error where the plan handed none. */
static inline onyx_status kernel_window(const op_params *params, const geom_window **out) {
    *out = op_params_window(params);
    return *out ? ONYX_OK
                : onyx_error(ONYX_ERR_RUNTIME, "the plan handed the kernel no window geometry");
}

/* The slice, pads or depth/space blocks (core/op_params.h) of a Slice's, Pad's or DepthToSpace's
 * and SpaceToDepth's run, from its params; an error where the plan handed none. */
static inline onyx_status kernel_slice(const op_params *params, const geom_slice **out) {
    *out = op_params_slice(params);
    return *out ? ONYX_OK
                : onyx_error(ONYX_ERR_RUNTIME, "the plan handed the kernel no slice geometry");
}
static inline onyx_status kernel_pads(const op_params *params, const geom_pads **out) {
    *out = op_params_pads(params);
    return *out ? ONYX_OK
                : onyx_error(ONYX_ERR_RUNTIME, "the plan handed the kernel no pads geometry");
}
static inline onyx_status kernel_blocks(const op_params *params, const geom_blocks **out) {
    *out = op_params_blocks(params);
    return *out ? ONYX_OK
                : onyx_error(ONYX_ERR_RUNTIME, "the plan handed the kernel no depth/space blocks");
}

/* Input i as a tensor, or NULL when it is omitted or not a tensor. */
static inline tensor *kernel_input(const kernel_call *c, int i) {
    return (i < c->n_in && c->in[i] && c->in[i]->kind == ONYX_VALUE_TENSOR) ? &c->in[i]->t : NULL;
}
/* Output i's tensor, or NULL when the output is omitted. */
static inline tensor *kernel_output(const kernel_call *c, int i) {
    return (i < c->n_out && c->out[i]) ? &c->out[i]->t : NULL;
}

#endif

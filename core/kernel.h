/* The kernel interface every device table implements: prepare once with shapes known, run many
 * times computing only. */
#ifndef ONYX_CORE_KERNEL_H
#define ONYX_CORE_KERNEL_H

#include "core/graph.h"

struct exec_frame;
struct subgraph;
struct exec_env;

typedef enum device_kind { DEVICE_CPU = 0, DEVICE_CUDA = 1 } device_kind;

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
};

struct fuse_chain;

/* What a kernel's prepare sees: the node and its (static, when the plan is static) types.
 * in_value[i] is input i's value when known at prepare (initializers, folded constants). */
typedef struct kernel_prep {
    const graph_node *node;
    int n_in, n_out;
    const type_info *const *in_type;   /* NULL for omitted inputs */
    const tensor *const *in_value;
    const type_info *out_type;
    const struct exec_env *env;        /* to prepare subgraphs (control flow) */
    const struct fuse_chain *fused;    /* KF_POST_OPS kernels: post-ops to apply, or NULL */
} kernel_prep;

/* What a kernel's run sees. in[i] NULL for omitted inputs, out[i] NULL for omitted outputs.
 * Unless the kernel is KF_DYNAMIC_OUTPUT, every out[i] is a tensor with its shape set and its
 * buffer ready. */
typedef struct kernel_call {
    const graph_node *node;
    void *state;                       /* from prepare, or NULL */
    int n_in, n_out;
    onyx_value *const *in;
    onyx_value *const *out;
    struct exec_frame *frame;          /* the running graph's frame (outer scope of subgraphs) */
    int threads;
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
} kernel;

/* Input i as a tensor, or NULL when it is omitted or not a tensor. */
static inline tensor *kernel_input(const kernel_call *c, int i) {
    return (i < c->n_in && c->in[i] && c->in[i]->kind == ONYX_VALUE_TENSOR) ? &c->in[i]->t : NULL;
}
/* Output i's tensor, or NULL when the output is omitted. */
static inline tensor *kernel_output(const kernel_call *c, int i) {
    return (i < c->n_out && c->out[i]) ? &c->out[i]->t : NULL;
}

#endif

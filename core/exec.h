/* Preparing and running a graph: shape specialization per input-shape signature, constant
 * folding, kernel choice, the memory plan and the executor. Used for the main graph and for
 * control-flow bodies alike. */
#ifndef ONYX_CORE_EXEC_H
#define ONYX_CORE_EXEC_H

#include "core/kernel.h"

/* Chooses a kernel for a node with the given input types, or NULL with a message. */
typedef const kernel *(*kernel_selector)(const graph_node *node, int n_in,
                                         const type_info *const *in_type, device_kind device);

/* Settings shared by a rep and all its subgraphs. */
typedef struct exec_env {
    device_kind device;
    int device_index;
    int threads;
    kernel_selector select;
} exec_env;

/* A graph prepared for execution: a cache of plans, one per signature of input shapes. */
typedef struct subgraph subgraph;

/* Prepares `g` for running. Nothing is specialized until subgraph_specialize or the first run. */
onyx_status subgraph_create(const graph *g, const exec_env *env, subgraph **out);
void subgraph_free(subgraph *sg);

/* Builds (and caches) the plan for these input types, checking that every node has a kernel and
 * that shapes fit; input types may be partial. `in_types` has one entry per graph input. */
onyx_status subgraph_specialize(subgraph *sg, const type_info *const *in_types);

/* Runs the graph. `inputs` (one per graph input, borrowed) and the enclosing frame `outer` (for
 * captured values; NULL for the main graph). On success `outputs[i]` (one per graph output,
 * caller-allocated values) receive owned results. */
onyx_status subgraph_run(subgraph *sg, struct exec_frame *outer, const onyx_value *const *inputs,
                         onyx_value *const *outputs);

const graph *subgraph_graph(const subgraph *sg);

/* What a kernel may read of the frame it runs in (kernel_call.frame): the running graph, and the
 * value bound to graph value `v` right now (NULL when none is). */
const graph *exec_frame_graph(const struct exec_frame *f);
const onyx_value *exec_frame_value(const struct exec_frame *f, int v);

#endif

/* Preparing a kernel for a node of a plan (core/plan_prepare.c): used by placement, the fusion
 * passes and constant folding. */
#ifndef ONYX_CORE_PLAN_PREPARE_H
#define ONYX_CORE_PLAN_PREPARE_H

#include "core/exec_internal.h"

/* Runs kernel k's prepare for `node` (a step's node, or the fusion pass's copy of a conv with its
 * `chain` of post-ops) on the plan's current types and constants into *state. `params`: the
 * step's resolved geometry (plan_step.params; a fused node keeps its root's), or NULL. */
onyx_status plan_prepare_kernel(const subgraph *sg, plan *p, const kernel *k,
                                const graph_node *node, const op_params *params,
                                const struct fuse_chain *chain, void **state);

/* Whether kernel k (which has a takes_chain query) applies `chain` to `node` (the fused node
 * the pass made) with the plan's types: asked before a chain is fused into k's step. */
bool plan_kernel_takes_chain(const subgraph *sg, const plan *p, const kernel *k,
                             const graph_node *node, const op_params *params,
                             const struct fuse_chain *chain);

/* Whether kernel k (which has a supports check) takes `node` with the plan's types. */
bool plan_kernel_supports(const subgraph *sg, const plan *p, const kernel *k,
                          const graph_node *node, const op_params *params);

#endif

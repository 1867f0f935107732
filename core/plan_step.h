/* Running one step of a plan (core/plan_step.c): used by the runs and by constant folding. */
#ifndef ONYX_CORE_PLAN_STEP_H
#define ONYX_CORE_PLAN_STEP_H

#include "core/exec_internal.h"

/* Runs the schema's inference for `node` with the given input types and constant values; out
 * must hold n_outputs types. params (or NULL) receives the geometry the schema resolves for the
 * node's kernels (core/op_params.h), OP_PARAMS_NONE where it resolves none. */
onyx_status plan_infer_node(const graph_node *node, const type_info *const *in_types,
                            const tensor *const *in_values, type_info *out, op_params *params);

/* Runs step `ps` of `p` in `frame` with `state` (its fork or its prepared state). A step whose
 * params have unknown dims (a generic plan) has them resolved again from the run's inputs, for
 * this call alone. */
onyx_status plan_run_step(const plan *p, const plan_step *ps, const graph *g,
                          struct exec_frame *frame, void *state);

#endif

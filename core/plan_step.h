/* Running one step of a plan (core/plan_step.c): used by the runs and by constant folding. */
#ifndef ONYX_CORE_PLAN_STEP_H
#define ONYX_CORE_PLAN_STEP_H

#include "core/exec_internal.h"

/* Runs the schema's inference for `node` with the given input types and constant values; out
 * must hold n_outputs types. */
onyx_status plan_infer_node(const graph_node *node, const type_info *const *in_types,
                            const tensor *const *in_values, type_info *out);

/* Runs step `ps` of `p` in `frame` with `state` (its fork or its prepared state). */
onyx_status plan_run_step(const plan *p, const plan_step *ps, const graph *g,
                          struct exec_frame *frame, void *state);

#endif

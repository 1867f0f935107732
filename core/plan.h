/* A plan's structure and the edits the passes make to its steps (core/plan.c): the bottom of the
 * plan layers. */
#ifndef ONYX_CORE_PLAN_H
#define ONYX_CORE_PLAN_H

#include "core/exec_internal.h"

/* Frees a plan: its kernel states, its own nodes, its values and their constants (the run
 * layer frees its idle run contexts first: plan_unref). */
void plan_free(plan *p);

/* A copy of `params` that plan p keeps as long as it lives (for plan_step.params) in *out; NULL
 * for NULL or OP_PARAMS_NONE. */
onyx_status plan_keep_params(plan *p, const op_params *params, const op_params **out);

/* Frees a device constant made by placement (plan_value.owns_constant on a device). */
void plan_free_device_constant(const plan *p, plan_value *v);

/* After a pass moved or dropped steps: each value's first is the step that now makes it (-1 for
 * those none makes). */
void plan_set_producers(const graph *g, plan *p);

/* For the fusion passes: uses[v] the readers of each value among the plan's steps (subgraph
 * captures too), consumer[v] the last step that reads it as an input (-1 for none); both arrays
 * of p->n_vals entries. */
void plan_readers(const graph *g, const plan *p, int *uses, int *consumer);

/* The steps a fused step absorbed leave the plan (gone), their prepared states with them. */
void plan_absorb_steps(plan *p, bool *gone, const int *steps, int n);

/* Step ps runs fused node fn from now on, instead of its graph node or the node placement made
 * of it (its inputs moved to copies: fn was made from it). */
void plan_set_fused(plan_step *ps, graph_node *fn);

#endif

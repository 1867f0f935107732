/* Placement (core/exec_place.c): each node on the first device of the session's order whose
 * kernel takes it, copy steps where a value crosses devices, constants uploaded once per plan. */
#ifndef ONYX_CORE_EXEC_PLACE_H
#define ONYX_CORE_EXEC_PLACE_H

#include "core/exec_internal.h"

/* Where each graph value can be read during the build: besides its own index (on
 * plan_value.device), the plan value holding a copy of it on each other device, or -1. */
typedef struct placement {
    int *copy_on[DEVICE_KINDS];
    bool *host_only; /* graph outputs and values read by subgraphs: kept on the CPU */
} placement;

onyx_status placement_init(placement *pl, const subgraph *sg, const plan *p);
void placement_free(placement *pl);

/* Chooses the node's kernel in the session's device order, moves its inputs to that device
 * (copy steps, device constants), appends its step (prepared) and the copies of outputs that
 * must be on the CPU. `in_types` are the node's input types, `params` the geometry its schema
 * resolved for them (the plan's, kept by the step), or NULL. */
onyx_status place_node(subgraph *sg, plan *p, placement *pl, int n,
                       const type_info *const *in_types, const op_params *params);

#endif

/* Building a plan (core/plan_build.c, the driver of the plan layers): what core/exec_run.c calls
 * when a run's signature has no plan yet. */
#ifndef ONYX_CORE_PLAN_BUILD_H
#define ONYX_CORE_PLAN_BUILD_H

#include "core/exec_internal.h"

/* Builds the plan for signature `sig` (graph inputs, then captured values) with those inputs on
 * `in_device` (NULL: all on the CPU) and the graph outputs made on `out_device` left there;
 * refs 1. */
onyx_status plan_build(subgraph *sg, const type_info *sig, const device_kind *in_device,
                       device_kind out_device, plan **out);

#endif

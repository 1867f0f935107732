/* The memory planner (core/planner.c): lifetimes, views, in-place reuse and arena offsets of a
 * plan's values, after the fusion passes. */
#ifndef ONYX_CORE_PLANNER_H
#define ONYX_CORE_PLANNER_H

#include "core/exec_internal.h"

/* Chooses where each value of p lives (constant, input, arena, heap), computes lifetimes,
 * views (core/exec_view.h) and in-place reuse, the arena offsets of each device, which steps
 * recheck their output shapes, and which heap values each step releases. */
onyx_status plan_lay_out(subgraph *sg, plan *p);

/* Offsets for the ST_ARENA values on `device` with lifetimes [first, last]; returns the size of
 * that device's arena (SIZE_MAX when out of memory). */
size_t plan_assign_offsets(plan_value *vals, int n, device_kind device);

#endif

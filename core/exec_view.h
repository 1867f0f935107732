/* Views (core/exec_view.c): which outputs are a contiguous run of their input's bytes. */
#ifndef ONYX_CORE_EXEC_VIEW_H
#define ONYX_CORE_EXEC_VIEW_H

#include "core/exec_internal.h"

/* Whether output o of node is one contiguous run of input 0's bytes, and where it starts in them:
 * the planner may make it a view of them (KF_VIEW kernels). params: the node's step's (a Slice's
 * bounds, core/op_params.h), or NULL. */
bool plan_view_offset(const plan *p, const graph_node *node, const op_params *params, int o,
                      size_t *offset);

#endif

/* Type helpers shared by the control-flow, sequence and optional schemas: joining the types that
 * several producers (two branches, a loop's input and its body) may give one value. */
#ifndef ONYX_OPS_CONTROL_INFER_H
#define ONYX_OPS_CONTROL_INFER_H

#include "ops/schema.h"

/* dst = the most precise type that both a and b fit: equal parts stay, differing parts become
 * unknown. A side of unknown kind keeps the other side's kinds and dtypes but no shape.
 * dst is released first; a and b may be NULL (unknown). */
onyx_status infer_ctl_join(type_info *dst, const type_info *a, const type_info *b);

/* dst = a sequence or optional of `elem` (deep-copied; NULL for an unknown element). */
onyx_status infer_ctl_container(type_info *dst, onyx_value_kind kind, const type_info *elem);

/* Declared type of a subgraph's output i (never NULL: the graph stores one per value). */
static inline const type_info *infer_ctl_graph_out(const graph *g, int i) {
    return &g->values[g->outputs[i]].type;
}

/* Fails unless input i is present and a sequence (or of unknown kind); *elem = its element type
 * (NULL when unknown). */
onyx_status infer_ctl_need_seq(infer_ctx *c, int i, const type_info **elem);

/* Fails unless the present input i is a 1-element int32/int64 tensor (a position). */
onyx_status infer_ctl_position(infer_ctx *c, int i);

/* The graph attribute `name`, or ONYX_ERR_INVALID_MODEL when it is missing. */
onyx_status infer_ctl_body(const graph_node *n, const char *name, const graph **out);

#endif

/* The types of a graph's values as inference tells them once, before any plan (core/graph_types.c):
 * what the rewrites (core/rewriter.c, core/rules/) and the model writer read of dtypes and ranks. */
#ifndef ONYX_CORE_GRAPH_TYPES_H
#define ONYX_CORE_GRAPH_TYPES_H

#include "core/op_schema.h"

/* From the declared input types and the initializers through the schemas (dims -1 where
 * unknown, kind NONE where nothing is known; nodes whose inference fails leave their outputs
 * unknown). *out has g->n_values entries; free with graph_types_free. */
onyx_status graph_infer_types(const graph *g, type_info **out);
void graph_types_free(const graph *g, type_info *types);

#endif

/* Graph rewrites made once when a subgraph is created (optimization level ALL): exporters'
 * decompositions of GELU and SiLU become the ops they spell (core/optimize.c). */
#ifndef ONYX_CORE_OPTIMIZE_H
#define ONYX_CORE_OPTIMIZE_H

#include "core/op_schema.h"

/* A rewritten copy of `g` (same values, fewer nodes), or *out NULL when nothing matched. The copy
 * shares everything else with `g`, which must outlive it. Free with graph_optimized_free. */
onyx_status graph_optimize(const graph *g, const op_registry *ops, graph **out);
void graph_optimized_free(graph *g);

#endif

/* Graph rewrites made once when a subgraph is created (optimization level ALL): exporters'
 * decompositions of GELU and SiLU become the ops they spell (core/optimize.c), and float16
 * computes in float on the CPU (core/optimize_half.c). */
#ifndef ONYX_CORE_OPTIMIZE_H
#define ONYX_CORE_OPTIMIZE_H

#include "core/op_schema.h"

/* A rewritten copy of `g`, or *out NULL when nothing matched: the pattern rewrites (same values,
 * fewer nodes), then with `half_as_float` float16 computed in float (core/optimize_half.c: more
 * values and nodes). The copy shares everything else with `g`, which must outlive it. Free with
 * graph_optimized_free. */
onyx_status graph_optimize(const graph *g, const op_registry *ops, bool half_as_float,
                           graph **out);
void graph_optimized_free(graph *g);

/* The types of g's values as inference tells them once, before any plan: from the declared
 * input types and the initializers through the schemas (dims -1 where unknown, kind NONE where
 * nothing is known; nodes whose inference fails leave their outputs unknown). *out has
 * g->n_values entries; free with graph_types_free. The rewrites read dtypes and ranks in it. */
onyx_status graph_infer_types(const graph *g, type_info **out);
void graph_types_free(const graph *g, type_info *types);

/* The float16 pass alone: *out a new graph (its node and value arrays malloc'ed) and *owned the
 * blocks it owns besides, or *out NULL when no node computes in float16. */
onyx_status graph_half_as_float(const graph *g, const op_registry *ops, graph **out,
                                void ***owned, int *n_owned);

#endif

/* Graph rewrites made once when a subgraph is created (optimization level ALL, from
 * subgraph_create): the pattern rules (spelled-out GELU, SiLU and LayerNormalization, Transposes
 * around projections, ViT's patch convolution, ReduceMean as global pooling: core/optimize.c,
 * whose opening comment lists them; QDQ units as 8-bit ops: core/optimize_qdq.c; dynamically
 * quantized products: core/optimize_dynq.c), repeated subexpressions computed once
 * (core/graph_cse.c), and float16 computed in float on the CPU (core/optimize_half.c). Also the
 * one-time type inference the rewrites read (core/graph_types.c). */
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

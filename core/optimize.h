/* Graph rewrites made once when a subgraph is created: the table of named rules (core/rules/)
 * run by the driver (core/optimize.c) over the graph, each rule tried at the nodes of its root
 * op, its change made through the rewriter (core/rewriter.h). */
#ifndef ONYX_CORE_OPTIMIZE_H
#define ONYX_CORE_OPTIMIZE_H

#include "core/op_schema.h"

/* Told of each change a rule made: the rule's name, its family file, and the node it was tried
 * at (of the graph the pass read). */
typedef void (*rewrite_observer)(void *user, const char *rule, const char *family,
                                 const graph_node *root);

typedef struct optimize_options {
    onyx_optimization_level level; /* the rules of this level and below run */
    bool half_as_float;            /* float16 computes in float (core/rules/half.c) */
    rewrite_observer observe;      /* NULL: none */
    void *user;
} optimize_options;

/* A rewritten copy of `g`, or *out NULL when no rule changed anything. The copy shares
 * everything else with `g`, which must outlive it. Free with graph_optimized_free. */
onyx_status graph_optimize(const graph *g, const op_registry *ops, const optimize_options *opts,
                           graph **out);
void graph_optimized_free(graph *g);

/* g's ops and how many nodes of each, "Add 2, Gelu 1, com.microsoft:QGemm 1" (by name), into
 * buf (cut short where it does not fit). What the rewrites made, for the log and tests. */
void graph_op_counts(const graph *g, char *buf, size_t cap);

#endif

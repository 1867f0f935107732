/* The state of one rewrite pass over a graph (core/optimize.c) and the helpers the rule files
 * share: what reads and makes each value, constants, and placing a replacement node. Internal to
 * the optimizer (core/optimize.c, core/optimize_qdq.c). */
#ifndef ONYX_CORE_REWRITER_H
#define ONYX_CORE_REWRITER_H

#include <stdbool.h>

#include "core/graph.h"
#include "core/op_schema.h"

typedef struct rewriter {
    const graph *g;
    const op_registry *ops;
    int *uses;        /* readers per value (inputs and subgraph captures, graph outputs count) */
    int *producer;    /* node index per value, -1 */
    bool *gone;       /* per node: replaced */
    type_info *types; /* per value, inferred once (graph_infer_types), or NULL */
    graph_node *made; /* per node n: made[2n] the replacement placed at its index, made[2n + 1]
                         a node placed after that; op_type NULL where none */
    int n_made;
    bool *retyped;    /* per value: now made by another node, its declared type dropped */
    graph_value *added; /* values the rewrites made, appended to the graph's */
    int n_added;
    void **blocks;    /* what the rewrites allocated besides their nodes: names, constants, perms */
    int n_blocks;
} rewriter;

/* The node making v (not replaced), or NULL. */
const graph_node *rw_producer(const rewriter *r, int v);
/* The one node reading v (and nothing else reads it), or NULL. */
const graph_node *rw_sole_reader(const rewriter *r, int v);
/* The constant tensor of value v (initializer or Constant node, also through Identity nodes: the
 * TorchScript exporter shares equal initializers so), or NULL. */
const tensor *rw_constant(const rewriter *r, int v);
/* Whether n is the ai.onnx op `op` (NULL: no). */
bool rw_is_op(const graph_node *n, const char *op);
/* The operand of a binary node other than `v`, or -1 when v is not one of its two inputs. */
int rw_other_input(const graph_node *n, int v);
/* n's index in the graph. */
int rw_index(const rewriter *r, const graph_node *n);

/* Puts the replacement domain:`op_type`(ins) -> y named `name`, with a copy of attrs, at the index
 * of `last` (after: right after what is placed there) and marks the members gone. Without an
 * error and without a change where the registry lacks the op. */
onyx_status rw_place_at(rewriter *r, const graph_node *last, bool after, const char *name,
                        const graph_node **members, int n_members, const char *domain,
                        const char *op_type, int64_t version, const int *ins, int n_in, int y,
                        const graph_attr *attrs, int n_attrs);

/* Keeps p (malloc'd; NULL: out of memory) with the rewritten graph; false without memory. */
bool rw_keep(rewriter *r, void *p);
/* A new value named after value `like` with `suffix`: of no known type, or (init given, kept
 * with the graph) that constant. Its index (after the graph's values), or -1 without memory. */
int rw_add_value(rewriter *r, int like, const char *suffix, tensor *init);

/* The QDQ rules (core/optimize_qdq.c), tried at each QuantizeLinear q, and at each Gemm (whose
 * float result may end a QDQ graph). */
onyx_status qdq_rewrite(rewriter *r, const graph_node *q);
onyx_status qdq_rewrite_float_gemm(rewriter *r, const graph_node *gemm);
/* Before the other rules (core/optimize_qdq.c): each QDQ unit that is a function of one 8-bit
 * tensor becomes a table lookup. */
onyx_status qdq_tables(rewriter *r);
/* The dynamically quantized product (core/optimize_dynq.c), tried at each MatMulInteger. */
onyx_status dynq_rewrite(rewriter *r, const graph_node *mmi);

#endif

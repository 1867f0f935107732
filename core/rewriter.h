/* The rewriter: the state of one pass of rules over a graph (core/optimize.c drives it) and the
 * helpers every rule file (core/rules/) shares: who makes and who reads each value, constants,
 * and the patch a rule makes, nodes placed at or after the original nodes. The graph itself is
 * never changed; rw_finish builds the rewritten copy once the pass is over. */
#ifndef ONYX_CORE_REWRITER_H
#define ONYX_CORE_REWRITER_H

#include <stdbool.h>

#include "core/graph.h"
#include "core/op_schema.h"

/* A node a rule placed: at an original node's index (before anything already placed after it;
 * the original goes) or right after it. */
typedef struct rw_placed {
    int anchor; /* index of the original node */
    bool after;
    graph_node node;
} rw_placed;

typedef struct rewriter {
    const graph *g;
    const op_registry *ops;
    int *uses;        /* readers per value (inputs and subgraph captures, graph outputs count
                         more): rules keep it current as they change who reads what */
    int *producer;    /* node index per value, -1 */
    int *reader_at;   /* per value v: its readers are reader[reader_at[v] .. reader_at[v + 1]) */
    int *reader;      /* node indices of the original graph, ascending, each node once per value
                         it reads (by an input or a subgraph capture) */
    bool *gone;       /* per node: replaced */
    type_info *types; /* per value, inferred once (graph_infer_types), or NULL */
    rw_placed *placed; /* what the rules placed, in placement order */
    int n_placed, cap_placed;
    bool *retyped;    /* per value: now made by another node, its declared type dropped */
    graph_value *added; /* values the rewrites made, appended to the graph's */
    int n_added;
    void **blocks;    /* what the rewrites allocated besides their nodes: names, constants, perms */
    int n_blocks;
    void *sweep_state; /* what a rule of the current sweep computed once for all its nodes (the
                          duplicates, the float16 analysis); the driver frees it after the sweep
                          with sweep_state_free */
    void (*sweep_state_free)(void *state);
} rewriter;

/* A rewriter over g (which must outlive it): readers and producers indexed. */
onyx_status rw_init(rewriter *r, const graph *g, const op_registry *ops);
/* *out: the rewritten graph (values appended, nodes placed, what is gone left out; producers
 * renumbered), its blocks handed over in *owned (n_owned of them, malloc'd; free each and the
 * list) besides its node and value arrays; or *out NULL when no rule changed anything. */
onyx_status rw_finish(rewriter *r, graph **out, void ***owned, int *n_owned);
/* Frees what the pass holds (after rw_finish, or instead of it). */
void rw_free(rewriter *r);

/* ---- reading the graph */

/* Whether n is the ai.onnx op `op` (NULL: no). */
bool rw_is_op(const graph_node *n, const char *op);
/* n's index in the graph. */
int rw_index(const rewriter *r, const graph_node *n);
/* The node making v (not replaced), or NULL. */
const graph_node *rw_producer(const rewriter *r, int v);
/* The nodes of the original graph reading v (gone ones too), each once, in graph order: their
 * count, *nodes their indices. */
int rw_readers(const rewriter *r, int v, const int **nodes);
/* Whether node n takes v as one of its inputs. */
bool rw_reads_input(const graph_node *n, int v);
/* The one node reading v (and nothing else reads it), or NULL. */
const graph_node *rw_sole_reader(const rewriter *r, int v);
/* The operand of a binary node other than `v`, or -1 when v is not one of its two inputs. */
int rw_other_input(const graph_node *n, int v);
/* The constant tensor of value v (initializer or Constant node, also through Identity nodes: the
 * TorchScript exporter shares equal initializers so), or NULL. */
const tensor *rw_constant(const rewriter *r, int v);
/* rw_constant, of a float type, or NULL. */
const tensor *rw_float_constant(const rewriter *r, int v);
/* The float value of a one-element constant (initializer or Constant node, not through
 * Identity), or NAN. */
double rw_scalar(const rewriter *r, int v);
/* Whether a is b within 1e-3 of b (the constants exporters write, rounded to float). */
bool rw_near(double a, double b);
/* The axes of ReduceMean node n (attribute, or constant input from opset 18): their count (0 when
 * none are given), or -1 when not constant. */
int64_t rw_reduce_axes(const rewriter *r, const graph_node *n, const int64_t **axes);

/* Infers the graph's types once (r->types) where not done yet; fails only without memory. */
onyx_status rw_need_types(rewriter *r);
/* The dims of value v as inference found them before any plan (-1 where not known): its rank,
 * or -1 (also where inference fails). */
int rw_known_dims(rewriter *r, int v, const int64_t **dims);
/* rw_known_dims where every dim is known; else -1. */
int rw_static_dims(rewriter *r, int v, const int64_t **dims);

/* ---- QDQ parameters (the QDQ rule families, core/rules/qdq*.c) */

typedef struct rw_qparams {
    int x;               /* DQ: its 8-bit input; Q: its float input */
    int scale, zero;     /* the values of its scale and zero point */
    const tensor *s, *z; /* their constants: float32 scale, 8-bit zero point, of one size */
} rw_qparams;

bool rw_eight_bit(onyx_dtype t);
/* Whether n is a DQ (dq) or Q node of constant float32 scales and 8-bit zero points, count
 * values of them (0: any count, along axis `axis_want` of a rank-`rank` input when more than
 * one), without block quantization or another output type. */
bool rw_qdq_params(const rewriter *r, const graph_node *n, bool dq, int64_t count, int rank,
                   int axis_want, rw_qparams *out);
/* The DQ of an activation feeding v: per tensor. */
bool rw_activation_dq(const rewriter *r, int v, rw_qparams *out);
/* One reader of v fewer; a DQ left unread goes, releasing its own inputs. */
void rw_release(rewriter *r, int v);

/* ---- the patch */

/* Places node `like` (its op, version, schema, inputs, outputs, attributes and captures copied;
 * the schema resolved where like has none) at or after the original node `anchor`, and marks the
 * members gone.
 * Without an error and without a change where the registry lacks the op. */
onyx_status rw_place_node(rewriter *r, const graph_node *anchor, bool after,
                          const graph_node *like, const graph_node *const *members,
                          int n_members);
/* rw_place_node of domain:`op_type`(ins) -> y named `name`, with a copy of attrs. `version` is
 * the oldest version with the meaning the rule needs: an ai.onnx op gets the model's version of it
 * where that is newer, so the rule must ask only for ops whose later versions add types alone. */
onyx_status rw_place_at(rewriter *r, const graph_node *anchor, bool after, const char *name,
                        const graph_node *const *members, int n_members, const char *domain,
                        const char *op_type, int64_t version, const int *ins, int n_in, int y,
                        const graph_attr *attrs, int n_attrs);
/* rw_place_at in place of `last` (named after it), an ai.onnx op. */
onyx_status rw_place(rewriter *r, const graph_node *last, const graph_node *const *members,
                     int n_members, const char *op_type, int64_t version, const int *ins, int n_in,
                     int y, const graph_attr *attrs, int n_attrs);
/* Whether a node is placed at n's index (a rule replaced it), or after it. */
bool rw_replaced(const rewriter *r, const graph_node *n);
/* The first node placed after n, or NULL. */
const graph_node *rw_placed_after(const rewriter *r, const graph_node *n);

/* Keeps p (malloc'd; NULL: out of memory) with the rewritten graph; false without memory. */
bool rw_keep(rewriter *r, void *p);
/* A new value named after value `like` with `suffix`: of no known type, or (init given, kept
 * with the graph) that constant. Its index (after the graph's values), or -1 without memory. */
int rw_add_value(rewriter *r, int like, const char *suffix, tensor *init);
/* rw_add_value of an int64 vector (a shape), kept with the graph; -1 without memory. */
int rw_add_shape(rewriter *r, int like, const int64_t *dims, int n);

#endif

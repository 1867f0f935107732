/* The rewrite rules: one table (core/rules/table.c) of named rules, each tried at the nodes of
 * its root op, and the match-and-apply function of each, one file per family in core/rules/.
 * A rule reads the graph through the rewriter and makes its change as a patch there
 * (core/rewriter.h); the driver (core/optimize.c) walks the table. */
#ifndef ONYX_CORE_RULES_H
#define ONYX_CORE_RULES_H

#include "core/rewriter.h"

/* Tries the rule at `root` (a node of the root op, not gone): changes nothing where it does not
 * match. Fails only without memory. */
typedef onyx_status (*rule_apply)(rewriter *r, const graph_node *root);

/* Which pass a rule belongs to. Each pass reads the graph the one before made; within a pass
 * the rules run in table order, a sweep (a run of rules of one pass and direction) at a time,
 * each node tried by every rule of its op in the sweep until one replaces it. */
typedef enum rule_pass {
    RULE_PATTERNS = 0,   /* exporters' spellings and QDQ units to the ops they mean */
    RULE_TABLES = 1,     /* 8-bit op chains of one tensor as tables, the patterns' ones included */
    RULE_DUPLICATES = 2, /* repeated computations, once the patterns found theirs single-use */
    RULE_FLOAT16 = 3,    /* float16 as float, last: it adds values and nodes around the rest */
} rule_pass;

typedef struct rewrite_rule {
    const char *name;    /* unique; what the log and the tests call it */
    const char *domain;  /* of the root op: "" ai.onnx */
    const char *op_type; /* the root op; NULL: every node */
    const char *family;  /* the file it is written in */
    rule_pass pass;
    bool backward;       /* its sweep walks from the graph's end */
    onyx_optimization_level level; /* runs at this optimization level and above */
    bool half_as_float;  /* runs only where float16 computes as float (optimize_options) */
    rule_apply apply;
} rewrite_rule;

/* The table, in the order the rules run: *count entries. */
const rewrite_rule *rewrite_rules(int *count);

/* Whether `rule` is tried at node n. */
bool rule_roots_at(const rewrite_rule *rule, const graph_node *n);

/* ---- each family's rules (the file named in the table) */

onyx_status rule_gelu_erf(rewriter *r, const graph_node *erf);
onyx_status rule_gelu_tanh(rewriter *r, const graph_node *tanh_node);
onyx_status rule_swish(rewriter *r, const graph_node *sigmoid);
onyx_status rule_layer_norm(rewriter *r, const graph_node *mean);
onyx_status rule_global_average_pool(rewriter *r, const graph_node *mean);
onyx_status rule_sink_transpose(rewriter *r, const graph_node *t);
onyx_status rule_rows_before_product(rewriter *r, const graph_node *t);
onyx_status rule_gather_transposed_weight(rewriter *r, const graph_node *gather);
onyx_status rule_gather_nbits_weight(rewriter *r, const graph_node *gather);
onyx_status rule_patch_embedding(rewriter *r, const graph_node *conv);
onyx_status rule_qdq_table(rewriter *r, const graph_node *q);
/* Shared by the table rules (qdq_table.c, qop_table.c): a new constant of the 256 codes of 8-bit
 * type xt, named after value x (its index, -1 when out of memory), and the order of nodes in the
 * graph for qsort (copies are placed so that what one reads comes first). */
int table_codes_value(rewriter *r, int x, onyx_dtype xt);
int table_node_order(const void *a, const void *b);
onyx_status rule_qop_table(rewriter *r, const graph_node *root);
onyx_status rule_qdq_conv(rewriter *r, const graph_node *q);
onyx_status rule_qdq_matmul(rewriter *r, const graph_node *q);
onyx_status rule_qdq_gemm(rewriter *r, const graph_node *q);
onyx_status rule_qdq_float_gemm(rewriter *r, const graph_node *gemm);
onyx_status rule_qdq_add(rewriter *r, const graph_node *q);
onyx_status rule_qdq_mul(rewriter *r, const graph_node *q);
onyx_status rule_qdq_sigmoid(rewriter *r, const graph_node *q);
onyx_status rule_qdq_max_pool(rewriter *r, const graph_node *q);
onyx_status rule_qdq_global_average_pool(rewriter *r, const graph_node *q);
onyx_status rule_qdq_average_pool(rewriter *r, const graph_node *q);
onyx_status rule_qdq_softmax(rewriter *r, const graph_node *q);
onyx_status rule_qdq_concat(rewriter *r, const graph_node *q);
onyx_status rule_qdq_move(rewriter *r, const graph_node *q);
onyx_status rule_dynamic_quant_matmul(rewriter *r, const graph_node *mmi);
onyx_status rule_common_subexpression(rewriter *r, const graph_node *n);
onyx_status rule_float16_as_float(rewriter *r, const graph_node *n);

#endif

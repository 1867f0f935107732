/* The table of rewrite rules, in the order they run (core/rules/rules.h): which rule, at which
 * root op, from which file, in which pass. */
#include <string.h>

#include "core/rules/rules.h"

#define PATTERN(name, op, file, fn) {name, "", op, "core/rules/" file, RULE_PATTERNS, false, ONYX_OPT_ALL, false, fn}
#define QDQ(name, fn) PATTERN(name, "QuantizeLinear", "qdq.c", fn)

static const rewrite_rule table[] = {
    /* first, from the graph's end: a QDQ unit that is a function of one 8-bit tensor takes in
     * the Q -> DQ pairs of smaller units inside it before they become 8-bit ops */
    {"qdq_table", "", "QuantizeLinear", "core/rules/qdq_table.c", RULE_PATTERNS, true,
     ONYX_OPT_ALL, false, rule_qdq_table},
    /* at a ReduceMean: the layer norm it begins, else a global pooling */
    PATTERN("layer_norm", "ReduceMean", "layer_norm.c", rule_layer_norm),
    PATTERN("global_average_pool", "ReduceMean", "global_pool.c", rule_global_average_pool),
    PATTERN("gelu_erf", "Erf", "gelu.c", rule_gelu_erf),
    PATTERN("gelu_tanh", "Tanh", "gelu.c", rule_gelu_tanh),
    PATTERN("patch_embedding", "Conv", "patch_embedding.c", rule_patch_embedding),
    QDQ("qdq_conv", rule_qdq_conv),
    QDQ("qdq_matmul", rule_qdq_matmul),
    QDQ("qdq_gemm", rule_qdq_gemm),
    QDQ("qdq_add", rule_qdq_add),
    QDQ("qdq_mul", rule_qdq_mul),
    QDQ("qdq_sigmoid", rule_qdq_sigmoid),
    QDQ("qdq_max_pool", rule_qdq_max_pool),
    QDQ("qdq_global_average_pool", rule_qdq_global_average_pool),
    QDQ("qdq_concat", rule_qdq_concat),
    QDQ("qdq_average_pool", rule_qdq_average_pool),
    QDQ("qdq_softmax", rule_qdq_softmax),
    QDQ("qdq_move", rule_qdq_move),
    PATTERN("qdq_float_gemm", "Gemm", "qdq.c", rule_qdq_float_gemm),
    PATTERN("dynamic_quant_matmul", "MatMulInteger", "dynamic_quant.c", rule_dynamic_quant_matmul),
    /* at a Transpose: the one before a projection, else the one after a row-wise product */
    PATTERN("sink_transpose", "Transpose", "transpose.c", rule_sink_transpose),
    PATTERN("rows_before_product", "Transpose", "transpose.c", rule_rows_before_product),
    /* at a Gather: the tied embedding read through the output projection's transposed weight */
    PATTERN("gather_transposed_weight", "Gather", "tied_embedding.c", rule_gather_transposed_weight),
    /* at a GatherBlockQuantized: the tied int4 embedding read as rows of the product's weight */
    {"gather_nbits_weight", "com.microsoft", "GatherBlockQuantized", "core/rules/tied_embedding.c",
     RULE_PATTERNS, false, ONYX_OPT_ALL, false, rule_gather_nbits_weight},
    PATTERN("swish", "Sigmoid", "swish.c", rule_swish),
    /* then, from the graph's end, over what the patterns made: a chain of 8-bit elementwise ops
     * (com.microsoft's, and the QDQ tables' LookupTables) of one tensor, as one table */
    {"qop_table", "", NULL, "core/rules/qop_table.c", RULE_TABLES, true, ONYX_OPT_ALL, false,
     rule_qop_table},
    {"common_subexpression", "", NULL, "core/rules/cse.c", RULE_DUPLICATES, false, ONYX_OPT_ALL,
     false, rule_common_subexpression},
    {"float16_as_float", "", NULL, "core/rules/half.c", RULE_FLOAT16, false, ONYX_OPT_ALL, true,
     rule_float16_as_float},
};

const rewrite_rule *rewrite_rules(int *count) {
    *count = (int)(sizeof table / sizeof *table);
    return table;
}

bool rule_roots_at(const rewrite_rule *rule, const graph_node *n) {
    return !rule->op_type || (!strcmp(n->op_type, rule->op_type) && !strcmp(n->domain, rule->domain));
}

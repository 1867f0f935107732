/* SiLU spelled out, x * Sigmoid(x), to the one Swish op (one pass over memory instead of two). */
#include "core/rules/rules.h"

onyx_status rule_swish(rewriter *r, const graph_node *sigmoid) {
    if (sigmoid->n_outputs != 1) return ONYX_OK;
    int x = sigmoid->inputs[0];
    const graph_node *mul = rw_sole_reader(r, sigmoid->outputs[0]);
    if (!rw_is_op(mul, "Mul") || rw_other_input(mul, sigmoid->outputs[0]) != x) return ONYX_OK;
    const graph_node *members[] = {sigmoid, mul};
    return rw_place(r, mul, members, 2, "Swish", 24, &x, 1, mul->outputs[0], NULL, 0);
}

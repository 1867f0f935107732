/* GELU spelled out in elementwise ops, as exporters write it, to the one Gelu op (a vectorized
 * pass instead of several passes over memory with a scalar transcendental each):
 *   erf form (torch's default):   x * 0.5 * (1 + Erf(x / sqrt 2))                 -> Gelu
 *   tanh form (GPT-2's gelu_new): x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
 *                                                                                  -> Gelu(tanh)
 * the product with x and 0.5 in any association. */
#include <math.h>
#include <string.h>

#include "core/rules/rules.h"

/* After `a` = 1 + activation: the product with x and 0.5 (in any association). On a match,
 * *last is the node writing the result and members[] gets the product's nodes. */
static bool match_half_product(const rewriter *r, int a, int x, const graph_node **last,
                               const graph_node **members, int *n_members) {
    const graph_node *m1 = rw_sole_reader(r, a);
    if (!rw_is_op(m1, "Mul")) return false;
    int other = rw_other_input(m1, a);
    members[(*n_members)++] = m1;
    if (other == x) { /* (x * a) * 0.5 */
        const graph_node *m2 = rw_sole_reader(r, m1->outputs[0]);
        if (!rw_is_op(m2, "Mul") ||
            !rw_near(rw_scalar(r, rw_other_input(m2, m1->outputs[0])), 0.5))
            return false;
        members[(*n_members)++] = m2;
        *last = m2;
        return true;
    }
    if (rw_near(rw_scalar(r, other), 0.5)) { /* (a * 0.5) * x */
        const graph_node *m2 = rw_sole_reader(r, m1->outputs[0]);
        if (!rw_is_op(m2, "Mul") || rw_other_input(m2, m1->outputs[0]) != x) return false;
        members[(*n_members)++] = m2;
        *last = m2;
        return true;
    }
    const graph_node *h = rw_producer(r, other); /* (x * 0.5) * a */
    if (!rw_is_op(h, "Mul") || r->uses[other] != 1 || rw_other_input(h, x) < 0 ||
        !rw_near(rw_scalar(r, rw_other_input(h, x)), 0.5))
        return false;
    members[(*n_members)++] = h;
    *last = m1;
    return true;
}

/* 1 + act: the Add reading act's output with a constant 1. */
static const graph_node *plus_one(const rewriter *r, const graph_node *act) {
    const graph_node *add = rw_sole_reader(r, act->outputs[0]);
    if (!rw_is_op(add, "Add") || !rw_near(rw_scalar(r, rw_other_input(add, act->outputs[0])), 1.0))
        return NULL;
    return add;
}

/* Erf(x / sqrt 2) or Erf(x * (1/sqrt 2)): x, or -1. */
static int erf_argument(const rewriter *r, const graph_node *erf) {
    const graph_node *d = rw_producer(r, erf->inputs[0]);
    if (!d || r->uses[erf->inputs[0]] != 1 || d->n_inputs != 2) return -1;
    if (rw_is_op(d, "Div") && rw_near(rw_scalar(r, d->inputs[1]), sqrt(2.0))) return d->inputs[0];
    if (rw_is_op(d, "Mul")) {
        for (int k = 0; k < 2; k++)
            if (rw_near(rw_scalar(r, d->inputs[k]), sqrt(0.5))) return d->inputs[1 - k];
    }
    return -1;
}

/* Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)): x, or -1; members get the inner nodes. */
static int tanh_argument(const rewriter *r, const graph_node *tanh_node, const graph_node **members,
                         int *n_members) {
    const graph_node *scale = rw_producer(r, tanh_node->inputs[0]);
    if (!rw_is_op(scale, "Mul") || r->uses[tanh_node->inputs[0]] != 1) return -1;
    int sum = -1;
    for (int k = 0; k < 2; k++)
        if (rw_near(rw_scalar(r, scale->inputs[k]), sqrt(2.0 / M_PI))) sum = scale->inputs[1 - k];
    const graph_node *add = rw_producer(r, sum);
    if (!rw_is_op(add, "Add") || r->uses[sum] != 1) return -1;
    for (int k = 0; k < 2; k++) {
        int x = add->inputs[k], cubic = add->inputs[1 - k];
        const graph_node *mul = rw_producer(r, cubic);
        if (!rw_is_op(mul, "Mul") || r->uses[cubic] != 1) continue;
        for (int j = 0; j < 2; j++) {
            if (!rw_near(rw_scalar(r, mul->inputs[j]), 0.044715)) continue;
            int cube = mul->inputs[1 - j];
            const graph_node *pow = rw_producer(r, cube);
            if (!rw_is_op(pow, "Pow") || r->uses[cube] != 1 || pow->inputs[0] != x ||
                !rw_near(rw_scalar(r, pow->inputs[1]), 3.0))
                continue;
            members[(*n_members)++] = scale;
            members[(*n_members)++] = add;
            members[(*n_members)++] = mul;
            members[(*n_members)++] = pow;
            return x;
        }
    }
    return -1;
}

/* The rest of both forms from the activation `act` of x: 1 + act, times x and 0.5. */
static onyx_status gelu_from(rewriter *r, const graph_node *act, int x, const graph_node **members,
                             int n_members, const char *approximate) {
    const graph_node *last = NULL;
    members[n_members++] = act;
    const graph_node *add = plus_one(r, act);
    if (!add) return ONYX_OK;
    members[n_members++] = add;
    if (!match_half_product(r, add->outputs[0], x, &last, members, &n_members)) return ONYX_OK;
    graph_attr a = {.name = "approximate", .type = ATTR_STRING, .s = approximate,
                    .s_len = approximate ? strlen(approximate) : 0};
    return rw_place(r, last, members, n_members, "Gelu", 20, &x, 1, last->outputs[0], &a,
                    approximate ? 1 : 0);
}

onyx_status rule_gelu_erf(rewriter *r, const graph_node *erf) {
    const graph_node *members[12];
    int x = erf_argument(r, erf);
    if (x < 0) return ONYX_OK;
    members[0] = rw_producer(r, erf->inputs[0]);
    return gelu_from(r, erf, x, members, 1, NULL);
}

onyx_status rule_gelu_tanh(rewriter *r, const graph_node *tanh_node) {
    const graph_node *members[12];
    int n_members = 0;
    int x = tanh_argument(r, tanh_node, members, &n_members);
    if (x < 0) return ONYX_OK;
    return gelu_from(r, tanh_node, x, members, n_members, "tanh");
}

/* QDQ units that are functions of one 8-bit tensor, as tables:
 *   Q(f(DQ(x))), f elementwise float ops of x and one-element constants, inner Q -> DQ pairs
 *   included (GELU spelled out, x * Sigmoid(x), an Add of a quantized constant)
 *                                              -> ai.onyx LookupTable(x, f's 256 results)
 * T is f computed on the 256 codes by copies of the unit's own nodes that read a constant of
 * them instead of x: plan time folds the copies (core/plan_build.c) with the very kernels the unit
 * runs with, so the table holds what the unit computes, exactly. Its sweep runs before the other
 * rules, from the graph's end, so a unit takes in the Q -> DQ pairs of smaller units inside it;
 * the copies it places are no rule's (they are not in the graph the other rules read). */
#include <stdlib.h>
#include <string.h>

#include "core/rules/rules.h"

enum { TABLE_MEMBERS = 48, TABLE_ROOTS = 4, TABLE_DEPTH = 32, TABLE_INPUTS = 8 };

typedef struct table_unit {
    const graph_node *members[TABLE_MEMBERS]; /* the float ops and inner Q and DQ nodes */
    int n_members;
    const graph_node *roots[TABLE_ROOTS]; /* the DQ nodes of x */
    int n_roots;
    const graph_node *stops[TABLE_ROOTS]; /* inner Qs not to look through */
    int n_stops;
    int x;              /* the 8-bit tensor, -1 until found */
    int const_rank;     /* the largest rank of the constants */
} table_unit;

/* The elementwise float ops a table takes: each output element a function of the same element of
 * its inputs (the others one-element constants). */
static bool table_op(const graph_node *n) {
    static const char *const ops[] = {
        "Abs", "Neg", "Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Reciprocal",
        "Softplus", "Softsign", "Elu", "Selu", "Celu", "LeakyRelu", "HardSigmoid", "HardSwish",
        "Gelu", "Mish", "ThresholdedRelu", "PRelu", "Clip", "Floor", "Ceil", "Round", "Sin", "Cos",
        "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Identity"};
    if (*n->domain || n->n_outputs != 1 || n->outputs[0] < 0 || n->n_inputs > TABLE_INPUTS)
        return false;
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
        if (!strcmp(n->op_type, ops[k])) return true;
    return false;
}

static bool table_has(const graph_node *const *list, int n, const graph_node *nd) {
    for (int k = 0; k < n; k++)
        if (list[k] == nd) return true;
    return false;
}

static bool table_add(table_unit *u, const graph_node *nd) {
    if (table_has(u->members, u->n_members, nd)) return true;
    if (u->n_members == TABLE_MEMBERS) return false;
    u->members[u->n_members++] = nd;
    return true;
}

/* What value v of a unit is. */
enum { T_FAIL, T_CONST, T_X };

static int table_value(const rewriter *r, table_unit *u, int v, int depth);

static int table_const(table_unit *u, const tensor *c) {
    if (c->numel != 1) return T_FAIL;
    if (c->rank > u->const_rank) u->const_rank = c->rank;
    return T_CONST;
}

/* A DQ in the unit: of a constant, of x, or of an inner Q (whose float input is again a function
 * of x, taken when it is). */
static int table_dq(const rewriter *r, table_unit *u, const graph_node *dq, int depth) {
    rw_qparams px;
    if (!rw_activation_dq(r, dq->outputs[0], &px)) return T_FAIL;
    const tensor *c = rw_constant(r, px.x);
    if (c) return table_const(u, c);
    const graph_node *q = rw_producer(r, px.x);
    rw_qparams pq;
    if (q && r->uses[px.x] == 1 && !table_has(u->stops, u->n_stops, q) &&
        rw_qdq_params(r, q, false, 1, 0, 0, &pq) &&
        pq.z->dtype == px.z->dtype && depth < TABLE_DEPTH) {
        table_unit before = *u;
        if (table_value(r, u, pq.x, depth + 1) == T_X && table_add(u, q) && table_add(u, dq))
            return T_X;
        *u = before;
    }
    if (u->x >= 0 && u->x != px.x) return T_FAIL; /* a function of two tensors */
    if (!table_has(u->roots, u->n_roots, dq)) {
        if (u->n_roots == TABLE_ROOTS) return T_FAIL;
        u->roots[u->n_roots++] = dq;
    }
    u->x = px.x;
    return T_X;
}

static int table_value(const rewriter *r, table_unit *u, int v, int depth) {
    if (v < 0 || depth > TABLE_DEPTH) return T_FAIL;
    const tensor *c = rw_constant(r, v);
    if (c) return table_const(u, c);
    const graph_node *p = rw_producer(r, v);
    if (!p || p->n_outputs != 1) return T_FAIL;
    if (table_has(u->members, u->n_members, p) || table_has(u->roots, u->n_roots, p)) return T_X;
    if (rw_is_op(p, "DequantizeLinear")) return table_dq(r, u, p, depth);
    if (!table_op(p)) return T_FAIL;
    bool of_x = false;
    for (int i = 0; i < p->n_inputs; i++) {
        if (p->inputs[i] < 0) continue;
        int kind = table_value(r, u, p->inputs[i], depth + 1);
        if (kind == T_FAIL) return T_FAIL;
        of_x |= kind == T_X;
    }
    /* a constant expression is constant folding's */
    return of_x && table_add(u, p) ? T_X : T_FAIL;
}

/* The member of the unit ending at q whose output something else reads too (or a graph output:
 * the unit cannot go), or NULL. */
static const graph_node *table_leak(const rewriter *r, const table_unit *u, const graph_node *q) {
    for (int m = 0; m < u->n_members; m++) {
        if (u->members[m] == q) continue;
        int v = u->members[m]->outputs[0], readers = 0;
        for (int k = 0; k < u->n_members; k++)
            for (int i = 0; i < u->members[k]->n_inputs; i++) readers += u->members[k]->inputs[i] == v;
        if (readers != r->uses[v]) return u->members[m];
    }
    return NULL;
}

/* Whether the unit's constants broadcast to x's shape without growing it. */
static onyx_status table_keeps_shape(rewriter *r, const table_unit *u, bool *keeps) {
    *keeps = u->const_rank == 0;
    if (*keeps) return ONYX_OK;
    TRY(rw_need_types(r));
    const type_info *t = &r->types[u->x];
    *keeps = t->kind == ONYX_VALUE_TENSOR && t->rank >= u->const_rank;
    return ONYX_OK;
}

int table_node_order(const void *a, const void *b) {
    const graph_node *x = *(const graph_node *const *)a, *y = *(const graph_node *const *)b;
    return (x > y) - (x < y);
}

int table_codes_value(rewriter *r, int x, onyx_dtype xt) {
    tensor *codes = malloc(sizeof *codes + 256);
    if (!rw_keep(r, codes)) return -1;
    *codes = (tensor){.dtype = xt, .rank = 1, .dims = {256}, .numel = 256, .data = codes + 1,
                      .nbytes = 256, .device = DEVICE_CPU};
    for (int b = 0; b < 256; b++) ((uint8_t *)codes->data)[b] = (uint8_t)b;
    return rw_add_value(r, x, "/codes", codes);
}

/* The copy of value v for the table: a member's output's copy, a root DQ's copy, or v. */
static int table_copy_of(const table_unit *u, const int *copies, const int *root_copies, int v) {
    for (int m = 0; m < u->n_members; m++)
        if (u->members[m]->outputs[0] == v) return copies[m];
    for (int k = 0; k < u->n_roots; k++)
        if (u->roots[k]->outputs[0] == v) return root_copies[k];
    return v;
}

/* Places the unit as LookupTable(x, T) -> q's output at q, T made by copies of the members
 * (q last among them) that read the codes of x's type. */
static onyx_status table_place(rewriter *r, const graph_node *q, const table_unit *u,
                               onyx_dtype xt) {
    int codes_v = table_codes_value(r, u->x, xt);
    if (codes_v < 0) return onyx_oom("graph rewrite");
    /* each root DQ's copy right after it (one there already, of another unit, serves) */
    int root_copies[TABLE_ROOTS], copies[TABLE_MEMBERS];
    for (int k = 0; k < u->n_roots; k++) {
        const graph_node *dq = u->roots[k], *there = rw_placed_after(r, dq);
        if (there) {
            root_copies[k] = there->outputs[0];
            continue;
        }
        root_copies[k] = rw_add_value(r, dq->outputs[0], "/table", NULL);
        if (root_copies[k] < 0) return onyx_oom("graph rewrite");
        int ins[3] = {codes_v, dq->inputs[1], dq->inputs[2]};
        TRY(rw_place_at(r, dq, true, dq->name, NULL, 0, "", "DequantizeLinear", dq->version, ins,
                        3, root_copies[k], dq->attrs, dq->n_attrs));
    }
    /* the members' copies in their places, in graph order (what they read comes first) */
    table_unit sorted = *u;
    qsort(sorted.members, (size_t)sorted.n_members, sizeof *sorted.members, table_node_order);
    for (int m = 0; m < sorted.n_members; m++) {
        copies[m] = rw_add_value(r, sorted.members[m]->outputs[0], "/table", NULL);
        if (copies[m] < 0) return onyx_oom("graph rewrite");
    }
    for (int m = 0; m < sorted.n_members; m++) {
        const graph_node *nd = sorted.members[m];
        int ins[TABLE_INPUTS];
        for (int i = 0; i < nd->n_inputs; i++)
            ins[i] = nd->inputs[i] < 0 ? -1
                                       : table_copy_of(&sorted, copies, root_copies, nd->inputs[i]);
        TRY(rw_place_at(r, nd, false, nd->name, &nd, 1, nd->domain, nd->op_type, nd->version, ins,
                        nd->n_inputs, copies[m], nd->attrs, nd->n_attrs));
    }
    /* the lookup after q's copy, named after the op that made q's input */
    int ins[2] = {u->x, table_copy_of(&sorted, copies, root_copies, q->outputs[0])};
    TRY(rw_place_at(r, q, true, rw_producer(r, q->inputs[0]) ? rw_producer(r, q->inputs[0])->name
                                                              : q->name,
                    NULL, 0, "ai.onyx", "LookupTable", 1, ins, 2, q->outputs[0], NULL, 0));
    r->uses[u->x]++;
    /* the members read the root DQs no more */
    for (int m = 0; m < u->n_members; m++)
        for (int i = 0; i < u->members[m]->n_inputs; i++)
            for (int k = 0; k < u->n_roots; k++)
                if (u->members[m]->inputs[i] == u->roots[k]->outputs[0])
                    rw_release(r, u->members[m]->inputs[i]);
    return ONYX_OK;
}

/* The table unit ending at Q node q, if there is one. An inner Q -> DQ pair whose value something
 * else reads too ends the unit there instead (x is then that pair's 8-bit value), tried again. */
onyx_status rule_qdq_table(rewriter *r, const graph_node *q) {
    rw_qparams y;
    if (!rw_qdq_params(r, q, false, 1, 0, 0, &y)) return ONYX_OK;
    const graph_node *op = rw_producer(r, y.x);
    if (!op || rw_is_op(op, "DequantizeLinear") || !table_op(op)) return ONYX_OK;
    table_unit u = {.x = -1};
    for (int attempt = 0;; attempt++) {
        const graph_node *stops[TABLE_ROOTS];
        int n_stops = u.n_stops;
        memcpy(stops, u.stops, sizeof stops);
        u = (table_unit){.x = -1, .n_stops = n_stops};
        memcpy(u.stops, stops, sizeof stops);
        if (table_value(r, &u, y.x, 0) != T_X || !table_add(&u, q)) return ONYX_OK;
        const graph_node *leak = table_leak(r, &u, q);
        if (!leak) break;
        /* an inner DQ, or the Q before one: the pair's Q becomes a stop */
        if (rw_is_op(leak, "DequantizeLinear")) leak = rw_producer(r, leak->inputs[0]);
        if (!rw_is_op(leak, "QuantizeLinear") || u.n_stops == TABLE_ROOTS) return ONYX_OK;
        u.stops[u.n_stops++] = leak;
    }
    bool keeps;
    TRY(table_keeps_shape(r, &u, &keeps));
    if (!keeps) return ONYX_OK;
    if (!r->ops->find("ai.onyx", "LookupTable", 1)) return ONYX_OK;
    rw_qparams px;
    if (!rw_activation_dq(r, u.roots[0]->outputs[0], &px)) return ONYX_OK;
    return table_place(r, q, &u, px.z->dtype);
}

/* QOperator units that are functions of one 8-bit tensor, as tables:
 *   chains of com.microsoft QLinearMul, QLinearAdd, QLinearSigmoid, QLinearLeakyRelu (and the
 *   ai.onyx LookupTables the QDQ tables made, core/rules/qdq_table.c) whose 8-bit data inputs are
 *   one tensor x, the unit's own values and one-element constants (x * Sigmoid(x), GELU around
 *   an Erf table)                              -> ai.onyx LookupTable(x, the unit's 256 results)
 * The table is computed as the QDQ tables are: copies of the unit's own nodes read a constant of
 * the 256 codes of x's type instead of x, and plan time folds them (core/plan_build.c) with the
 * very kernels the unit runs with, so the table holds what the unit computes, exactly. The rule has a
 * pass of its own after the patterns (core/optimize.c), so that it sees their LookupTables. */
#include <stdlib.h>
#include <string.h>

#include "core/rules/rules.h"

enum { QT_MEMBERS = 48, QT_STOPS = 4, QT_DEPTH = 32, QT_INPUTS = 8 };

typedef struct qop_unit {
    const graph_node *members[QT_MEMBERS]; /* the unit's nodes, its root among them */
    int n_members;
    const graph_node *stops[QT_STOPS]; /* members read outside the unit: their output may be x */
    int n_stops;
    int x;          /* the 8-bit tensor, -1 until found */
    int const_rank; /* the largest rank of the one-element data constants */
} qop_unit;

static bool ms_op(const graph_node *n, const char *op) {
    return !strcmp(n->domain, "com.microsoft") && !strcmp(n->op_type, op);
}

/* The unit's data inputs of node n (each output element a function of the same element of
 * them): their count, their input indices in *at; 0 when n is no op of a unit. A root must be a
 * com.microsoft op (a LookupTable alone is a table already). */
static int qop_data_inputs(const graph_node *n, bool root, const int **at) {
    static const int binary[] = {0, 3}, unary[] = {0};
    if (n->n_outputs != 1 || n->outputs[0] < 0 || n->n_inputs > QT_INPUTS) return 0;
    *at = unary;
    if (ms_op(n, "QLinearAdd") || ms_op(n, "QLinearMul")) {
        *at = binary;
        return n->n_inputs >= 7 ? 2 : 0;
    }
    if (ms_op(n, "QLinearSigmoid") || ms_op(n, "QLinearLeakyRelu")) return n->n_inputs >= 4;
    if (!root && !strcmp(n->domain, "ai.onyx") && !strcmp(n->op_type, "LookupTable"))
        return n->n_inputs == 2;
    return 0;
}

static bool qop_is_data_input(const graph_node *n, int i) {
    const int *at;
    int k = qop_data_inputs(n, false, &at);
    for (int j = 0; j < k; j++)
        if (at[j] == i) return true;
    return false;
}

static bool qop_has(const graph_node *const *list, int n, const graph_node *nd) {
    for (int k = 0; k < n; k++)
        if (list[k] == nd) return true;
    return false;
}

/* What value v of a unit is. */
enum { Q_FAIL, Q_CONST, Q_X };

/* v as the unit's x: one tensor only, never a constant of more than one element. */
static int qop_as_x(const rewriter *r, qop_unit *u, int v) {
    if (rw_constant(r, v) || (u->x >= 0 && u->x != v)) return Q_FAIL;
    u->x = v;
    return Q_X;
}

static int qop_value(const rewriter *r, qop_unit *u, int v, int depth);

/* Node p as a member: its scales and zero points one-element constants (a LookupTable's table is
 * read as it is), its data inputs functions of x; Q_FAIL leaves u as it was. */
static int qop_member(const rewriter *r, qop_unit *u, const graph_node *p, int depth) {
    const int *at;
    int n_data = qop_data_inputs(p, depth == 0, &at);
    if (!n_data || u->n_members == QT_MEMBERS || depth > QT_DEPTH) return Q_FAIL;
    bool table = !strcmp(p->domain, "ai.onyx");
    for (int i = 0; i < p->n_inputs && !table; i++) {
        if (p->inputs[i] < 0 || qop_is_data_input(p, i)) continue;
        const tensor *c = rw_constant(r, p->inputs[i]);
        if (!c || c->numel != 1) return Q_FAIL;
    }
    qop_unit before = *u;
    bool of_x = false;
    for (int k = 0; k < n_data; k++) {
        int kind = qop_value(r, u, p->inputs[at[k]], depth + 1);
        if (kind == Q_FAIL) {
            *u = before;
            return Q_FAIL;
        }
        of_x |= kind == Q_X;
    }
    if (!of_x) { /* a constant expression is constant folding's */
        *u = before;
        return Q_FAIL;
    }
    u->members[u->n_members++] = p;
    return Q_X;
}

static int qop_value(const rewriter *r, qop_unit *u, int v, int depth) {
    if (v < 0) return Q_FAIL;
    const tensor *c = rw_constant(r, v);
    if (c) {
        if (c->numel != 1) return Q_FAIL;
        if (c->rank > u->const_rank) u->const_rank = c->rank;
        return Q_CONST;
    }
    if (v == u->x) return Q_X;
    const graph_node *p = rw_producer(r, v);
    if (p && qop_has(u->members, u->n_members, p)) return Q_X;
    if (p && !qop_has(u->stops, u->n_stops, p) && qop_member(r, u, p, depth) == Q_X) return Q_X;
    return qop_as_x(r, u, v);
}

/* The member other than the root whose output something outside the unit reads too (or a graph
 * output), or NULL. */
static const graph_node *qop_leak(const rewriter *r, const qop_unit *u, const graph_node *root) {
    for (int m = 0; m < u->n_members; m++) {
        if (u->members[m] == root) continue;
        int v = u->members[m]->outputs[0], readers = 0;
        for (int k = 0; k < u->n_members; k++)
            for (int i = 0; i < u->members[k]->n_inputs; i++) readers += u->members[k]->inputs[i] == v;
        if (readers != r->uses[v]) return u->members[m];
    }
    return NULL;
}

/* Whether a member reads x or a member's output other than as data (a LookupTable's table):
 * the copies could not read it as the unit does. */
static bool qop_reads_unit_as_parameter(const qop_unit *u) {
    for (int m = 0; m < u->n_members; m++) {
        const graph_node *nd = u->members[m];
        for (int i = 0; i < nd->n_inputs; i++) {
            if (nd->inputs[i] < 0 || qop_is_data_input(nd, i)) continue;
            if (nd->inputs[i] == u->x) return true;
            for (int k = 0; k < u->n_members; k++)
                if (u->members[k]->outputs[0] == nd->inputs[i]) return true;
        }
    }
    return false;
}

/* The copy of data value v for the table: a member's output's copy, the codes for x, or v. */
static int qop_copy_of(const qop_unit *u, const int *copies, int codes_v, int v) {
    if (v == u->x) return codes_v;
    for (int m = 0; m < u->n_members; m++)
        if (u->members[m]->outputs[0] == v) return copies[m];
    return v;
}

/* Places the unit as LookupTable(x, T) -> root's output after the root, T made by copies of the
 * members (in their places) that read the codes of x's type. */
static onyx_status qop_place(rewriter *r, const graph_node *root, const qop_unit *u,
                             onyx_dtype xt) {
    int codes_v = table_codes_value(r, u->x, xt);
    if (codes_v < 0) return onyx_oom("graph rewrite");
    /* in graph order: what a copy reads comes first */
    qop_unit sorted = *u;
    qsort(sorted.members, (size_t)sorted.n_members, sizeof *sorted.members, table_node_order);
    int copies[QT_MEMBERS];
    for (int m = 0; m < sorted.n_members; m++) {
        copies[m] = rw_add_value(r, sorted.members[m]->outputs[0], "/table", NULL);
        if (copies[m] < 0) return onyx_oom("graph rewrite");
    }
    for (int m = 0; m < sorted.n_members; m++) {
        const graph_node *nd = sorted.members[m];
        int ins[QT_INPUTS];
        for (int i = 0; i < nd->n_inputs; i++)
            ins[i] = nd->inputs[i] < 0 || !qop_is_data_input(nd, i)
                         ? nd->inputs[i]
                         : qop_copy_of(&sorted, copies, codes_v, nd->inputs[i]);
        TRY(rw_place_at(r, nd, false, nd->name, &nd, 1, nd->domain, nd->op_type, nd->version, ins,
                        nd->n_inputs, copies[m], nd->attrs, nd->n_attrs));
    }
    int ins[2] = {u->x, qop_copy_of(&sorted, copies, codes_v, root->outputs[0])};
    TRY(rw_place_at(r, root, true, root->name, NULL, 0, "ai.onyx", "LookupTable", 1, ins, 2,
                    root->outputs[0], NULL, 0));
    r->uses[u->x]++;
    /* the members read x no more (their copies read the codes) */
    for (int m = 0; m < u->n_members; m++)
        for (int i = 0; i < u->members[m]->n_inputs; i++)
            if (u->members[m]->inputs[i] == u->x) rw_release(r, u->x);
    return ONYX_OK;
}

/* The table unit ending at node root, if there is one. A member whose value something else reads
 * too ends the unit there instead (x may then be its output), tried again. */
onyx_status rule_qop_table(rewriter *r, const graph_node *root) {
    const int *at;
    if (!qop_data_inputs(root, true, &at)) return ONYX_OK;
    qop_unit u = {.x = -1};
    for (;;) {
        qop_unit fresh = {.x = -1, .n_stops = u.n_stops};
        memcpy(fresh.stops, u.stops, sizeof u.stops);
        u = fresh;
        if (qop_member(r, &u, root, 0) != Q_X) return ONYX_OK;
        const graph_node *leak = qop_leak(r, &u, root);
        if (!leak) break;
        if (u.n_stops == QT_STOPS) return ONYX_OK;
        u.stops[u.n_stops++] = leak;
    }
    if (qop_reads_unit_as_parameter(&u)) return ONYX_OK;
    TRY(rw_need_types(r));
    const type_info *t = &r->types[u.x];
    if (t->kind != ONYX_VALUE_TENSOR || !rw_eight_bit(t->dtype)) return ONYX_OK;
    /* the one-element constants broadcast to x's shape without growing it */
    if (u.const_rank > 0 && t->rank < u.const_rank) return ONYX_OK;
    if (!r->ops->find("ai.onyx", "LookupTable", 1)) return ONYX_OK;
    return qop_place(r, root, &u, t->dtype);
}

/* The rewrite driver: runs the table of rules (core/rules/table.c) over a graph when a subgraph
 * is created. Each pass is one rewriter over the graph the pass before made (core/rewriter.h);
 * within it, each sweep walks the nodes once (forward, or from the end) and tries at each node
 * the sweep's rules of its op, in table order, until one replaces it. A rule matches the nodes
 * around its root and places its replacement through the rewriter; a pattern is replaced only
 * when its inner values are read by the pattern alone (or by Shapes, which fold) and are no graph
 * outputs, and the replacement takes the place of the pattern's nodes, so the order stays
 * topological. Each pass runs once, not to a fixpoint: no rule of a pass enables another of it
 * (run again over the test, conformance and zoo models, the pattern pass fires only at the QDQ
 * tables' own copies, which must stay as the unit computes them: core/rules/qdq_table.c). Where
 * one rule reads what another makes, it has a later pass: the QOperator tables take in the QDQ
 * tables' lookups (core/rules/qop_table.c). */
#include "core/optimize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rewriter.h"
#include "core/rules/rules.h"

/* A rewritten graph and the nodes' io blocks and attributes it owns. */
typedef struct rewritten {
    graph g; /* first: the graph handed out is this member */
    void **owned;
    int n_owned;
} rewritten;

void graph_optimized_free(graph *g) {
    if (!g) return;
    rewritten *rw = (rewritten *)g;
    for (int k = 0; k < rw->n_owned; k++) free(rw->owned[k]);
    free(rw->owned);
    free(g->nodes);
    free(g->values);
    free(rw);
}

/* `later`, made from the graph of `earlier`, takes over the blocks earlier owned; earlier's node
 * and value arrays go. */
static onyx_status adopt(rewritten *later, rewritten *earlier) {
    if (!earlier) return ONYX_OK;
    void **all = realloc(later->owned,
                         ((size_t)later->n_owned + (size_t)earlier->n_owned + 1) * sizeof *all);
    if (!all) return onyx_oom("graph rewrite");
    memcpy(all + later->n_owned, earlier->owned, (size_t)earlier->n_owned * sizeof *all);
    later->owned = all;
    later->n_owned += earlier->n_owned;
    free(earlier->owned);
    free(earlier->g.nodes);
    free(earlier->g.values);
    free(earlier);
    return ONYX_OK;
}

static bool rule_runs(const rewrite_rule *rule, const optimize_options *o) {
    return o->level >= rule->level && (!rule->half_as_float || o->half_as_float);
}

/* One walk over r's graph trying rules[0 .. n) (one pass, one direction) at each node. */
static onyx_status sweep(rewriter *r, const rewrite_rule *rules, int n,
                         const optimize_options *o) {
    onyx_status st = ONYX_OK;
    int nn = r->g->n_nodes;
    for (int step = 0; step < nn && st == ONYX_OK; step++) {
        int idx = rules[0].backward ? nn - 1 - step : step;
        const graph_node *node = &r->g->nodes[idx];
        for (int k = 0; k < n && st == ONYX_OK && !r->gone[idx]; k++) {
            if (!rule_runs(&rules[k], o) || !rule_roots_at(&rules[k], node)) continue;
            int placed = r->n_placed;
            st = rules[k].apply(r, node);
            if (st == ONYX_OK && r->n_placed > placed && o->observe)
                o->observe(o->user, rules[k].name, rules[k].family, node);
        }
    }
    if (r->sweep_state_free) r->sweep_state_free(r->sweep_state);
    r->sweep_state = NULL;
    r->sweep_state_free = NULL;
    return st;
}

/* The rules of `pass` over g (the graph of *rw, or the original with *rw NULL): *rw becomes the
 * result where they changed anything. */
static onyx_status run_pass(const graph *g, const op_registry *ops, const optimize_options *o,
                            rule_pass pass, rewritten **rw) {
    int n_rules;
    const rewrite_rule *rules = rewrite_rules(&n_rules);
    bool any = false;
    for (int k = 0; k < n_rules; k++) any |= rules[k].pass == pass && rule_runs(&rules[k], o);
    if (!any) return ONYX_OK;
    if (*rw) g = &(*rw)->g;
    rewriter r;
    graph *made = NULL;
    rewritten *next = NULL;
    onyx_status st = rw_init(&r, g, ops);
    for (int first = 0; first < n_rules && st == ONYX_OK;) {
        int end = first + 1; /* a sweep: the rules of one pass and direction in a row */
        while (end < n_rules && rules[end].pass == rules[first].pass &&
               rules[end].backward == rules[first].backward)
            end++;
        if (rules[first].pass == pass) st = sweep(&r, rules + first, end - first, o);
        first = end;
    }
    void **owned = NULL;
    int n_owned = 0;
    if (st == ONYX_OK) st = rw_finish(&r, &made, &owned, &n_owned);
    rw_free(&r);
    if (st != ONYX_OK || !made) return st;
    next = calloc(1, sizeof *next);
    if (!next) {
        for (int k = 0; k < n_owned; k++) free(owned[k]);
        free(owned);
        free(made->nodes);
        free(made->values);
        free(made);
        return onyx_oom("graph rewrite");
    }
    next->g = *made;
    free(made);
    next->owned = owned;
    next->n_owned = n_owned;
    /* last, since g may be the graph of *rw, which the new graph takes over here */
    st = adopt(next, *rw);
    if (st != ONYX_OK) {
        graph_optimized_free(&next->g);
        return st;
    }
    *rw = next;
    return ONYX_OK;
}

onyx_status graph_optimize(const graph *g, const op_registry *ops, const optimize_options *opts,
                           graph **out) {
    *out = NULL;
    rewritten *rw = NULL;
    static const rule_pass passes[] = {RULE_PATTERNS, RULE_TABLES, RULE_DUPLICATES,
                                         RULE_FLOAT16};
    onyx_status st = ONYX_OK;
    for (size_t p = 0; p < sizeof passes / sizeof *passes && st == ONYX_OK; p++)
        st = run_pass(g, ops, opts, passes[p], &rw);
    if (st != ONYX_OK) {
        if (rw) graph_optimized_free(&rw->g);
        return st;
    }
    *out = rw ? &rw->g : NULL;
    return ONYX_OK;
}

void graph_op_counts(const graph *g, char *buf, size_t cap) {
    size_t len = 0;
    if (cap) buf[0] = '\0';
    const graph_node *prev = NULL; /* the op printed last: the next is the least above it */
    for (;;) {
        const graph_node *next = NULL;
        int count = 0;
        for (int n = 0; n < g->n_nodes; n++) {
            const graph_node *nd = &g->nodes[n];
            int by_prev = prev ? strcmp(nd->domain, prev->domain) : 1;
            if (prev && !by_prev) by_prev = strcmp(nd->op_type, prev->op_type);
            if (by_prev <= 0) continue;
            int by_next = next ? strcmp(nd->domain, next->domain) : -1;
            if (next && !by_next) by_next = strcmp(nd->op_type, next->op_type);
            if (by_next < 0) {
                next = nd;
                count = 1;
            } else if (by_next == 0) {
                count++;
            }
        }
        if (!next) return;
        int w = snprintf(buf + len, cap > len ? cap - len : 0, "%s%s%s%s %d", prev ? ", " : "",
                         next->domain, *next->domain ? ":" : "", next->op_type, count);
        if (w > 0) len += (size_t)w;
        if (len >= cap) return;
        prev = next;
    }
}

/* Common subexpressions: a node that computes what an earlier node computes (core/graph_cse.c
 * finds them) becomes an Identity of that node's output, which costs nothing (Identity aliases
 * its input). Its own pass, after the patterns, which find their inner values single-use. */
#include <stdlib.h>

#include "core/graph_cse.h"
#include "core/rules/rules.h"

onyx_status rule_common_subexpression(rewriter *r, const graph_node *n) {
    if (!r->sweep_state) { /* the first node of the sweep: find them all once */
        int *dup_of = NULL;
        TRY(graph_find_duplicates(r->g, &dup_of));
        r->sweep_state = dup_of;
        r->sweep_state_free = free;
    }
    const int *dup_of = r->sweep_state;
    int o = dup_of[rw_index(r, n)];
    if (o < 0) return ONYX_OK;
    const graph_node *members[1] = {n};
    int x = r->g->nodes[o].outputs[0];
    /* Identity of a tensor means the same in every version (the model's opset picks one); of a
     * sequence or optional, or of what inference does not know, the newest */
    TRY(rw_need_types(r));
    int version = r->types[x].kind == ONYX_VALUE_TENSOR ? 1 : 25;
    TRY(rw_place(r, n, members, 1, "Identity", version, &x, 1, n->outputs[0], NULL, 0));
    if (r->gone[rw_index(r, n)]) r->uses[x]++; /* o's output now has this reader too */
    return ONYX_OK;
}

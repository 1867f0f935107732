/* If: runs the then or else subgraph, prepared once, and hands its results out as the node's. */
#include <stdlib.h>

#include "core/exec.h"
#include "kernels_cpu/control/util.h"
#include "kernels_cpu/cpu_kernels.h"

typedef struct if_state {
    subgraph *branch[2]; /* else, then */
    int n_out;
    onyx_value **scratch; /* receives the branch outputs the node omits */
    onyx_value **outs;    /* per run: where each branch output goes */
} if_state;

void cpu_if_release(void *state) {
    if_state *s = state;
    if (!s) return;
    for (int b = 0; b < 2; b++) subgraph_free(s->branch[b]);
    if (s->scratch)
        for (int i = 0; i < s->n_out; i++) {
            value_clear(s->scratch[i]);
            free(s->scratch[i]);
        }
    free(s->scratch);
    free(s->outs);
    free(s);
}

onyx_status cpu_if_prepare(const kernel_prep *p, void **state) {
    static const char *const names[2] = {"else_branch", "then_branch"};
    onyx_status st = ONYX_OK;
    if_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("If state");
    s->n_out = p->n_out;
    s->scratch = calloc((size_t)p->n_out + 1, sizeof *s->scratch);
    s->outs = calloc((size_t)p->n_out + 1, sizeof *s->outs);
    if (!s->scratch || !s->outs) {
        st = onyx_oom("If state");
        goto done;
    }
    for (int b = 0; b < 2; b++) {
        const graph *g = attr_graph(p->node, names[b]);
        if (!g) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL, "graph attribute '%s' is missing", names[b]);
            goto done;
        }
        /* the branch runs with no inputs */
        if (g->n_outputs != p->n_out || g->n_inputs != 0) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL, "%s has %d inputs and %d outputs, expected 0 "
                            "and %d", names[b], g->n_inputs, g->n_outputs, p->n_out);
            goto done;
        }
        CHECK(subgraph_create(g, p->env, &s->branch[b]));
    }
    for (int i = 0; i < p->n_out; i++) {
        s->scratch[i] = value_new();
        if (!s->scratch[i]) {
            st = onyx_oom("If state");
            goto done;
        }
    }
    *state = s;
    s = NULL;
done:
    cpu_if_release(s);
    return st;
}

onyx_status cpu_if_run(const kernel_call *c) {
    if_state *s = c->state;
    bool cond;
    TRY(cpu_ctl_read_bool(c->in[0], "cond", &cond));
    /* the node's own outputs arrive empty: the branch writes into them directly */
    for (int i = 0; i < s->n_out; i++) s->outs[i] = c->out[i] ? c->out[i] : s->scratch[i];
    onyx_status st = subgraph_run(s->branch[cond], c->frame, NULL, s->outs);
    for (int i = 0; i < s->n_out; i++)
        if (!c->out[i]) value_clear(s->scratch[i]);
    return st;
}

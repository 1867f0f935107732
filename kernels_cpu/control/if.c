/* If: runs the then or else subgraph, prepared once, and hands its results out as the node's. */
#include <stdlib.h>

#include "core/exec_run.h"
#include "kernels_cpu/control/util.h"
#include "kernels_cpu/cpu_kernels.h"

/* Prepared, shared by concurrent runs: read only at run time. */
typedef struct if_state {
    subgraph *branch[2]; /* else, then */
    int n_out;
} if_state;

/* One run context's working values: a branch run writes into them. */
typedef struct if_fork {
    const if_state *s;
    onyx_value **scratch; /* receives the branch outputs the node omits */
    onyx_value **outs;    /* per run: where each branch output goes */
} if_fork;

void cpu_if_release(void *state) {
    if_state *s = state;
    if (!s) return;
    for (int b = 0; b < 2; b++) subgraph_free(s->branch[b]);
    free(s);
}

void cpu_if_unfork(void *fork) {
    if_fork *f = fork;
    if (!f) return;
    if (f->scratch)
        for (int i = 0; i < f->s->n_out; i++) {
            value_clear(f->scratch[i]);
            free(f->scratch[i]);
        }
    free(f->scratch);
    free(f->outs);
    free(f);
}

onyx_status cpu_if_fork(const void *state, void **out) {
    const if_state *s = state;
    if_fork *f = calloc(1, sizeof *f);
    if (!f) return onyx_oom("If working state");
    f->s = s;
    f->scratch = calloc((size_t)s->n_out + 1, sizeof *f->scratch);
    f->outs = calloc((size_t)s->n_out + 1, sizeof *f->outs);
    bool ok = f->scratch && f->outs;
    for (int i = 0; ok && i < s->n_out; i++) ok = (f->scratch[i] = value_new()) != NULL;
    if (!ok) {
        cpu_if_unfork(f);
        return onyx_oom("If working state");
    }
    *out = f;
    return ONYX_OK;
}

onyx_status cpu_if_prepare(const kernel_prep *p, void **state) {
    static const char *const names[2] = {"else_branch", "then_branch"};
    onyx_status st = ONYX_OK;
    if_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("If state");
    s->n_out = p->n_out;
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
    *state = s;
    s = NULL;
done:
    cpu_if_release(s);
    return st;
}

onyx_status cpu_if_run(const kernel_call *c) {
    if_fork *f = c->state;
    const if_state *s = f->s;
    bool cond;
    TRY(cpu_ctl_read_bool(c->in[0], "cond", &cond));
    /* the node's own outputs arrive empty: the branch writes into them directly */
    for (int i = 0; i < s->n_out; i++) f->outs[i] = c->out[i] ? c->out[i] : f->scratch[i];
    onyx_status st = subgraph_run(s->branch[cond], c->frame, NULL, f->outs);
    for (int i = 0; i < s->n_out; i++)
        if (!c->out[i]) value_clear(f->scratch[i]);
    return st;
}

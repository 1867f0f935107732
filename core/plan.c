/* A plan's structure and the edits the passes make to its steps: freeing a plan (its steps'
 * kernel states, its values and constants), which step makes and which steps read each value,
 * and a fused step taking the place of the steps it absorbed. The bottom of the plan layers:
 * it calls nothing above it. */
#include "core/plan.h"

#include <stdlib.h>

void plan_free_device_constant(const plan *p, plan_value *v) {
    if (!v->constant) return;
    if (v->constant->data && !v->shared_bytes) p->devices[v->device]->free(v->constant->data);
    free(v->constant);
    v->constant = NULL;
}

void plan_free(plan *p) {
    if (!p) return;
    pthread_mutex_destroy(&p->idle_lock);
    free(p->raw_weights);
    for (int s = 0; s < p->n_steps; s++) {
        plan_step *ps = &p->steps[s];
        if (ps->state && ps->k->release) ps->k->release(ps->state);
        free(ps->release);
        free(ps->own_node);
    }
    free(p->steps);
    for (int i = 0; i < p->n_params; i++) free(p->params[i]);
    free(p->params);
    free(p->segment_end);
    free(p->in_device);
    if (p->vals) {
        for (int i = 0; i < p->n_vals; i++) {
            plan_value *v = &p->vals[i];
            if (v->owns_constant && v->constant && v->device != DEVICE_CPU) {
                plan_free_device_constant(p, v);
            } else if (v->owns_constant && v->constant) {
                tensor_release(v->constant);
                free(v->constant);
            }
            type_release(&v->type);
        }
    }
    free(p->vals);
    if (p->sig)
        for (int i = 0; i < p->n_sig; i++) type_release(&p->sig[i]);
    free(p->sig);
    free(p);
}

onyx_status plan_keep_params(plan *p, const op_params *params, const op_params **out) {
    *out = NULL;
    if (!params || params->kind == OP_PARAMS_NONE) return ONYX_OK;
    op_params **grown = realloc(p->params, sizeof *grown * (size_t)(p->n_params + 1));
    if (!grown) return onyx_oom("plan");
    p->params = grown;
    op_params *kept = malloc(sizeof *kept);
    if (!kept) return onyx_oom("plan");
    *kept = *params;
    p->params[p->n_params++] = kept;
    *out = kept;
    return ONYX_OK;
}

void plan_set_producers(const graph *g, plan *p) {
    for (int i = 0; i < p->n_vals; i++) p->vals[i].first = -1;
    for (int s = 0; s < p->n_steps; s++) {
        const graph_node *nd = step_node(g, &p->steps[s]);
        for (int o = 0; o < nd->n_outputs; o++)
            if (nd->outputs[o] >= 0) p->vals[nd->outputs[o]].first = s;
    }
}

void plan_readers(const graph *g, const plan *p, int *uses, int *consumer) {
    for (int i = 0; i < p->n_vals; i++) {
        uses[i] = 0;
        consumer[i] = -1;
    }
    for (int s = 0; s < p->n_steps; s++) {
        const graph_node *nd = step_node(g, &p->steps[s]);
        for (int k = 0; k < nd->n_inputs; k++)
            if (nd->inputs[k] >= 0) {
                uses[nd->inputs[k]]++;
                consumer[nd->inputs[k]] = s;
            }
        for (int k = 0; k < nd->n_captures; k++) uses[nd->captures[k]]++;
    }
}

void plan_absorb_steps(plan *p, bool *gone, const int *steps, int n) {
    for (int i = 0; i < n; i++) {
        plan_step *a = &p->steps[steps[i]];
        if (a->state && a->k->release) a->k->release(a->state);
        a->state = NULL;
        free(a->own_node); /* a device step's node with its inputs moved (exec_place.c) */
        a->own_node = NULL;
        gone[steps[i]] = true;
    }
}

void plan_set_fused(plan_step *ps, graph_node *fn) {
    if (ps->own_node != fn) free(ps->own_node);
    ps->own_node = fn;
    ps->fused = true;
}

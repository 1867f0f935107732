/* The device epilogue pass: a device's Conv, MatMul or Gemm (kernel flagged KF_DEVICE_EPILOGUE)
 * takes the bias Add, residual Add and Relu that only it feeds into its own library call (cuDNN's
 * convolution with bias, sum and activation; cuBLASLt's bias and Relu epilogues, the residual as
 * its C), a
 * BatchNormalization its Relu, so that its result is written once instead of being read and
 * written again by each of those nodes. The chain goes to the kernel's prepare in
 * kernel_prep.fused (core/fuse.h: FUSE_SHIFT reading the fused node's input 2, FUSE_SUM its input
 * 3, FUSE_RELU). The kernel is asked first through its takes_chain query (CUDA's and the TEST
 * device's epilogue kernels answer it; one without it takes no chain), and its prepare must then
 * take the chain.
 * The CPU's fusion pass (core/fuse.c), which runs first, has taken only attention chains from
 * device steps. A plan layer that shares the CPU pass's node matchers (core/fuse_match.c); the
 * driver (core/plan_build.c) calls it. */
#include <stdlib.h>
#include <string.h>

#include "core/fuse_device.h"
#include "core/fuse_match.h"
#include "core/plan.h"
#include "core/plan_prepare.h"

/* Whether plan value v is a constant on `device` of y's type with one value per column of y
 * ([N] or [1, ..., 1, N], N y's last dim): a product's bias. */
static bool column_bias(const plan *p, int v, const type_info *y, device_kind device) {
    const plan_value *b = &p->vals[v];
    if (b->where != ST_CONST || b->device != device || !b->constant || y->rank < 1) return false;
    const type_info *t = &b->type;
    if (t->kind != ONYX_VALUE_TENSOR || t->dtype != y->dtype || t->rank < 1 || t->rank > y->rank ||
        !type_is_static(t) || t->dims[t->rank - 1] != y->dims[y->rank - 1])
        return false;
    for (int d = 0; d < t->rank - 1; d++)
        if (t->dims[d] != 1) return false;
    return true;
}

/* The chain of step s: the steps it absorbs (taken, in order) and the fused node's extra inputs
 * (extra[0]: a product's bias, its input 2; extra[1]: the addend, input 3; -1 where none).
 * Returns the number of steps taken. */
static int find_chain(const graph *g, const plan *p, const int *uses, const int *consumer,
                      const bool *gone, int s, fuse_chain *chain, int *taken, int *extra) {
    const plan_step *ps = &p->steps[s];
    const graph_node *node = step_node(g, ps);
    bool conv = fuse_is_op(node, "Conv");
    bool product = fuse_is_op(node, "MatMul") ||
                   (fuse_is_op(node, "Gemm") && (node->n_inputs < 3 || node->inputs[2] < 0));
    int cur = node->outputs[0], n = 0;
    const type_info *y = &p->vals[cur].type;
    memset(chain, 0, sizeof *chain);
    extra[0] = extra[1] = -1;
    while (chain->n < 3) {
        if (uses[cur] != 1 || plan_value_is_output(g, cur)) break;
        int t = consumer[cur];
        if (t <= s || gone[t] || p->steps[t].k->device != ps->k->device) break;
        const graph_node *nn = step_node(g, &p->steps[t]);
        if (!fuse_only_output0(nn) || !fuse_same_type(&p->vals[nn->outputs[0]].type, y)) break;
        fuse_op op = {0};
        /* a product's bias, then a residual; a conv's residual (its bias is its own input) */
        bool first = chain->n == 0, after_bias = chain->n == 1 && extra[0] >= 0;
        if (fuse_is_op(nn, "Add") && nn->version >= 7 && nn->n_inputs == 2 &&
            (first || (product && after_bias))) {
            int other = nn->inputs[0] == cur ? nn->inputs[1] : nn->inputs[0];
            if (other < 0 || other == cur) break;
            if (product && first && column_bias(p, other, y, ps->k->device)) {
                op.kind = FUSE_SHIFT;
                op.input = 2;
                extra[0] = other;
            } else if ((conv || product) && fuse_same_type(&p->vals[other].type, y)) {
                op.kind = FUSE_SUM;
                op.input = 3;
                extra[1] = other;
            } else {
                break;
            }
        } else if (fuse_is_op(nn, "Relu") && nn->n_inputs == 1) {
            op.kind = FUSE_RELU;
        } else {
            break;
        }
        chain->ops[chain->n++] = op;
        taken[n++] = t;
        cur = nn->outputs[0];
        if (op.kind == FUSE_RELU) break; /* the activation is the libraries' last step */
    }
    return n;
}

/* The fused node of step s: its node's inputs (the conv's X, W, B; the product's A and B), the
 * bias (extra[0]) in slot 2 and the addend (extra[1]) in slot 3; its output is the last absorbed
 * step's. NULL when out of memory. */
static graph_node *fused_node(const graph_node *node, const int *extra, int out) {
    int slots = node->n_inputs > 4 ? node->n_inputs : 4;
    graph_node *fn = calloc(1, sizeof *fn + ((size_t)slots + 1) * sizeof(int));
    if (!fn) return NULL;
    *fn = *node;
    fn->inputs = (int *)(fn + 1);
    fn->outputs = fn->inputs + slots;
    for (int i = 0; i < slots; i++) fn->inputs[i] = i < node->n_inputs ? node->inputs[i] : -1;
    fn->n_inputs = node->n_inputs;
    for (int e = 0; e < 2; e++)
        if (extra[e] >= 0) {
            fn->inputs[2 + e] = extra[e];
            if (fn->n_inputs < 3 + e) fn->n_inputs = 3 + e;
        }
    fn->n_outputs = 1;
    fn->outputs[0] = out;
    return fn;
}

onyx_status fuse_device_plan(subgraph *sg, plan *p) {
    const graph *g = sg->g;
    int n = p->n_steps;
    bool any = false;
    for (int s = 0; s < n && !any; s++) any = (p->steps[s].k->flags & KF_DEVICE_EPILOGUE) != 0;
    if (!any) return ONYX_OK;

    onyx_status st = ONYX_OK;
    int *uses = calloc((size_t)p->n_vals + 1, sizeof *uses);
    int *consumer = malloc(((size_t)p->n_vals + 1) * sizeof *consumer);
    int *emit = malloc(((size_t)n + 1) * sizeof *emit); /* step placed at this position */
    bool *gone = calloc((size_t)n + 1, sizeof *gone);
    plan_step *steps = calloc((size_t)n + 1, sizeof *steps);
    if (!uses || !consumer || !emit || !gone || !steps) {
        st = onyx_oom("device epilogue pass");
        goto done;
    }
    plan_readers(g, p, uses, consumer);
    for (int s = 0; s < n; s++) emit[s] = s;

    for (int s = 0; s < n; s++) {
        plan_step *ps = &p->steps[s];
        const graph_node *node = step_node(g, ps);
        if (gone[s] || ps->fused || !(ps->k->flags & KF_DEVICE_EPILOGUE) ||
            !fuse_only_output0(node) || node->n_inputs < 2 || node->inputs[0] < 0 ||
            node->inputs[1] < 0)
            continue;
        fuse_chain chain;
        int taken[FUSE_MAX_OPS], extra[2];
        int n_taken = find_chain(g, p, uses, consumer, gone, s, &chain, taken, extra);
        if (n_taken == 0) continue;
        int last = taken[n_taken - 1];
        graph_node *fn = fused_node(node, extra, step_node(g, &p->steps[last])->outputs[0]);
        if (!fn) {
            st = onyx_oom("fused node");
            goto done;
        }
        /* the kernel answers (one without the query takes no chain); a prepare failing after a
         * yes is an error */
        if (!ps->k->takes_chain || !plan_kernel_takes_chain(sg, p, ps->k, fn, ps->params, &chain)) {
            free(fn);
            continue;
        }
        void *state = NULL;
        st = plan_prepare_kernel(sg, p, ps->k, fn, ps->params, &chain, &state);
        if (st != ONYX_OK) {
            free(fn);
            goto done;
        }
        if (ps->state && ps->k->release) ps->k->release(ps->state);
        ps->state = state;
        plan_set_fused(ps, fn);
        plan_absorb_steps(p, gone, taken, n_taken);
        gone[s] = true;
        emit[last] = s; /* runs where its chain's last node ran: every addend is ready there */
    }

    /* compact: absorbed steps leave, a fused step takes its chain's last position */
    int k = 0;
    for (int pos = 0; pos < n; pos++) {
        int src = emit[pos];
        if (src == pos && gone[pos]) continue;
        steps[k++] = p->steps[src];
    }
    memcpy(p->steps, steps, (size_t)k * sizeof *steps);
    p->n_steps = k;
    plan_set_producers(g, p);
done:
    free(uses);
    free(consumer);
    free(emit);
    free(gone);
    free(steps);
    return st;
}

/* The CPU's fusion pass over a plan (fuse_plan, core/fuse.h): the driver that runs its ideas in
 * order, one file each:
 *   core/fuse_attention.c  attention spelled out, into one step of its device's Attention kernel
 *   core/fuse_postops.c    what only a conv or product feeds, into its step (with a product's
 *                          strided views, core/fuse_views.c, and a conv's Y channels last)
 *   core/fuse_preops.c     what only feeds a conv's X (per-channel steps, a Relu; else a
 *                          squeeze-and-excitation scale or a channels-last X, core/fuse_conv_io.c)
 *   core/fuse_shuffle.c    a channel shuffle (Reshape, Transpose, Reshape) as one step
 *   core/fuse_blocked.c    the tensors passed only between convs, channel Concats and poolings,
 *                          kept in the convs' opaque (channels-last) layout
 * then drops the absorbed steps, places each fused step where its chain's last node ran and
 * prepares the fused kernels. Each idea asks the step's kernel (kernel.takes_chain) before it
 * fuses or marks a tensor opaque, so the one prepare of each fused step is the last word. A plan
 * layer: it edits steps through core/plan.h and prepares kernels through core/plan_prepare.h;
 * the driver (core/plan_build.c) calls it, it never calls the driver. */
#include "core/fuse.h"
#include "core/fuse_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/plan_prepare.h"

static bool chain_used(const fuse_chain *c) {
    return c->n > 0 || c->n_pre > 0 || c->opaque_in0 || c->opaque_out0 || c->opaque_addend ||
           c->view_rank[0] || c->view_rank[1] || c->view_rank[2] || c->view_rank[3] ||
           c->has_in_scale || c->attention || c->x_scale || c->x_channels_last ||
           c->y_channels_last;
}

/* Prepares every step whose chain says something, all or nothing: on failure the new states
 * are released and the old ones stay. */
static onyx_status prepare_all(subgraph *sg, plan *p, const fuse_chain *chains) {
    const graph *g = sg->g;
    onyx_status st = ONYX_OK;
    void **states = calloc((size_t)p->n_steps + 1, sizeof *states);
    if (!states) return onyx_oom("fusion pass");
    for (int s = 0; s < p->n_steps && st == ONYX_OK; s++)
        if (chain_used(&chains[s]))
            st = plan_prepare_kernel(sg, p, p->steps[s].k, step_node(g, &p->steps[s]),
                                     p->steps[s].params, &chains[s],
                                     &states[s]);
    for (int s = 0; s < p->n_steps; s++) {
        plan_step *ps = &p->steps[s];
        if (!chain_used(&chains[s])) continue;
        void *drop = st == ONYX_OK ? ps->state : states[s];
        if (drop && ps->k->release) ps->k->release(drop);
        if (st == ONYX_OK) ps->state = states[s];
    }
    free(states);
    return st;
}

onyx_status fuse_plan(subgraph *sg, plan *p) {
    const graph *g = sg->g;
    int n = p->n_steps;
    onyx_status st = ONYX_OK;
    int *uses = calloc((size_t)p->n_vals + 1, sizeof *uses);
    int *consumer = malloc(((size_t)p->n_vals + 1) * sizeof *consumer);
    int *emit = malloc(((size_t)n + 1) * sizeof *emit);   /* step placed at this position */
    bool *gone = calloc((size_t)n + 1, sizeof *gone);       /* absorbed or moved */
    plan_step *steps = calloc((size_t)n + 1, sizeof *steps);
    fuse_chain *chains = calloc((size_t)n + 1, sizeof *chains), *placed = NULL;
    placed = calloc((size_t)n + 1, sizeof *placed);
    if (!uses || !consumer || !emit || !gone || !steps || !chains || !placed) {
        st = onyx_oom("fusion pass");
        goto done;
    }
    /* readers among the plan's steps: nodes folded away at prepare (a Shape of a static value)
     * read nothing at run */
    plan_readers(g, p, uses, consumer);
    for (int s = 0; s < n; s++) emit[s] = s;
    fuse_pass f = {sg, p, g, uses, consumer, emit, gone, chains};

    /* chains: each conv or MatMul absorbs what only it feeds, an attention first */
    for (int s = 0; s < n; s++) {
        plan_step *ps = &p->steps[s];
        const graph_node *conv = step_node(g, ps);
        bool matmul = fuse_matmul_step(g, ps);
        /* a device's MatMul: an attention chain only (its other epilogues: core/fuse_device.c) */
        bool device_mm = ps->k->device != DEVICE_CPU && fuse_is_op(conv, "MatMul");
        if (gone[s] || !(fuse_conv_step(g, ps) || matmul || device_mm) || ps->fused ||
            !fuse_only_output0(conv) || conv->n_inputs < 2 || conv->inputs[0] < 0 ||
            conv->inputs[1] < 0)
            continue;
        bool fused = false;
        if (matmul || device_mm) CHECK(fuse_attention(&f, s, &fused));
        if (fused || device_mm) continue;
        CHECK(fuse_post_ops(&f, s));
    }

    /* pre-ops: a conv absorbs the per-channel steps (and one activation) that only feed its X */
    for (int s = 0; s < n; s++) CHECK(fuse_pre_ops(&f, s));

    /* channel shuffles: one step each, which the opaque layout passes through */
    for (int s = 0; s < n; s++) CHECK(fuse_channel_shuffle(&f, s));

    /* compact: absorbed steps leave, a fused conv takes its chain's last position */
    int k = 0;
    for (int pos = 0; pos < n; pos++) {
        int src = emit[pos];
        if (src == pos && gone[pos]) continue;
        placed[k] = chains[src];
        steps[k++] = p->steps[src];
    }
    memcpy(p->steps, steps, (size_t)k * sizeof *steps);
    p->n_steps = k;
    plan_set_producers(g, p);

    /* the opaque layout where the session allows it and the kernels take it */
    if (sg->env.blocked_layouts) CHECK(fuse_keep_opaque(sg, p, uses, placed));
    CHECK(prepare_all(sg, p, placed));
    /* opaque tensors are stored channels last: the memory plan keeps them apart from plain ones
     * (no view into them, in place only over one of the same layout) */
    int opaque_values = 0;
    for (int s = 0; s < k; s++)
        if (placed[s].opaque_out0) {
            p->vals[step_node(g, &p->steps[s])->outputs[0]].channels_last = true;
            opaque_values++;
        }
    if (opaque_values)
        log_write(&sg->env.log, ONYX_LOG_VERBOSE, "fusion: %d tensors kept opaque (channels last)",
                  opaque_values);
done:
    free(uses);
    free(consumer);
    free(emit);
    free(gone);
    free(steps);
    free(chains);
    free(placed);
    return st;
}

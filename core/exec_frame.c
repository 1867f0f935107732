/* What a kernel may use of the frame it runs in, so that no kernel needs the executor's internal
 * structures: read-only views of the frame (Gradient re-evaluates the graph it sits in), the
 * run context's scratch and device queues. Below the plan layers: the copy steps' kernel
 * (core/exec_place.c) uses it too. */
#include "core/exec_frame.h"
#include "core/exec_internal.h"

#include <stdlib.h>

/* Scratch grows to the next multiple of this, so that slowly growing requests do not reallocate
 * on every run. */
#define SCRATCH_GRANULE ((size_t)64 << 10)

const graph *exec_frame_graph(const struct exec_frame *f) { return f ? f->g : NULL; }

const onyx_value *exec_frame_value(const struct exec_frame *f, int v) {
    if (!f || v < 0 || v >= f->g->n_values) return NULL;
    return f->vals[v];
}

onyx_status kernel_scratch(const kernel_call *c, size_t bytes, void **out) {
    run_ctx *ctx = c->frame ? c->frame->ctx : NULL;
    if (!ctx) return onyx_error(ONYX_ERR_RUNTIME, "scratch requested outside a run");
    if (bytes > ctx->scratch_size) {
        if (bytes > SIZE_MAX - SCRATCH_GRANULE) return onyx_oom("scratch");
        size_t size = (bytes + SCRATCH_GRANULE - 1) / SCRATCH_GRANULE * SCRATCH_GRANULE;
        void *grown = aligned_alloc(64, size);
        if (!grown) return onyx_oom("scratch");
        free(ctx->scratch);
        ctx->scratch = grown;
        ctx->scratch_size = size;
    }
    *out = ctx->scratch;
    return ONYX_OK;
}

void *plan_step_queue(const kernel_call *c, device_kind device) {
    return c->frame && c->frame->ctx ? c->frame->ctx->queue[device] : NULL;
}

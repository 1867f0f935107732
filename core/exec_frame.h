/* What a kernel may use of the frame it runs in (core/exec_frame.c), so that no kernel needs the
 * executor's internal structures: read-only views of the frame (Gradient re-evaluates the graph
 * it sits in), the run context's scratch, and its device queues (the copy steps' kernel). */
#ifndef ONYX_CORE_EXEC_FRAME_H
#define ONYX_CORE_EXEC_FRAME_H

#include "core/kernel.h"

/* What a kernel may read of the frame it runs in (kernel_call.frame): the running graph, and the
 * value bound to graph value `v` right now (NULL when none is). */
const graph *exec_frame_graph(const struct exec_frame *f);
const onyx_value *exec_frame_value(const struct exec_frame *f, int v);

/* Working memory for this call: at least `bytes`, 64-byte aligned, valid until the kernel's run
 * returns, not zeroed. It comes from the run context and is kept for its next runs, so a run in
 * steady state allocates nothing. One region per call: a kernel that needs several carves them
 * out of one request. */
onyx_status kernel_scratch(const kernel_call *c, size_t bytes, void **out);

/* The queue of `device` in the run context of call c, or NULL (no run, or no queues there): the
 * copy steps' kernel (core/exec_place.c) reads it. */
void *plan_step_queue(const kernel_call *c, device_kind device);

#endif

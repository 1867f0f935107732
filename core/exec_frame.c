/* Read-only views of a running frame for kernels (Gradient re-evaluates the graph it sits in),
 * so that no kernel needs the executor's internal structures. */
#include "core/exec.h"
#include "core/exec_internal.h"

const graph *exec_frame_graph(const struct exec_frame *f) { return f ? f->g : NULL; }

const onyx_value *exec_frame_value(const struct exec_frame *f, int v) {
    if (!f || v < 0 || v >= f->g->n_values) return NULL;
    return f->vals[v];
}

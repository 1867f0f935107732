/* The CPU kernel table, generated from the kernels_cpu/<family>/list.h files. */
#ifndef ONYX_KERNELS_CPU_H
#define ONYX_KERNELS_CPU_H

#include "core/exec_frame.h"
#include "core/exec_run.h"
#include "core/kernel.h"

/* List entries (in kernels_cpu/<family>/list.h):
 *   KERNEL(domain, op, since_min, since_max, dtypes, flags, run)
 *   KERNEL_STATEFUL(domain, op, since_min, since_max, dtypes, flags, prepare, run, release)
 *   KERNEL_FORKED(domain, op, since_min, since_max, dtypes, flags, prepare, run, release, fork,
 *                 unfork)   (a run writes working state: each run context forks its own)
 *   KERNEL_CHAIN(domain, op, since_min, since_max, dtypes, flags, prepare, run, release,
 *                takes_chain)   (a KERNEL_STATEFUL that answers the fusion passes' query:
 *                kernel.takes_chain)
 *   KERNEL_FORKED_CHAIN(domain, op, since_min, since_max, dtypes, flags, prepare, run, release,
 *                       fork, unfork, takes_chain)   (a KERNEL_FORKED that answers it too)
 * dtypes: dtype_mask of input 0 (output 0 for ops without inputs), 0 = any. */

#define KERNEL(domain, op, vmin, vmax, dtypes, flags, run) onyx_status run(const kernel_call *c);
#define KERNEL_STATEFUL(domain, op, vmin, vmax, dtypes, flags, prepare, run, release)              \
    onyx_status prepare(const kernel_prep *p, void **state);                                       \
    onyx_status run(const kernel_call *c);                                                         \
    void release(void *state);
#define KERNEL_FORKED(domain, op, vmin, vmax, dtypes, flags, prepare, run, release, fork, unfork) \
    KERNEL_STATEFUL(domain, op, vmin, vmax, dtypes, flags, prepare, run, release)                  \
    onyx_status fork(const void *state, void **out);                                               \
    void unfork(void *fork);
#define KERNEL_CHAIN(domain, op, vmin, vmax, dtypes, flags, prepare, run, release, takes_chain)    \
    KERNEL_STATEFUL(domain, op, vmin, vmax, dtypes, flags, prepare, run, release)                  \
    bool takes_chain(const kernel_prep *p);
#define KERNEL_FORKED_CHAIN(domain, op, vmin, vmax, dtypes, flags, prepare, run, release, fork,     \
                            unfork, takes_chain)                                                   \
    KERNEL_FORKED(domain, op, vmin, vmax, dtypes, flags, prepare, run, release, fork, unfork)     \
    bool takes_chain(const kernel_prep *p);
#include "kernels_cpu/list_all.h"
#undef KERNEL
#undef KERNEL_STATEFUL
#undef KERNEL_FORKED
#undef KERNEL_CHAIN
#undef KERNEL_FORKED_CHAIN

const kernel *cpu_kernel_table(size_t *count);

#endif

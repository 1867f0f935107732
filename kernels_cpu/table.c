/* The CPU kernel table, built from the family lists. */
#include "kernels_cpu/cpu_kernels.h"

static const kernel table[] = {
#define KERNEL(domain, op, vmin, vmax, dtypes, flags, run)                                         \
    {domain, op, vmin, vmax, DEVICE_CPU, dtypes, flags, NULL, run, NULL, NULL, NULL, NULL, 0, NULL},
#define KERNEL_STATEFUL(domain, op, vmin, vmax, dtypes, flags, prepare, run, release)              \
    {domain, op, vmin, vmax, DEVICE_CPU, dtypes, flags, prepare, run, release, NULL, NULL, NULL, 0, NULL},
#define KERNEL_FORKED(domain, op, vmin, vmax, dtypes, flags, prepare, run, release, fork, unfork) \
    {domain, op, vmin, vmax, DEVICE_CPU, dtypes, flags, prepare, run, release, fork, unfork, NULL, 0, NULL},
#define KERNEL_CHAIN(domain, op, vmin, vmax, dtypes, flags, prepare, run, release, takes_chain)    \
    {domain, op, vmin, vmax, DEVICE_CPU, dtypes, flags, prepare, run, release, NULL, NULL, NULL, 0, takes_chain},
#define KERNEL_FORKED_CHAIN(domain, op, vmin, vmax, dtypes, flags, prepare, run, release, fork,     \
                            unfork, takes_chain)                                                   \
    {domain, op, vmin, vmax, DEVICE_CPU, dtypes, flags, prepare, run, release, fork, unfork, NULL, 0, takes_chain},
#include "kernels_cpu/list_all.h"
#undef KERNEL
#undef KERNEL_STATEFUL
#undef KERNEL_FORKED
#undef KERNEL_CHAIN
#undef KERNEL_FORKED_CHAIN
    {0},
};

const kernel *cpu_kernel_table(size_t *count) {
    *count = sizeof table / sizeof table[0] - 1;
    return table;
}

/* The CPU kernel table, built from the family lists. */
#include "kernels_cpu/cpu_kernels.h"

static const kernel table[] = {
#define KERNEL(domain, op, vmin, vmax, dtypes, flags, run)                                         \
    {domain, op, vmin, vmax, DEVICE_CPU, dtypes, flags, NULL, run, NULL},
#define KERNEL_STATEFUL(domain, op, vmin, vmax, dtypes, flags, prepare, run, release)              \
    {domain, op, vmin, vmax, DEVICE_CPU, dtypes, flags, prepare, run, release},
#include "kernels_cpu/list_all.h"
#undef KERNEL
#undef KERNEL_STATEFUL
    {0},
};

const kernel *cpu_kernel_table(size_t *count) {
    *count = sizeof table / sizeof table[0] - 1;
    return table;
}

/* The CUDA kernel table: every family's entries, gathered once when the plugin is loaded. */
#include <stdlib.h>
#include <string.h>

#include "kernels_cuda/cuda_kernels.h"

const kernel *cuda_kernel_table(size_t *count);
void cuda_table_build(void);

/* A family whose sources are not in the build is simply absent. */
#define CUDA_FAMILY(name) __attribute__((weak)) const kernel *cuda_family_##name(size_t *count);
#include "kernels_cuda/families.h"
#undef CUDA_FAMILY

static kernel *table;
static size_t table_count;

/* Called once, from the plugin's entry (under the host's once-guard). */
void cuda_table_build(void) {
    const kernel *parts[64];
    size_t counts[64], n = 0, total = 0;
#define CUDA_FAMILY(name)                                                                          \
    if (cuda_family_##name) {                                                                      \
        parts[n] = cuda_family_##name(&counts[n]);                                                 \
        total += counts[n++];                                                                      \
    }
#include "kernels_cuda/families.h"
#undef CUDA_FAMILY
    kernel *t = calloc(total + 1, sizeof *t);
    if (!t) return; /* no CUDA kernels: every node falls back to the CPU */
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(t + at, parts[i], counts[i] * sizeof *t);
        at += counts[i];
    }
    table = t;
    table_count = total;
}

const kernel *cuda_kernel_table(size_t *count) {
    *count = table_count;
    return table;
}

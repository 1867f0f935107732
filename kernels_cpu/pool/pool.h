/* Shared pieces of the CPU pooling kernels: the oneDNN pooling door used for float32 max/average
 * and int8/uint8 max pooling (pool_dnnl.c), kept apart so that pool.c knows nothing of oneDNN. */
#ifndef ONYX_KERNELS_CPU_POOL_H
#define ONYX_KERNELS_CPU_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "geometry/window.h"

typedef struct cpu_pool_dnnl cpu_pool_dnnl;

/* A oneDNN forward-inference pooling of element type dt (float32; int8/uint8 for max) over
 * plain N,C,spatial memory of rank 2 + p->nsp (8-bit ones pooled channels last between two
 * reorders, where oneDNN has no other kernel; channels_last: N,spatial,C as
 * cpu_dnnl_md_channels_last describes it) by the window p (known dims: the plan's, resolved by
 * the pool's schema). max: max pooling, else average including (include_pad) or excluding
 * padding. Sets *out NULL without an error when oneDNN cannot do this case the ONNX way (the
 * caller then runs its own loops); fails only on allocation failure. */
onyx_status cpu_pool_dnnl_create(onyx_dtype dt, const geom_window *p, bool max,
                                 bool include_pad, bool channels_last, cpu_pool_dnnl **res);
/* The memory objects one run context binds to its buffers (concurrent runs each have their own;
 * the primitive itself is shared). */
typedef struct cpu_pool_dnnl_mem cpu_pool_dnnl_mem;
onyx_status cpu_pool_dnnl_mem_create(const cpu_pool_dnnl *d, cpu_pool_dnnl_mem **out);
void cpu_pool_dnnl_mem_free(cpu_pool_dnnl_mem *m);
/* Bytes of scratch a run passes to cpu_pool_dnnl_run (0: none). */
size_t cpu_pool_dnnl_scratch(const cpu_pool_dnnl *d);
/* Runs it on x into y (on the caller's threads: the rep's), through the run context's memories
 * m and `scratch` (cpu_pool_dnnl_scratch bytes, from kernel_scratch). */
onyx_status cpu_pool_dnnl_run(const cpu_pool_dnnl *d, cpu_pool_dnnl_mem *m, const void *x,
                              void *y, void *scratch);
void cpu_pool_dnnl_free(cpu_pool_dnnl *d);
/* Whether cpu_pool_dnnl_create would make the channels-last pooling (its *res not NULL), from
 * oneDNN's primitive descriptor alone: nothing is built. */
bool cpu_pool_dnnl_takes_channels_last(onyx_dtype dt, const geom_window *p, bool max,
                                       bool include_pad);

#endif

/* Kernels over float tensors in the opaque layout the fusion pass keeps between convolutions
 * (core/fuse.h): channels last, [N, spatial..., C] in memory for the logical [N, C, spatial...],
 * no padding. */
#ifndef ONYX_KERNELS_CPU_OPAQUE_H
#define ONYX_KERNELS_CPU_OPAQUE_H

#include <stdbool.h>

#include "core/kernel.h"
#include "core/status.h"
#include "core/value.h"

/* The prepare of kernels that also run on opaque tensors (KF_OPAQUE_LAYOUT, the state NULL
 * otherwise): a non-NULL state, owning nothing, when the fusion pass keeps the step's tensors
 * opaque; their run then takes the channels-last path. */
onyx_status cpu_opaque_prepare(const kernel_prep *p, void **state);
void cpu_opaque_release(void *state);

/* GlobalAveragePool (max: GlobalMaxPool) of the call's channels-last input 0 into its output 0
 * ([N, C, 1, ...], whose two layouts are one). */
onyx_status cpu_opaque_global_pool(const kernel_call *call, bool max);

/* y = a * b, channels last, where one of a and b has y's shape and the other too or is
 * per-channel factors of the same rank ([N or 1, C, 1, ...], whose two layouts are one). */
onyx_status cpu_opaque_mul(const tensor *a, const tensor *b, tensor *y);

#endif

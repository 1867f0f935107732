/* Kernels over float tensors in the convolutions' channel-blocked layout (core/fuse.h), for the
 * steps the fusion pass keeps in that layout between convolutions. */
#ifndef ONYX_KERNELS_CPU_BLOCKED_H
#define ONYX_KERNELS_CPU_BLOCKED_H

#include <stdbool.h>

#include "core/kernel.h"
#include "core/status.h"
#include "core/value.h"

/* The prepare of kernels that also run on blocked tensors (KF_BLOCKED_LAYOUT, the state NULL
 * otherwise): a non-NULL state, owning nothing, when the fusion pass keeps the step's tensors
 * blocked; their run then takes the blocked path. */
onyx_status cpu_blocked_prepare(const kernel_prep *p, void **state);
void cpu_blocked_release(void *state);

/* GlobalAveragePool (max: GlobalMaxPool) of blocked x into blocked y ([N, C, 1, ...]). */
onyx_status cpu_blocked_global_pool(const tensor *x, tensor *y, bool max);

/* y = a * b, blocked, where one of a and b has y's shape and the other too or is per-channel
 * factors of the same rank ([N or 1, C, 1, ...]). */
onyx_status cpu_blocked_mul(const tensor *a, const tensor *b, tensor *y);

#endif

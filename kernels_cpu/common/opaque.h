/* Kernels over float tensors in the opaque layout the fusion pass keeps between convolutions
 * (core/fuse.h): channels last, [N, spatial..., C] in memory for the logical [N, C, spatial...],
 * no padding. */
#ifndef ONYX_KERNELS_CPU_OPAQUE_H
#define ONYX_KERNELS_CPU_OPAQUE_H

#include <stdbool.h>

#include "core/fuse_chain.h"
#include "core/kernel.h"
#include "core/status.h"
#include "core/value.h"

/* Whether chain f asks nothing of a kernel but that its X or Y be opaque (opaque_in0,
 * opaque_out0): no post-ops, pre-ops, views, scales, channels-last reads or an opaque addend,
 * which the KF_OPAQUE_LAYOUT kernels but the conv do not apply. */
bool cpu_chain_layout_only(const fuse_chain *f);

/* The prepare of kernels that also run on opaque tensors (KF_OPAQUE_LAYOUT, the state NULL
 * otherwise): a non-NULL state, owning nothing, when the fusion pass keeps the step's tensors
 * opaque; their run then takes the channels-last path. Their query (kernel.takes_chain),
 * cpu_opaque_takes_chain, is the rule this prepare follows: a chain of layouts alone, X and Y
 * opaque together, or an opaque X and a Y whose two layouts are one (fuse_opaque_is_plain). */
onyx_status cpu_opaque_prepare(const kernel_prep *p, void **state);
bool cpu_opaque_takes_chain(const kernel_prep *p);
void cpu_opaque_release(void *state);

/* GlobalAveragePool (max: GlobalMaxPool) of the call's channels-last input 0 into its output 0
 * ([N, C, 1, ...], whose two layouts are one). */
onyx_status cpu_opaque_global_pool(const kernel_call *call, bool max);

/* y = a * b, channels last, where one of a and b has y's shape and the other too or is
 * per-channel factors of the same rank ([N or 1, C, 1, ...], whose two layouts are one). */
onyx_status cpu_opaque_mul(const tensor *a, const tensor *b, tensor *y);

#endif

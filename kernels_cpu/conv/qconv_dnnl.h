/* QLinearConv (ai.onnx) on oneDNN's int8 convolution: the fast path of kernels_cpu/conv/conv_int.c
 * wherever it applies, the exact reference loops elsewhere. */
#ifndef ONYX_KERNELS_CPU_QCONV_DNNL_H
#define ONYX_KERNELS_CPU_QCONV_DNNL_H

#include <stdbool.h>

#include "core/kernel.h"
#include "core/status.h"

/* The prepared fast path of a QLinearConv node in *state, or NULL where it does not apply (shapes
 * not static, weights not a constant, a weight zero point that is not 0 for int8 or 128 for
 * uint8, no VNNI, a geometry oneDNN has no int8 kernel for): the caller then runs the
 * reference. Fails only on an error that would fail the reference too (no memory). */
onyx_status qconv_fast_prepare(const kernel_prep *p, void **state);
/* Whether qconv_fast_prepare would prepare the path for p, from the checks it makes before
 * building (oneDNN asked for the primitive descriptor alone): nothing is packed or built. */
bool qconv_fast_takes(const kernel_prep *p);
void qconv_fast_release(void *state);

/* A run context's working state (KERNEL_FORKED): the oneDNN memory objects of the prepared
 * path (state may be NULL: then there is none, qconv_fast_prepared is false). */
onyx_status qconv_fast_fork(const void *state, void **out);
void qconv_fast_unfork(void *fork);
bool qconv_fast_prepared(const void *fork);

/* Runs the call through the prepared fast path (qconv_fast_prepared(fork)); *done false (nothing
 * written) where this call's scales do not allow it (a requantization multiplier that is not
 * finite, a bias float cannot hold), for the reference to take. */
onyx_status qconv_fast_run(const kernel_call *c, void *fork, bool *done);

/* Whether the prepared path reads or writes an opaque tensor (then no reference can stand in). */
bool qconv_fast_opaque(const void *fork);

#endif

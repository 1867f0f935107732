/* The device epilogue pass (core/fuse_device.c), run after the CPU's (core/fuse.h). */
#ifndef ONYX_CORE_FUSE_DEVICE_H
#define ONYX_CORE_FUSE_DEVICE_H

#include "core/fuse_chain.h"

struct subgraph;
struct plan;

/* A step whose kernel is flagged KF_DEVICE_EPILOGUE (a device's Conv, MatMul, Gemm or
 * BatchNormalization) absorbs the nodes that only it feeds, on its device: a product without a
 * bias of its own the Add of a constant per column (FUSE_SHIFT, the bias read from the fused
 * node's input 2), a Conv the Add of a tensor of its output's shape (FUSE_SUM, input 3), then a
 * Relu (FUSE_RELU, alpha 0), the chain's last step. The kernel is asked first through its
 * takes_chain query (core/kernel.h; one without it takes no chain), and its prepare must then
 * take the chain. */
onyx_status fuse_device_plan(struct subgraph *sg, struct plan *p);

#endif

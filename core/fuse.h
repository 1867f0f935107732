/* The CPU's fusion pass (fuse_plan: core/fuse.c, the driver over one file per idea,
 * core/fuse_*.c), which builds the chains of core/fuse_chain.h into the plan's steps. Before it
 * fuses a chain it asks the step's kernel through kernel.takes_chain (core/kernel.h). */
#ifndef ONYX_CORE_FUSE_H
#define ONYX_CORE_FUSE_H

#include "core/fuse_chain.h"

struct subgraph;
struct plan;

/* The pass: runs on a plan whose steps are specialized and folded, before its memory plan. It
 * merges each eligible chain into its convolution's step (a plan-owned node with the chain's
 * final output and any addend as an extra input), drops the absorbed steps, marks the tensors
 * passed only between such steps opaque, and prepares those kernels again with what applies.
 * Runs at optimization level ALL; the session config entry optimization.blocked_layouts=0 (a
 * name from when the opaque layout was oneDNN's channel-blocked one) keeps the fusion and leaves
 * the layouts plain (for comparing). */
onyx_status fuse_plan(struct subgraph *sg, struct plan *p);

#endif

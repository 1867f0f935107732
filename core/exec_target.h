/* Graph outputs written into memory the caller gives (onyx_rep_run_into): which ones a run
 * computes straight into their target, which it copies there after the run, and the checks that
 * keep an input the caller also passed as a target right (core/exec_target.c). */
#ifndef ONYX_CORE_EXEC_TARGET_H
#define ONYX_CORE_EXEC_TARGET_H

#include "core/exec_internal.h"

/* Before a run of plan p in ctx: `targets` has one entry per graph output (NULL: none). Marks in
 * ctx->targeted the outputs computed straight into their targets: tensors a CPU step makes whose
 * target overlaps no input, or overlaps only the input the step's kernel declares that output may
 * be (KF_CACHE_IN_PLACE), exactly, where no later step reads that input. The others are copied
 * after the run (target_take). Targets that overlap each other are refused. */
onyx_status target_mark(const subgraph *sg, const plan *p, run_ctx *ctx,
                        const onyx_value *const *inputs, onyx_value *const *targets);

/* After the run: graph value vi, made as `made`, into its target `t`: nothing to do where it was
 * computed there; else copied, its type and shape checked against the target's. */
onyx_status target_take(const graph *g, const run_ctx *ctx, int vi, const onyx_value *made,
                        onyx_value *t);

/* The type an output computed into target t gets must be the target's: ONYX_ERR_SHAPE naming
 * output `name` otherwise (core/plan_step.c checks it before the step runs). */
onyx_status target_check(const char *name, const type_info *want, const tensor *t);

#endif

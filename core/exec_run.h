/* The executor's entry points (core/exec_run.c): subgraphs, created once per graph (rewritten at
 * level ALL), plans specialized per input-shape signature (built by core/plan_build.c) and runs,
 * for the main graph and for control-flow bodies alike; and what a kernel asks of the run layer:
 * data shared by a rep's plans (kernel_shared, kernel_shared_weight, kernel_weight_bytes) and the
 * run's limits (kernel_check_run). */
#ifndef ONYX_CORE_EXEC_RUN_H
#define ONYX_CORE_EXEC_RUN_H

#include "core/exec_env.h"

/* A graph prepared for execution: a cache of plans, one per signature of input shapes. Safe to
 * run from several threads at once: plans are built concurrently and, once built, read-only;
 * each run borrows a run context (arena, scratch, kernel forks) that no other run touches. */
typedef struct subgraph subgraph;

/* The rewrites a subgraph of this environment gets (core/optimize.h): the session's level, float16
 * as float where the CPU alone runs it, each change logged at verbose level. */
struct optimize_options;
void exec_optimize_options(const exec_env *env, struct optimize_options *out);

/* Prepares `g` for running. Nothing is specialized until subgraph_specialize or the first run. */
onyx_status subgraph_create(const graph *g, const exec_env *env, subgraph **out);
void subgraph_free(subgraph *sg);

/* Builds (and caches) the plan for these input types, checking that every node has a kernel and
 * that shapes fit; input types may be partial. `in_types` has one entry per graph input. */
onyx_status subgraph_specialize(subgraph *sg, const type_info *const *in_types);

/* Runs a subgraph from a kernel: `inputs` (one per graph input, borrowed), the enclosing frame
 * `outer` (for captured values and the run's limits). On success `outputs[i]` (one per graph
 * output, caller-allocated values) receive owned results. */
onyx_status subgraph_run(subgraph *sg, struct exec_frame *outer, const onyx_value *const *inputs,
                         onyx_value *const *outputs);

/* Runs a main graph (no enclosing frame) under `control` (may be NULL). As subgraph_run, and
 * `targets` (NULL, or one per graph output, NULL where none): CPU tensors over the caller's memory
 * that receive those outputs (core/exec_target.h); their `outputs` entries stay empty. */
onyx_status subgraph_run_main(subgraph *sg, const run_control *control,
                              const onyx_value *const *inputs, onyx_value *const *targets,
                              onyx_value *const *outputs);

const graph *subgraph_graph(const subgraph *sg);

/* ---- what a kernel asks of the run layer (its prepare: kernel_prep; its run: kernel_call) */

/* Read-only data made from constants only (reordered or packed weights), shared by every plan of
 * the rep that asks with the same key: the first call makes it with make(ctx, &obj), later calls
 * (other input shapes, other plans) get the same object, so a new shape repacks nothing. The key
 * must name everything the object depends on: the constant's data pointer (stable while the rep
 * lives) and the layout it is packed for, say. The object lives until the rep is freed
 * (`release`); *out is borrowed. Safe from concurrent prepares. */
onyx_status kernel_shared(const kernel_prep *p, const void *key, size_t key_size,
                          onyx_status (*make)(void *ctx, void **obj), void (*release)(void *obj),
                          void *ctx, void **out);

/* kernel_shared for an object made from constant input `input` alone, which the kernel then reads
 * only through that object, at prepare and at run. `unpack(obj, dst)` rebuilds the input's bytes
 * exactly from the object (NULL where it cannot: converted or scaled): the executor may then hand
 * the input's own memory back while the object holds it (core/shared.h), which keeps a model's
 * float weights in memory once, as packed, instead of twice. */
onyx_status kernel_shared_weight(const kernel_prep *p, int input, const void *key, size_t key_size,
                                 onyx_status (*make)(void *ctx, void **obj),
                                 void (*release)(void *obj),
                                 onyx_status (*unpack)(const void *obj, void *dst), void *ctx,
                                 void **out);

/* Makes constant input `input`'s bytes readable (a KF_PACKED_WEIGHTS kernel that reads them, at
 * prepare or per run, outside kernel_shared_weight's object): now, and whenever a plan holding
 * this kernel runs. */
onyx_status kernel_weight_bytes(const kernel_prep *p, int input);

/* ONYX_OK while the run may go on; the status to return (with its message set) once the caller
 * terminated the run, its deadline passed, or `iterations` exceeds the run's cap on Loop
 * iterations and sequence lengths. Kernels that loop for long (Loop, Scan, sequence builders)
 * call it once per iteration with the iteration count (0 when not counting). */
onyx_status kernel_check_run(const kernel_call *c, int64_t iterations);

#endif

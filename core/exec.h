/* The executor's interface to the backend and to kernels: the environment a session prepares
 * under (exec_env), subgraphs (created once, rewritten at level ALL), plans specialized per
 * input-shape signature (core/plan_build.c) and runs (core/exec_run.c). Used for the main graph
 * and for control-flow bodies alike. */
#ifndef ONYX_CORE_EXEC_H
#define ONYX_CORE_EXEC_H

#include <stdatomic.h>

#include "core/clock.h"
#include "core/kernel.h"
#include "core/parallel.h"

/* The kernel of `device`'s table for a node with the given input types, or NULL with a message
 * (no fallback: the executor walks the session's devices itself). */
typedef const kernel *(*kernel_selector)(const graph_node *node, int n_in,
                                         const type_info *const *in_type, device_kind device);

struct profiler;
struct shared_cache;

/* Where log lines go (core/log.h). */
typedef struct exec_log {
    onyx_log_fn fn; /* NULL: off */
    void *user;
    onyx_log_level level;
} exec_log;

/* Settings shared by a rep and all its subgraphs. */
typedef struct exec_env {
    device_kind priority[DEVICE_KINDS]; /* devices to try for each node, in order; the CPU last */
    int n_priority;
    const device_ops *devices[DEVICE_KINDS]; /* memory operations of the devices in priority */
    int device_index;                   /* which GPU, for CUDA */
    int threads;
    parallel_policy threads_policy; /* how the threads wait between runs */
    kernel_selector select;
    onyx_optimization_level optimization;
    bool blocked_layouts;       /* the fusion pass may keep tensors opaque (channels last) */
    bool half_as_float;         /* float16 computes in float where the CPU alone runs it */
    bool bf16;                  /* float Conv / MatMul / Gemm may compute in bfloat16 (opt-in) */
    bool device_graphs;         /* runs replay device graphs of their device steps */
    size_t memory_limit;        /* largest arena a plan may have; 0: none */
    struct profiler *profiler;  /* per-node timings (core/profile.h); NULL: off */
    struct shared_cache *shared; /* the rep's data made from constants (core/shared.h) */
    bool evict_weights;         /* the rep alone holds its model: a weight kept packed by the
                                   kernel that reads it need not stay in memory (core/shared.h) */
    const struct op_registry *ops; /* schemas, for the graph rewrites (core/optimize.h) */
    exec_log log;
} exec_env;

/* Limits of one run, from the caller's run options: checked between steps and by kernels that
 * loop (kernel_check_run). */
typedef struct run_control {
    const atomic_bool *terminate; /* set (from any thread) to stop the run; may be NULL */
    int64_t deadline_ns;          /* CLOCK_MONOTONIC time at which the run stops; 0: none */
    int64_t max_iterations;       /* cap on Loop/Scan iterations and sequence lengths; 0: none */
    const char *tag;              /* the run's name in logs and profiles; may be NULL */
    device_kind output_device;    /* graph outputs made on this device stay there (else: CPU) */
} run_control;

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

/* What a kernel may read of the frame it runs in (kernel_call.frame): the running graph, and the
 * value bound to graph value `v` right now (NULL when none is). */
const graph *exec_frame_graph(const struct exec_frame *f);
const onyx_value *exec_frame_value(const struct exec_frame *f, int v);

#endif

/* The settings a session prepares under (exec_env: devices in priority order, kernel selection,
 * threads, optimization level, switches, memory limit, log, profiler, the rep's shared data) and
 * the limits of one run (run_control): types only, which the backend fills and every executor
 * layer reads. The executor's functions are declared by the headers of their sources:
 * core/exec_run.h (subgraphs and runs), core/exec_frame.h (what a kernel may use of its frame),
 * core/plan_build.h (building a plan). */
#ifndef ONYX_CORE_EXEC_ENV_H
#define ONYX_CORE_EXEC_ENV_H

#include <stdatomic.h>

#include "core/kernel.h"
#include "core/log.h"
#include "core/parallel.h"

/* The kernel of `device`'s table for a node with the given input types, or NULL (no fallback: the
 * executor walks the session's devices itself). exec_env has two: one that answers NULL with a
 * message saying why (device_supports), for a node that must be placed; and a query that sets
 * none (device_find_kernel), for passes that only ask whether a device has one. */
typedef const kernel *(*kernel_selector)(const graph_node *node, int n_in,
                                         const type_info *const *in_type, device_kind device);

struct profiler;
struct shared_cache;

/* Settings shared by a rep and all its subgraphs. */
typedef struct exec_env {
    device_kind priority[DEVICE_KINDS]; /* devices to try for each node, in order; the CPU last */
    int n_priority;
    const device_ops *devices[DEVICE_KINDS]; /* memory operations of the devices in priority */
    int device_index;                   /* which GPU, for CUDA */
    int threads;
    parallel_policy threads_policy; /* how the threads wait between runs */
    kernel_selector select;      /* reports why not */
    kernel_selector find_kernel; /* a query: no message */
    onyx_optimization_level optimization;
    bool blocked_layouts;       /* the fusion pass may keep tensors opaque (channels last) */
    bool half_as_float;         /* float16 computes in float where the CPU alone runs it */
    bool bf16;                  /* float Conv / MatMul / Gemm may compute in bfloat16 (opt-in) */
    bool winograd;              /* float 3x3 Conv may compute by Winograd (kernels_cpu/conv) */
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

#endif

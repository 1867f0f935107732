/* The types the executor's layers share (core/plan*.c, exec*.c, fuse*.c, planner.c): plan values
 * and steps, plans, run contexts, subgraphs and frames; types only. Each layer declares its
 * functions in the header of its source, bottom first: core/exec_frame.h (a kernel's frame),
 * core/plan.h (structure and step edits), core/plan_step.h (running one step),
 * core/plan_prepare.h (kernel preparation), core/exec_place.h (placement), core/exec_view.h
 * (views), core/fuse.h (fusion), core/planner.h (lifetimes and memory), core/plan_build.h (the
 * driver that builds plans with them), core/exec_run.h (runs) (docs/ARCHITECTURE.md). */
#ifndef ONYX_CORE_EXEC_INTERNAL_H
#define ONYX_CORE_EXEC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "core/exec_env.h"

typedef struct subgraph subgraph; /* core/exec_run.h's */

/* Where a value's data lives during a run of a plan. */
typedef enum storage {
    ST_NONE = 0, /* unused value */
    ST_CONST,    /* known at plan time (initializer or folded): never written */
    ST_INPUT,    /* a graph input or a captured outer value: bound per run */
    ST_ARENA,    /* static shape: a fixed offset in the arena of its device */
    ST_HEAP,     /* allocated when produced, freed after its last use (or handed out) */
} storage;

/* A value of a plan: one per graph value (same index), then the plan's own values (copies of
 * graph values on other devices), each mirroring the graph value `source`. */
typedef struct plan_value {
    type_info type;   /* as specialized: exact for ST_CONST/ST_ARENA, maybe partial for ST_HEAP */
    tensor *constant; /* ST_CONST */
    bool owns_constant;
    bool shared_bytes; /* a device constant whose bytes the rep's shared cache holds, for every
                          plan that uploads the same weight (core/exec_place.c) */
    device_kind device; /* where the data lives (ST_HEAP values: the CPU, or a device for its
                           outputs and for values sized per run, KF_RUN_SHAPES; ST_INPUT values:
                           where the plan's signature says) */
    bool from_weights;  /* ST_CONST made from initializers alone: the same in every plan */
    int source;       /* the graph value this one holds */
    storage where;
    int alias_of;     /* ST_ARENA value sharing the buffer of this value index (reshape-like), or -1 */
    size_t alias_at;  /* where in that buffer this value starts, in bytes (a view: exec_view.c) */
    int first, last;  /* producing step and last reading step; -1 when none */
    bool channels_last; /* opaque (core/fuse.h): stored channels last, [N, spatial..., C] for
                           the logical [N, C, spatial...] (the plain size, no padding) */
    size_t offset, size;
} plan_value;

typedef struct plan_step {
    int node;
    const kernel *k;
    void *state;
    bool recheck;     /* static outputs planned from inputs of unknown shape: verify per run */
    int n_release;    /* ST_HEAP values read for the last time here */
    int *release;
    graph_node *own_node; /* owned: the node this step runs instead of nodes[node]: a fused chain
                             (core/fuse.c), the node with inputs or outputs moved to copies on its
                             device, or a copy step's own (core/exec_place.c) */
    bool fused;           /* own_node is a fusion pass's (core/fuse.c, core/fuse_device.c) */
    const op_params *params; /* the node's geometry as its schema resolved it for the plan's
                                types (the plan's, core/op_params.h), or NULL */
} plan_step;

/* The node a step runs: its graph node, or the one of its own that replaced it. */
static inline const graph_node *step_node(const graph *g, const plan_step *ps) {
    return ps->own_node ? ps->own_node : &g->nodes[ps->node];
}

/* Whether plan value v is a graph output (the plan's own values never are). */
static inline bool plan_value_is_output(const graph *g, int v) {
    return v >= 0 && v < g->n_values && (g->values[v].flags & GV_OUTPUT);
}

/* One run's working memory for a plan: the arena, the frame's value slots, the kernels' forks and
 * scratch. Made when a run finds no idle one, then kept by the plan for later runs, so that a
 * plan run again and again allocates nothing and touches no fresh pages. */
typedef struct run_ctx {
    struct run_ctx *next; /* in the plan's idle list */
    void *arena[DEVICE_KINDS]; /* one per device the plan uses */
    onyx_value *slots;    /* one per graph value: what the frame points at */
    onyx_value **vals;    /* the frame's value table */
    void **forks;         /* per step: the kernel's fork (kernel.fork), or NULL */
    void *scratch;        /* kernel_scratch's region, grown on demand */
    size_t scratch_size;
    void *queue[DEVICE_KINDS]; /* per device the plan uses that has queues (device_ops) */
    unsigned runs;        /* runs made in this context (graphs are captured from the second) */
    void **graphs;        /* per step that starts a graph segment: its captured graph, or NULL */
    bool *graph_failed;   /* per such step: capture failed once, run its steps one by one */
    bool *targeted;       /* per value: a graph output computed straight into the caller's target
                             during this run (core/exec_target.c) */
} run_ctx;

/* A graph specialized for one signature of input shapes. Read-only once built: concurrent runs
 * share it, each with a run context of its own. */
typedef struct plan {
    struct plan *next;  /* in the subgraph's cache (under its lock) */
    bool generic;       /* runs inputs of any size in its signature's unknown dims (set under
                           the subgraph's lock, read by fits_plan under it) */
    const tensor **raw_weights; /* weights its kernels read as stored (kernel_weight_bytes) */
    int n_raw;
    atomic_bool raw_pinned;     /* raw_weights restored and pinned before its first run */
    atomic_int refs;    /* one for the cache, one per run using the plan */
    type_info *sig;     /* per graph input, then per captured value */
    int n_sig;
    device_kind *in_device; /* per signature entry: where that input lives (NULL: the CPU) */
    device_kind out_device; /* graph outputs made on this device stay there */
    plan_value *vals;   /* n_vals: the graph's values, then the plan's own */
    int n_vals, cap_vals;
    int n_steps, cap_steps;
    plan_step *steps;
    size_t arena_size[DEVICE_KINDS];
    op_params **params; /* n_params: the steps' resolved geometries (plan_step.params), owned */
    int n_params;
    const device_ops *devices[DEVICE_KINDS]; /* from the environment */
    bool has_forks;     /* some step's kernel forks its state per context */
    int *segment_end;   /* per step: for the first step of a graph segment (consecutive device
                           steps on fixed addresses, replayed as one device graph), the step
                           after its last; 0 elsewhere. NULL when the plan has none. */
    pthread_mutex_t idle_lock;
    run_ctx *idle;      /* contexts not in use */
} plan;

#define SEEN_SHAPES 16

struct subgraph {
    const graph *g;   /* the graph as run: the model's, or its rewritten copy */
    graph *rewritten; /* owned (core/optimize.h), or NULL */
    exec_env env;
    int n_captured;   /* values with GV_CAPTURED, in index order */
    int *captured;
    pthread_mutex_t lock; /* guards plans, n_plans, seen and folded */
    plan *plans;      /* most recently used first */
    int n_plans;
    uint64_t seen[SEEN_SHAPES]; /* hashes of the shapes last planned (core/exec_run.c) */
    unsigned n_seen;
    tensor **folded;  /* per graph value: its constant when folded from initializers alone, kept
                         for every plan (a weight's Transpose is made once, not per shape) */
    int *readers;     /* per graph value: the node inputs that read it, where the env evicts
                         weights and no node has a subgraph (which may read outer values
                         unseen); else NULL */
    /* With readers, for weights read by several nodes (a tied embedding's codes): per value,
     * how many of its node inputs were prepared reading it only through packed objects; per
     * node input (input i of node n at input_at[n] + i), whether it was. */
    atomic_int *packed_reads;
    int *input_at;
    atomic_bool *packed_input;
};

struct exec_frame {
    const graph *g;
    onyx_value **vals; /* one per graph value */
    struct exec_frame *parent;
    run_ctx *ctx;      /* scratch and forks of the running plan */
    const run_control *control; /* the run's limits, shared by nested subgraph runs; may be NULL */
    struct profiler *profiler;  /* records each step when profiling; NULL otherwise */
};

#endif

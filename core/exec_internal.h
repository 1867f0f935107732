/* Internals of the executor shared by its files: plans, frames and the memory planner. */
#ifndef ONYX_CORE_EXEC_INTERNAL_H
#define ONYX_CORE_EXEC_INTERNAL_H

#include "core/exec.h"

/* Where a value's data lives during a run of a plan. */
typedef enum storage {
    ST_NONE = 0, /* unused value */
    ST_CONST,    /* known at plan time (initializer or folded): never written */
    ST_INPUT,    /* a graph input or a captured outer value: bound per run */
    ST_ARENA,    /* static shape: a fixed offset in the plan's arena */
    ST_HEAP,     /* allocated when produced, freed after its last use (or handed out) */
} storage;

typedef struct plan_value {
    type_info type;   /* as specialized: exact for ST_CONST/ST_ARENA, maybe partial for ST_HEAP */
    tensor *constant; /* ST_CONST */
    bool owns_constant;
    storage where;
    int alias_of;     /* ST_ARENA value sharing the buffer of this value index (reshape-like), or -1 */
    int first, last;  /* producing step and last reading step; -1 when none */
    size_t offset, size;
} plan_value;

typedef struct plan_step {
    int node;
    const kernel *k;
    void *state;
    bool recheck;     /* static outputs planned from inputs of unknown shape: verify per run */
    int n_release;    /* ST_HEAP values read for the last time here */
    int *release;
    graph_node *fused_node; /* owned; set by the fusion pass (core/fuse.c): the node this step
                               runs instead of nodes[node] (inputs and outputs of the chain) */
} plan_step;

/* The node a step runs: its graph node, or the fused one that replaced it. */
static inline const graph_node *step_node(const graph *g, const plan_step *ps) {
    return ps->fused_node ? ps->fused_node : &g->nodes[ps->node];
}

typedef struct plan {
    struct plan *next;
    type_info *sig;   /* per graph input, then per captured value */
    int n_sig;
    plan_value *vals;
    onyx_value *slots; /* one per graph value: what frames point at */
    onyx_value **frame; /* the frame's value table while the plan runs (plans are not reentrant) */
    int n_steps;
    plan_step *steps;
    void *arena;
    size_t arena_size;
    bool complete;    /* every node has a kernel (false only while building) */
} plan;

struct subgraph {
    const graph *g;
    exec_env env;
    int n_captured;   /* values with GV_CAPTURED, in index order */
    int *captured;
    plan *plans;      /* most recently used first */
    int n_plans;
};

struct exec_frame {
    const graph *g;
    onyx_value **vals; /* one per graph value */
    struct exec_frame *parent;
};

/* Runs kernel k's prepare for `node` (a step's node, or the fusion pass's copy of a conv with its
 * `chain` of post-ops) on the plan's current types and constants into *state. */
onyx_status plan_prepare_kernel(const subgraph *sg, const plan *p, const kernel *k,
                                const graph_node *node, const struct fuse_chain *chain,
                                void **state);

/* Offsets for ST_ARENA values with lifetimes [first, last]; returns the arena size. */
size_t plan_assign_offsets(plan_value *vals, int n);

#endif

/* Running plans: the plan cache of a subgraph (shared by concurrent runs), the pool of run
 * contexts of each plan, the run limits, and the walk over a plan's steps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/device_cache.h"
#include "core/device_registry.h"
#include "core/exec_run.h"
#include "core/exec_internal.h"
#include "core/exec_target.h"
#include "core/log.h"
#include "core/optimize.h"
#include "core/parallel.h"
#include "core/plan.h"
#include "core/plan_build.h"
#include "core/plan_step.h"
#include "core/profile.h"
#include "core/shared.h"

#define MAX_PLANS 16

/* Drops a reference to p; the last one frees the plan's idle run contexts, then the plan
 * (plan_free). */
static void plan_unref(plan *p);

const graph *subgraph_graph(const subgraph *sg) { return sg->g; }

/* The rewrites at verbose level: each rule's change, then the graph's ops after them (what
 * tests read to see the graph a rule made: tests/python/test_rewrite_rules.py). */
static void log_rewrite(void *user, const char *rule, const char *family, const graph_node *root) {
    log_write(user, ONYX_LOG_VERBOSE, "rewrite: %s (%s) at node '%s' (%s%s%s)", rule, family,
              root->name, root->domain, *root->domain ? ":" : "", root->op_type);
}

static void log_rewritten(const exec_log *log, const graph *g, const graph *rewritten) {
    char ops[900]; /* a log line holds 1024 */
    graph_op_counts(rewritten ? rewritten : g, ops, sizeof ops);
    log_write(log, ONYX_LOG_VERBOSE, "rewrite: graph '%s': %d nodes -> %d: %s",
              g->name ? g->name : "", g->n_nodes, rewritten ? rewritten->n_nodes : g->n_nodes, ops);
}

void exec_optimize_options(const exec_env *env, optimize_options *out) {
    /* float16 as float only where devices that compute it in float (the CPU) run everything: a
     * GPU has float16 arithmetic */
    *out = (optimize_options){.level = env->optimization, .half_as_float = env->half_as_float,
                              .observe = log_enabled(&env->log, ONYX_LOG_VERBOSE) ? log_rewrite : NULL,
                              .user = (void *)&env->log};
    for (int d = 0; d < env->n_priority; d++) {
        const device_entry *e = device_entry_of(env->priority[d]);
        out->half_as_float &= e && e->float16_as_float;
    }
}

static void evict_counts_free(subgraph *sg) {
    free(sg->readers);
    free(sg->packed_reads);
    free(sg->input_at);
    free(sg->packed_input);
    sg->readers = NULL, sg->packed_reads = NULL, sg->input_at = NULL, sg->packed_input = NULL;
}

/* The readers of each value and the counts of packed reads (exec_internal.h); without memory,
 * none: no weight is evicted. */
static void evict_counts(subgraph *sg, const graph *g) {
    int inputs = 0;
    for (int n = 0; n < g->n_nodes; n++) inputs += g->nodes[n].n_inputs;
    sg->readers = calloc((size_t)g->n_values + 1, sizeof *sg->readers);
    sg->packed_reads = calloc((size_t)g->n_values + 1, sizeof *sg->packed_reads);
    sg->input_at = calloc((size_t)g->n_nodes + 1, sizeof *sg->input_at);
    sg->packed_input = calloc((size_t)inputs + 1, sizeof *sg->packed_input);
    if (!sg->readers || !sg->packed_reads || !sg->input_at || !sg->packed_input) {
        evict_counts_free(sg);
        return;
    }
    for (int n = 0, at = 0; n < g->n_nodes; n++) {
        sg->input_at[n] = at;
        at += g->nodes[n].n_inputs;
        for (int i = 0; i < g->nodes[n].n_inputs; i++)
            if (g->nodes[n].inputs[i] >= 0) sg->readers[g->nodes[n].inputs[i]]++;
    }
}

onyx_status subgraph_create(const graph *g, const exec_env *env, subgraph **out) {
    subgraph *sg = calloc(1, sizeof *sg);
    if (!sg) return onyx_oom("subgraph");
    if (env->ops) {
        optimize_options o;
        exec_optimize_options(env, &o);
        onyx_status st = graph_optimize(g, env->ops, &o, &sg->rewritten);
        if (st != ONYX_OK) {
            free(sg);
            return st;
        }
        if (o.observe) log_rewritten(&env->log, g, sg->rewritten);
        if (sg->rewritten) g = sg->rewritten;
    }
    sg->g = g;
    sg->env = *env;
    for (int i = 0; i < g->n_values; i++)
        if (g->values[i].flags & GV_CAPTURED) sg->n_captured++;
    sg->captured = calloc((size_t)sg->n_captured + 1, sizeof(int));
    sg->folded = calloc((size_t)g->n_values + 1, sizeof *sg->folded);
    if (!sg->captured || !sg->folded || pthread_mutex_init(&sg->lock, NULL) != 0) {
        free(sg->captured);
        free(sg->folded);
        graph_optimized_free(sg->rewritten);
        free(sg);
        return onyx_oom("subgraph");
    }
    for (int i = 0, k = 0; i < g->n_values; i++)
        if (g->values[i].flags & GV_CAPTURED) sg->captured[k++] = i;
    bool evict = env->evict_weights;
    for (int n = 0; n < g->n_nodes && evict; n++)
        for (int a = 0; a < g->nodes[n].n_attrs; a++)
            evict &= g->nodes[n].attrs[a].type != ATTR_GRAPH && g->nodes[n].attrs[a].type != ATTR_GRAPHS;
    if (evict) evict_counts(sg, g);
    *out = sg;
    return ONYX_OK;
}

void subgraph_free(subgraph *sg) {
    if (!sg) return;
    while (sg->plans) {
        plan *next = sg->plans->next;
        plan_unref(sg->plans);
        sg->plans = next;
    }
    for (int i = 0; i < sg->g->n_values; i++)
        if (sg->folded[i]) {
            tensor_release(sg->folded[i]);
            free(sg->folded[i]);
        }
    free(sg->folded);
    evict_counts_free(sg);
    pthread_mutex_destroy(&sg->lock);
    free(sg->captured);
    graph_optimized_free(sg->rewritten);
    free(sg);
}

/* ------------------------------------------------------------------ run contexts */

/* Frees a run context of plan p (its forks, slots, arena and scratch). */
static void run_ctx_free(const plan *p, run_ctx *ctx) {
    if (!ctx) return;
    if (ctx->graphs)
        for (int s = 0; s < p->n_steps; s++)
            if (ctx->graphs[s]) p->devices[p->steps[s].k->device]->graph_free(ctx->graphs[s]);
    free(ctx->graphs);
    free(ctx->graph_failed);
    if (ctx->forks)
        for (int s = 0; s < p->n_steps; s++)
            if (ctx->forks[s]) p->steps[s].k->unfork(ctx->forks[s]);
    if (ctx->slots)
        for (int i = 0; i < p->n_vals; i++) value_clear(&ctx->slots[i]);
    free(ctx->forks);
    free(ctx->slots);
    free(ctx->vals);
    free(ctx->targeted);
    for (int d = 0; d < DEVICE_KINDS; d++) {
        /* queued work may still use the arena */
        if (ctx->queue[d]) {
            (void)p->devices[d]->queue_finish(ctx->queue[d]);
            p->devices[d]->queue_destroy(ctx->queue[d]);
        }
        if (ctx->arena[d]) p->devices[d]->free(ctx->arena[d]);
    }
    free(ctx->scratch);
    free(ctx);
}

/* Waits for the work queued on the context's devices; the first error. */
static onyx_status run_ctx_finish(const plan *p, run_ctx *ctx) {
    onyx_status st = ONYX_OK;
    for (int d = 0; d < DEVICE_KINDS; d++) {
        if (!ctx->queue[d]) continue;
        onyx_status qs = p->devices[d]->queue_finish(ctx->queue[d]);
        if (st == ONYX_OK && qs != ONYX_OK)
            st = onyx_error_prefix(qs, "%s", device_name((device_kind)d));
    }
    return st;
}

/* A fresh context: the arenas, and the slots of constants and arena values pointing into them. */
static onyx_status run_ctx_create(const plan *p, const graph *g, run_ctx **out) {
    onyx_status st = ONYX_OK;
    run_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return onyx_oom("run context");
    ctx->slots = calloc((size_t)p->n_vals + 1, sizeof *ctx->slots);
    ctx->vals = calloc((size_t)p->n_vals + 1, sizeof *ctx->vals);
    ctx->targeted = calloc((size_t)p->n_vals + 1, sizeof *ctx->targeted);
    if (!ctx->slots || !ctx->vals || !ctx->targeted) {
        st = onyx_oom("run context");
        goto done;
    }
    /* The CPU's arena exists even when every arena value is empty: their data pointers are then
     * offsets into it, and kernels offset them (by 0), which is undefined behaviour on NULL. */
    for (int d = 0; d < DEVICE_KINDS; d++) {
        if (d != DEVICE_CPU && !p->arena_size[d]) continue;
        size_t bytes = (p->arena_size[d] + 63) & ~(size_t)63;
        const device_ops *dev = p->devices[d];
        if (!bytes) bytes = 64;
        /* blocks kept for device tensors are given back before an arena is refused */
        if (!(ctx->arena[d] = dev->alloc(bytes)) && d != DEVICE_CPU && device_cache_trim(dev))
            ctx->arena[d] = dev->alloc(bytes);
        if (!ctx->arena[d]) {
            st = onyx_error(ONYX_ERR_NO_MEMORY, "run context: %zu bytes of %s memory", bytes,
                            device_name((device_kind)d));
            goto done;
        }
    }
    bool uses[DEVICE_KINDS] = {0};
    for (int i = 0; i < p->n_vals; i++) uses[p->vals[i].device] = true;
    for (int d = 0; d < DEVICE_KINDS; d++) {
        if (!uses[d] || !p->devices[d] || !p->devices[d]->queue_create) continue;
        st = p->devices[d]->queue_create(&ctx->queue[d]);
        if (st != ONYX_OK) goto done;
    }
    for (int i = 0; i < p->n_vals; i++) {
        const plan_value *v = &p->vals[i];
        onyx_value *slot = &ctx->slots[i];
        if (v->where == ST_CONST) {
            value_borrow_tensor(slot, v->constant);
        } else if (v->where == ST_ARENA) {
            CHECK(tensor_set_shape(&slot->t, v->type.dtype, v->type.rank, v->type.dims));
            slot->kind = ONYX_VALUE_TENSOR;
            slot->t.owns = false;
            slot->t.device = v->device;
            slot->t.data = NULL; /* ST_INPUT roots of aliases are bound per run by the step */
            int root = v->alias_of >= 0 ? v->alias_of : i;
            const plan_value *r = &p->vals[root];
            if (r->where == ST_ARENA)
                slot->t.data = (char *)ctx->arena[r->device] + r->offset + v->alias_at;
            else if (r->where == ST_CONST) slot->t.data = r->constant->data;
        }
    }
    if (p->segment_end) {
        ctx->graphs = calloc((size_t)p->n_steps + 1, sizeof *ctx->graphs);
        ctx->graph_failed = calloc((size_t)p->n_steps + 1, sizeof *ctx->graph_failed);
        if (!ctx->graphs || !ctx->graph_failed) {
            st = onyx_oom("run context");
            goto done;
        }
    }
    if (p->has_forks) {
        if (!(ctx->forks = calloc((size_t)p->n_steps + 1, sizeof *ctx->forks))) {
            st = onyx_oom("run context");
            goto done;
        }
        for (int s = 0; s < p->n_steps; s++) {
            const plan_step *ps = &p->steps[s];
            if (!ps->k->fork) continue;
            st = ps->k->fork(ps->state, &ctx->forks[s]);
            if (st != ONYX_OK) {
                char label[256];
                onyx_error_prefix(st, "%s", node_label(step_node(g, ps), label, sizeof label));
                goto done;
            }
        }
    }
    *out = ctx;
    ctx = NULL;
done:
    run_ctx_free(p, ctx);
    return st;
}

/* An idle context of the plan, or a new one. */
static onyx_status run_ctx_take(plan *p, const graph *g, run_ctx **out) {
    pthread_mutex_lock(&p->idle_lock);
    run_ctx *ctx = p->idle;
    if (ctx) p->idle = ctx->next;
    pthread_mutex_unlock(&p->idle_lock);
    if (ctx) {
        *out = ctx;
        return ONYX_OK;
    }
    return run_ctx_create(p, g, out);
}

static void run_ctx_give_back(plan *p, run_ctx *ctx) {
    pthread_mutex_lock(&p->idle_lock);
    ctx->next = p->idle;
    p->idle = ctx;
    pthread_mutex_unlock(&p->idle_lock);
}

/* ------------------------------------------------------------------ run limits */

static onyx_status check_control(const run_control *ctl) {
    if (!ctl) return ONYX_OK;
    if (ctl->terminate && atomic_load_explicit(ctl->terminate, memory_order_relaxed))
        return onyx_error(ONYX_ERR_TERMINATED, "the run was terminated");
    if (ctl->deadline_ns && exec_now_ns() >= ctl->deadline_ns)
        return onyx_error(ONYX_ERR_TIMEOUT, "the run's deadline passed");
    return ONYX_OK;
}

onyx_status kernel_check_run(const kernel_call *c, int64_t iterations) {
    const run_control *ctl = c->frame ? c->frame->control : NULL;
    if (!ctl) return ONYX_OK;
    if (ctl->max_iterations > 0 && iterations > ctl->max_iterations)
        return onyx_error(ONYX_ERR_LIMIT, "more than %lld iterations (the run's cap)",
                          (long long)ctl->max_iterations);
    return check_control(ctl);
}

/* ------------------------------------------------------------------ the plan cache */

static void plan_unref(plan *p) {
    if (!p || atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) != 1) return;
    while (p->idle) {
        run_ctx *next = p->idle->next;
        run_ctx_free(p, p->idle);
        p->idle = next;
    }
    plan_free(p);
}

static bool types_equal(const type_info *a, const type_info *b) {
    if (a->kind != b->kind || a->dtype != b->dtype) return false;
    if (a->kind == ONYX_VALUE_TENSOR &&
        (a->rank != b->rank ||
         (a->rank > 0 && memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) != 0)))
        return false;
    if ((a->elem == NULL) != (b->elem == NULL)) return false;
    return a->elem == NULL || types_equal(a->elem, b->elem);
}

static onyx_status signature_of(type_info *out, const onyx_value *v) {
    if (!v) {
        type_init(out);
        return ONYX_OK;
    }
    /* A sequence's items may change shape between runs without changing the plan: the signature
     * of a non-tensor value keeps its kinds and dtypes only (from a sequence's first item: a Loop
     * growing a sequence must not look at every item each iteration). */
    if (v->kind != ONYX_VALUE_TENSOR) return type_of_value_kinds(out, v);
    return type_of_value(out, v);
}

/* The cached plan for `sig` with a reference taken for the caller, moved to the front; NULL
 * when none. Under the subgraph's lock. */
static plan *find_plan_locked(subgraph *sg, const type_info *sig, int n_sig,
                              const device_kind *in_device, device_kind out_device) {
    plan *prev = NULL;
    for (plan *p = sg->plans; p; prev = p, p = p->next) {
        if (p->n_sig != n_sig || p->out_device != out_device) continue;
        bool same = true;
        for (int i = 0; i < n_sig && same; i++)
            same = types_equal(&p->sig[i], &sig[i]) &&
                   (p->in_device ? p->in_device[i] : DEVICE_CPU) ==
                       (in_device ? in_device[i] : DEVICE_CPU);
        if (!same) continue;
        if (prev) {
            prev->next = p->next;
            p->next = sg->plans;
            sg->plans = p;
        }
        atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
        return p;
    }
    return NULL;
}

/* Finds the plan for `sig` or builds it, with a reference for the caller. Plans are built outside
 * the lock, so a slow build does not hold up runs of other shapes; when two threads build the
 * same signature, the first one cached wins and the other is dropped. */
/* "plan: built for INPUT TYPES" (a generic plan's unknown dims read '?'). */
static void log_plan(const exec_log *log, const type_info *sig, int n_sig) {
    char line[1024], t[160];
    size_t at = 0;
    line[0] = '\0';
    for (int i = 0; i < n_sig && at < sizeof line; i++)
        at += (size_t)snprintf(line + at, sizeof line - at, "%s%s", i ? " " : "",
                               type_str(&sig[i], t, sizeof t));
    log_write(log, ONYX_LOG_VERBOSE, "plan: built for %s", line);
}

/* `generic`: the plan serves runs of any size in its unknown dims (generalize). */
static onyx_status plan_for_signature(subgraph *sg, const type_info *sig, int n_sig,
                                      const device_kind *in_device, device_kind out_device,
                                      bool generic, plan **out) {
    /* the key as the plan will hold it: outputs wanted on a device the session lacks are the CPU's */
    if (!sg->env.devices[out_device]) out_device = DEVICE_CPU;
    pthread_mutex_lock(&sg->lock);
    plan *p = find_plan_locked(sg, sig, n_sig, in_device, out_device);
    if (p && generic) p->generic = true; /* a plan made at prepare before the shapes were known */
    pthread_mutex_unlock(&sg->lock);
    if (p) {
        *out = p;
        return ONYX_OK;
    }
    plan *built = NULL;
    TRY(plan_build(sg, sig, in_device, out_device, &built));
    built->generic = generic;
    if (log_enabled(&sg->env.log, ONYX_LOG_VERBOSE)) log_plan(&sg->env.log, sig, n_sig);
    plan *evicted = NULL;
    pthread_mutex_lock(&sg->lock);
    p = find_plan_locked(sg, sig, n_sig, in_device, out_device);
    if (!p) {
        p = built;
        built = NULL;
        atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed); /* the caller's */
        p->next = sg->plans;
        sg->plans = p;
        if (++sg->n_plans > MAX_PLANS) { /* drop the least recently used */
            plan *q = sg->plans;
            while (q->next && q->next->next) q = q->next;
            evicted = q->next;
            q->next = NULL;
            sg->n_plans--;
        }
    }
    pthread_mutex_unlock(&sg->lock);
    plan_unref(built);
    plan_unref(evicted); /* freed when its last run ends */
    *out = p;
    return ONYX_OK;
}

onyx_status subgraph_specialize(subgraph *sg, const type_info *const *in_types) {
    const graph *g = sg->g;
    int n_sig = g->n_inputs + sg->n_captured;
    type_info *sig = calloc((size_t)n_sig + 1, sizeof *sig);
    if (!sig) return onyx_oom("signature");
    onyx_status st = ONYX_OK;
    plan *p = NULL;
    for (int i = 0; i < n_sig; i++) type_init(&sig[i]);
    for (int i = 0; i < g->n_inputs; i++)
        if (in_types && in_types[i]) CHECK(type_copy(&sig[i], in_types[i]));
    for (int k = 0; k < sg->n_captured; k++)
        CHECK(type_copy(&sig[g->n_inputs + k], &g->values[sg->captured[k]].type));
    CHECK(plan_for_signature(sg, sig, n_sig, NULL, DEVICE_CPU, false, &p));
    plan_unref(p);
done:
    for (int i = 0; i < n_sig; i++) type_release(&sig[i]);
    free(sig);
    return st;
}

/* The value behind signature entry i: the graph inputs, then the captured values. */
static const onyx_value *sig_value(const subgraph *sg, const struct exec_frame *outer,
                                   const onyx_value *const *inputs, int i) {
    const graph *g = sg->g;
    if (i < g->n_inputs) return inputs[i];
    return outer->vals[g->values[sg->captured[i - g->n_inputs]].outer];
}

/* True when plan p was made for tensors of these shapes (a generic plan's dims of -1: any size,
 * see generalize): the common case of a rep run again and again, found without building a
 * signature. */
static bool fits_plan(const plan *p, const subgraph *sg, const struct exec_frame *outer,
                      const onyx_value *const *inputs, device_kind out_device) {
    if (p->out_device != (sg->env.devices[out_device] ? out_device : DEVICE_CPU)) return false;
    for (int i = 0; i < p->n_sig; i++) {
        const type_info *t = &p->sig[i];
        const onyx_value *v = sig_value(sg, outer, inputs, i);
        if (t->kind != ONYX_VALUE_TENSOR || !v || v->kind != ONYX_VALUE_TENSOR ||
            v->t.dtype != t->dtype || v->t.rank != t->rank ||
            v->t.device != (p->in_device ? p->in_device[i] : DEVICE_CPU))
            return false;
        for (int d = 0; d < t->rank; d++)
            if (t->dims[d] != v->t.dims[d] && !(p->generic && t->dims[d] < 0)) return false;
    }
    return true;
}

/* Shapes that change from run to run (a decoder's cache growing by a token per step, requests of
 * every length) would build a plan per run. Once GENERALIZE_AFTER plans of one pattern (inputs of
 * the same kinds, element types and ranks) are cached, a new shape of that pattern runs on a
 * generic plan instead, whose signature leaves the dims that differ between them unknown (-1):
 * kernels are prepared without those sizes and allocate per run. A shape seen again (the last
 * SEEN_SHAPES are remembered) gets a plan of its own: a server alternating a few shapes keeps
 * specialized plans, a decoder's one-off lengths share one. */
#define GENERALIZE_AFTER 3

static bool same_pattern(const type_info *a, const type_info *b) {
    return a->kind == ONYX_VALUE_TENSOR && b->kind == ONYX_VALUE_TENSOR && a->dtype == b->dtype &&
           a->rank == b->rank;
}

/* The inputs' dims as one number (what the seen-shapes ring holds). */
static uint64_t shape_hash(const subgraph *sg, const struct exec_frame *outer,
                           const onyx_value *const *inputs) {
    uint64_t h = 1469598103934665603u;
    for (int i = 0; i < sg->g->n_inputs + sg->n_captured; i++) {
        const onyx_value *v = sig_value(sg, outer, inputs, i);
        if (!v || v->kind != ONYX_VALUE_TENSOR) continue;
        for (int d = 0; d < v->t.rank; d++) h = (h ^ (uint64_t)v->t.dims[d]) * 1099511628211u;
    }
    return h;
}

/* Under the subgraph's lock: whether shape h ran recently; remembers it. */
static bool seen_before(subgraph *sg, uint64_t h) {
    for (int i = 0; i < SEEN_SHAPES; i++)
        if (sg->seen[i] == h) return true;
    sg->seen[sg->n_seen++ % SEEN_SHAPES] = h;
    return false;
}

/* Under the subgraph's lock: turns sig into its generic form (the dims that differ from cached
 * plans of its pattern set to -1) when the pattern has GENERALIZE_AFTER plans. True when it did. */
static bool generalize(const subgraph *sg, type_info *sig, int n_sig, const device_kind *in_device) {
    bool differs[64][ONYX_MAX_RANK] = {{0}};
    if (n_sig > 64) return false;
    int same = 0;
    for (const plan *p = sg->plans; p; p = p->next) {
        bool fits = p->n_sig == n_sig;
        for (int i = 0; i < n_sig && fits; i++)
            fits = same_pattern(&p->sig[i], &sig[i]) &&
                   (p->in_device ? p->in_device[i] : DEVICE_CPU) ==
                       (in_device ? in_device[i] : DEVICE_CPU);
        if (!fits) continue;
        same++;
        for (int i = 0; i < n_sig; i++)
            for (int d = 0; d < sig[i].rank; d++)
                differs[i][d] |= p->sig[i].dims[d] != sig[i].dims[d];
    }
    if (same < GENERALIZE_AFTER) return false;
    for (int i = 0; i < n_sig; i++)
        for (int d = 0; d < (sig[i].kind == ONYX_VALUE_TENSOR ? sig[i].rank : 0); d++)
            if (differs[i][d]) sig[i].dims[d] = -1;
    return true;
}

/* The weights that p's kernels read as stored, restored and kept from now on: a plan made before
 * they were evicted (at prepare, before the shapes were known) may come to run after. */
static onyx_status plan_pin_weights(const subgraph *sg, plan *p) {
    if (p->n_raw == 0 || atomic_load_explicit(&p->raw_pinned, memory_order_acquire))
        return ONYX_OK;
    for (int i = 0; i < p->n_raw; i++)
        TRY(shared_cache_restore(sg->env.shared, p->raw_weights[i], true));
    atomic_store_explicit(&p->raw_pinned, true, memory_order_release);
    return ONYX_OK;
}

/* Finds or builds the plan for these inputs, with a reference for the caller. Tensor inputs of a
 * cached shape find their plan without building a signature, so a rep run with a few shapes in
 * turn allocates nothing to find its plans. */
static onyx_status plan_for(subgraph *sg, struct exec_frame *outer,
                            const onyx_value *const *inputs, device_kind out_device, plan **out) {
    pthread_mutex_lock(&sg->lock);
    plan *found = NULL, *found_prev = NULL, *generic = NULL, *generic_prev = NULL, *prev = NULL;
    for (plan *p = sg->plans; p && !found; prev = p, p = p->next) {
        if (!fits_plan(p, sg, outer, inputs, out_device)) continue;
        if (!p->generic) {
            found = p, found_prev = prev;
        } else if (!generic) {
            generic = p, generic_prev = prev;
        }
    }
    /* no plan of its own: the generic one, unless this shape comes again */
    bool seen = false;
    if (!found && generic && !(seen = seen_before(sg, shape_hash(sg, outer, inputs))))
        found = generic, found_prev = generic_prev;
    if (found) {
        if (found_prev) { /* most recently used first */
            found_prev->next = found->next;
            found->next = sg->plans;
            sg->plans = found;
        }
        atomic_fetch_add_explicit(&found->refs, 1, memory_order_relaxed);
        pthread_mutex_unlock(&sg->lock);
        *out = found;
        return ONYX_OK;
    }
    if (!generic) seen = seen_before(sg, shape_hash(sg, outer, inputs));
    pthread_mutex_unlock(&sg->lock);
    int n_sig = sg->g->n_inputs + sg->n_captured;
    type_info *sig = calloc((size_t)n_sig + 1, sizeof *sig);
    if (!sig) return onyx_oom("signature");
    onyx_status st = ONYX_OK;
    device_kind *in_device = calloc((size_t)n_sig + 1, sizeof *in_device);
    bool on_devices = false;
    for (int i = 0; i < n_sig; i++) type_init(&sig[i]);
    if (!in_device) {
        st = onyx_oom("signature");
        goto done;
    }
    for (int i = 0; i < n_sig; i++) {
        const onyx_value *v = sig_value(sg, outer, inputs, i);
        CHECK(signature_of(&sig[i], v));
        in_device[i] = v && v->kind == ONYX_VALUE_TENSOR ? v->t.device : DEVICE_CPU;
        on_devices |= in_device[i] != DEVICE_CPU;
    }
    bool make_generic = false;
    if (!seen) {
        pthread_mutex_lock(&sg->lock);
        make_generic = generalize(sg, sig, n_sig, on_devices ? in_device : NULL);
        pthread_mutex_unlock(&sg->lock);
    }
    CHECK(plan_for_signature(sg, sig, n_sig, on_devices ? in_device : NULL, out_device,
                             make_generic, out));
done:
    for (int i = 0; i < n_sig; i++) type_release(&sig[i]);
    free(sig);
    free(in_device);
    return st;
}

/* ------------------------------------------------------------------ running a plan */

static onyx_status check_input(const graph_value *gv, const onyx_value *v) {
    if (!v) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "input '%s' is missing", gv->name);
    if (type_accepts(&gv->type, v)) return ONYX_OK;
    char want[160], got[160];
    type_info t;
    type_init(&t);
    TRY(type_of_value(&t, v));
    onyx_error(ONYX_ERR_SHAPE, "input '%s': expected %s, got %s", gv->name,
               type_str(&gv->type, want, sizeof want), type_str(&t, got, sizeof got));
    type_release(&t);
    return ONYX_ERR_SHAPE;
}

/* Kind and element type only: subgraph bodies and graph outputs are often declared with loose
 * or symbolic dims, but a different element type is always a broken model. */
static bool kind_and_dtype_fit(const type_info *t, const onyx_value *v) {
    if (t->kind == ONYX_VALUE_NONE) return true;
    if (!v || t->kind != v->kind) return false;
    return t->kind != ONYX_VALUE_TENSOR || t->dtype == ONYX_UNDEFINED || t->dtype == v->t.dtype;
}

static onyx_status type_mismatch(const char *what, const graph_value *gv, const onyx_value *v) {
    char want[160], got[160] = "nothing";
    type_info t;
    type_init(&t);
    if (v) TRY(type_of_value(&t, v));
    onyx_error(ONYX_ERR_INVALID_MODEL, "%s '%s' is declared %s but gets %s", what, gv->name,
               type_str(&gv->type, want, sizeof want), v ? type_str(&t, got, sizeof got) : got);
    type_release(&t);
    return ONYX_ERR_INVALID_MODEL;
}

/* Runs steps [from, to) one by one. */
static onyx_status run_steps(const plan *p, run_ctx *ctx, struct exec_frame *frame, int from,
                             int to) {
    const graph *g = frame->g;
    onyx_status st = ONYX_OK;
    for (int s = from; s < to && st == ONYX_OK; s++) {
        const plan_step *ps = &p->steps[s];
        st = plan_run_step(p, ps, g, frame, ctx->forks && ctx->forks[s] ? ctx->forks[s] : ps->state);
        for (int r = 0; r < ps->n_release && st == ONYX_OK; r++)
            value_clear(frame->vals[ps->release[r]]);
    }
    return st;
}

/* Runs the graph segment starting at step s (plan.segment_end): the context's first run runs its
 * steps one by one (kernels make their handles and scratch), the second captures them into a
 * device graph and launches it, later runs launch that graph. A segment whose capture fails is
 * run step by step from then on. */
static onyx_status run_segment(subgraph *sg, const plan *p, run_ctx *ctx,
                               struct exec_frame *frame, int s) {
    int end = p->segment_end[s];
    device_kind dev = p->steps[s].k->device;
    const device_ops *d = p->devices[dev];
    void *q = ctx->queue[dev];
    if (ctx->graphs[s]) return d->graph_launch(q, ctx->graphs[s]);
    if (ctx->runs == 0 || ctx->graph_failed[s] || !q) return run_steps(p, ctx, frame, s, end);
    void *graph = NULL;
    onyx_status st = d->capture_begin(q);
    if (st == ONYX_OK) {
        st = run_steps(p, ctx, frame, s, end);
        onyx_status ended = d->capture_end(q, st == ONYX_OK ? &graph : NULL);
        if (st == ONYX_OK) st = ended;
    }
    if (st == ONYX_OK && graph) {
        ctx->graphs[s] = graph;
        return d->graph_launch(q, graph);
    }
    if (graph) d->graph_free(graph);
    char label[256];
    log_write(&sg->env.log, ONYX_LOG_VERBOSE, "device graph: steps %d-%d from %s run one by one: %s",
              s, end - 1, node_label(step_node(sg->g, &p->steps[s]), label, sizeof label),
              onyx_last_error());
    onyx_error_clear(); /* a real failure, logged and recovered from: the steps run one by one */
    ctx->graph_failed[s] = true;
    return run_steps(p, ctx, frame, s, end);
}

typedef struct {
    subgraph *sg;
    plan *p;
    run_ctx *ctx;
    struct exec_frame *frame;
} steps_call;

/* The plan's steps, in order, until one fails or the run is stopped. */
static onyx_status walk_steps(void *arg) {
    steps_call *a = arg;
    plan *p = a->p;
    onyx_status st = ONYX_OK;
    bool graphs = p->segment_end && !a->frame->profiler; /* profiles time each step */
    for (int s = 0; s < p->n_steps && st == ONYX_OK;) {
        st = check_control(a->frame->control);
        if (st != ONYX_OK) break;
        if (graphs && p->segment_end[s]) {
            st = run_segment(a->sg, p, a->ctx, a->frame, s);
            s = p->segment_end[s];
        } else {
            st = run_steps(p, a->ctx, a->frame, s, s + 1);
            s++;
        }
    }
    return st;
}

/* Walks the plan's steps in a context and hands the graph outputs over. */
static onyx_status run_plan(subgraph *sg, plan *p, run_ctx *ctx, struct exec_frame *outer,
                            const run_control *control, const onyx_value *const *inputs,
                            onyx_value *const *targets, onyx_value *const *outputs) {
    const graph *g = sg->g;
    onyx_value **vals = ctx->vals;
    for (int i = 0; i < p->n_vals; i++) vals[i] = &ctx->slots[i];
    for (int i = 0; i < g->n_inputs; i++) vals[g->inputs[i]] = (onyx_value *)inputs[i];
    for (int k = 0; k < sg->n_captured; k++)
        vals[sg->captured[k]] = outer->vals[g->values[sg->captured[k]].outer];
    struct exec_frame frame = {.g = g,
                               .vals = vals,
                               .parent = outer,
                               .ctx = ctx,
                               .control = control,
                               .profiler = sg->env.profiler};
    onyx_status st = targets ? target_mark(sg, p, ctx, inputs, targets) : ONYX_OK;
    if (st != ONYX_OK) return st;
    for (int i = 0; i < g->n_outputs && targets; i++) /* their steps write into them */
        if (g->outputs[i] >= 0 && ctx->targeted[g->outputs[i]]) vals[g->outputs[i]] = targets[i];

    /* the main graph runs in the rep's arena; a subgraph in its caller's */
    steps_call call = {sg, p, ctx, &frame};
    st = parallel_within(outer ? 0 : sg->env.threads, &sg->env.threads_policy, walk_steps, &call);
    onyx_status finished = run_ctx_finish(p, ctx);
    if (st == ONYX_OK) st = finished;
    ctx->runs++;
    for (int i = 0; i < g->n_outputs && st == ONYX_OK; i++) {
        int vi = g->outputs[i];
        if (vi < 0) continue;
        if (!kind_and_dtype_fit(&g->values[vi].type, vals[vi])) {
            st = type_mismatch("graph output", &g->values[vi], vals[vi]);
            break;
        }
        if (targets && targets[i]) { /* the caller's memory holds it: outputs[i] stays empty */
            st = target_take(g, ctx, vi, vals[vi], targets[i]);
            continue;
        }
        bool listed_again = false;
        for (int j = i + 1; j < g->n_outputs; j++) listed_again |= g->outputs[j] == vi;
        /* outputs own their storage (bindings hand it to the caller without a copy) */
        bool borrowed = vals[vi]->kind == ONYX_VALUE_TENSOR && !vals[vi]->t.owns;
        if (p->vals[vi].where == ST_HEAP && !listed_again && !borrowed)
            value_move(outputs[i], vals[vi]);
        else
            st = value_copy(outputs[i], vals[vi]);
    }
    /* nothing of this run stays in the context but its arena and scratch */
    for (int i = 0; i < p->n_vals; i++)
        if (p->vals[i].where == ST_HEAP) value_clear(&ctx->slots[i]);
    for (int i = 0; i < g->n_outputs && targets; i++)
        if (g->outputs[i] >= 0) ctx->targeted[g->outputs[i]] = false;
    return st;
}

static onyx_status run(subgraph *sg, struct exec_frame *outer, const run_control *control,
                       const onyx_value *const *inputs, onyx_value *const *targets,
                       onyx_value *const *outputs) {
    const graph *g = sg->g;
    if (!outer) {
        if (sg->n_captured > 0)
            return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "value '%s' needs an enclosing graph",
                              g->values[sg->captured[0]].name);
        for (int i = 0; i < g->n_inputs; i++) TRY(check_input(&g->values[g->inputs[i]], inputs[i]));
    } else {
        for (int i = 0; i < g->n_inputs; i++) {
            const graph_value *gv = &g->values[g->inputs[i]];
            if (!kind_and_dtype_fit(&gv->type, inputs[i]))
                return type_mismatch("subgraph input", gv, inputs[i]);
        }
    }
    TRY(check_control(control));
    plan *p = NULL;
    /* subgraphs hand their outputs to the control-flow kernel on the CPU */
    device_kind out_device = !outer && control ? control->output_device : DEVICE_CPU;
    TRY(plan_for(sg, outer, inputs, out_device, &p));
    onyx_status pinned = plan_pin_weights(sg, p);
    if (pinned != ONYX_OK) {
        plan_unref(p);
        return pinned;
    }
    run_ctx *ctx = NULL;
    int64_t start = sg->env.profiler && !outer ? exec_now_ns() : 0;
    onyx_status st = run_ctx_take(p, g, &ctx);
    if (st == ONYX_OK) {
        st = run_plan(sg, p, ctx, outer, control, inputs, targets, outputs);
        run_ctx_give_back(p, ctx);
    }
    if (start) profiler_run(sg->env.profiler, start, exec_now_ns(), control ? control->tag : NULL);
    plan_unref(p);
    return st;
}

onyx_status subgraph_run(subgraph *sg, struct exec_frame *outer, const onyx_value *const *inputs,
                         onyx_value *const *outputs) {
    return run(sg, outer, outer ? outer->control : NULL, inputs, NULL, outputs);
}

onyx_status subgraph_run_main(subgraph *sg, const run_control *control,
                              const onyx_value *const *inputs, onyx_value *const *targets,
                              onyx_value *const *outputs) {
    device_cache_run_begins();
    onyx_status st = run(sg, NULL, control, inputs, targets, outputs);
    /* the caller may write into its outputs: no sequence in them shares items (core/value.h)
     * with an input or another output */
    for (int i = 0; i < sg->g->n_outputs && st == ONYX_OK; i++) st = value_unshare(outputs[i]);
    return st;
}

static void log_made(const kernel_prep *p) {
    if (!log_enabled(&p->env->log, ONYX_LOG_VERBOSE)) return;
    char label[256];
    log_write(&p->env->log, ONYX_LOG_VERBOSE, "shared: %s made data from its constants",
              node_label(p->node, label, sizeof label));
}

onyx_status kernel_shared(const kernel_prep *p, const void *key, size_t key_size,
                          onyx_status (*make)(void *ctx, void **obj), void (*release)(void *obj),
                          void *ctx, void **out) {
    if (!p->env || !p->env->shared) /* no rep around it (never in practice) */
        return onyx_error(ONYX_ERR_RUNTIME, "shared data requested outside a rep");
    bool made;
    TRY(shared_cache_get(p->env->shared, key, key_size, make, release, ctx, out, &made));
    if (made) log_made(p);
    return ONYX_OK;
}

onyx_status kernel_shared_weight(const kernel_prep *p, int input, const void *key, size_t key_size,
                                 onyx_status (*make)(void *ctx, void **obj),
                                 void (*release)(void *obj),
                                 onyx_status (*unpack)(const void *obj, void *dst), void *ctx,
                                 void **out) {
    if (!p->env || !p->env->shared)
        return onyx_error(ONYX_ERR_RUNTIME, "shared data requested outside a rep");
    const tensor *w = input >= 0 && input < p->n_in ? p->in_value[input] : NULL;
    if (!w) return onyx_error(ONYX_ERR_RUNTIME, "shared weight: input %d is not a constant", input);
    bool made;
    TRY(shared_cache_get_weight(p->env->shared, key, key_size, make, release, ctx, w, unpack, out,
                                &made));
    if (made) log_made(p);
    if (p->packed) p->packed[input] = true;
    return ONYX_OK;
}

onyx_status kernel_weight_bytes(const kernel_prep *p, int input) {
    const tensor *w = input >= 0 && input < p->n_in ? p->in_value[input] : NULL;
    if (!w || !p->env || !p->env->shared) return ONYX_OK;
    if (p->packed) p->packed[input] = false;
    if (p->raw) p->raw[input] = true; /* pinned when the plan runs (plan_pin_weights) */
    return shared_cache_restore(p->env->shared, w, false);
}

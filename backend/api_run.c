/* The backend contract of the public API: prepare, run, run_model, run_node, is_compatible. */
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/loader.h"
#include "core/loader_wire.h"
#include "core/log.h"
#include "core/model_write.h"
#include "core/parallel.h"
#include "core/profile.h"
#include "core/shared.h"
#include "ops/schema.h"
#include "backend/backend.h"
#include "onnx.pb-c.h"

struct onyx_rep {
    model *m;
    exec_env env;
    subgraph *main;
};

/* Every node (and every node of every subgraph) has a schema and a kernel somewhere. */
static onyx_status check_graph(const graph *g, const exec_env *env) {
    char label[256];
    for (int n = 0; n < g->n_nodes; n++) {
        const graph_node *node = &g->nodes[n];
        if (!node->schema)
            return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: %s", node_label(node, label, sizeof label),
                              node->unsupported ? node->unsupported : "no schema");
        if (!backend_has_kernel(node, env))
            return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: no kernel for this op and version",
                              node_label(node, label, sizeof label));
        for (int a = 0; a < node->n_attrs; a++) {
            const graph_attr *at = &node->attrs[a];
            if (at->type == ATTR_GRAPH) TRY(check_graph(at->g, env));
            if (at->type == ATTR_GRAPHS)
                for (size_t k = 0; k < at->n; k++) TRY(check_graph(at->graphs[k], env));
        }
    }
    return ONYX_OK;
}

/* Whether `domain` is in the comma-separated list `domains` (spaces around an entry ignored;
 * "ai.onnx" names the default domain, ""). */
static bool domain_listed(const char *domains, const char *domain) {
    if (!domains) return false;
    if (!*domain) domain = "ai.onnx";
    size_t len = strlen(domain);
    for (const char *p = domains;; p++) {
        while (*p == ' ') p++;
        size_t n = strcspn(p, ",");
        size_t k = n;
        while (k > 0 && p[k - 1] == ' ') k--;
        if (k == len && !strncmp(p, domain, len)) return true;
        p += n;
        if (!*p) return false;
    }
}

/* Every domain the model imports at an opset onyx implements. A newer opset may change any op's
 * meaning in ways onyx cannot know, so it is refused unless the user vouches for the domain
 * (`vouched`, comma-separated: session config "onyx.allow_newer_opsets"); the nodes then run
 * as the newest versions onyx knows, and a warning says so. */
static onyx_status check_opsets(const model *m, const char *vouched, const exec_log *log) {
    for (int k = 0; k < m->n_opsets; k++) {
        const opset_import *oi = &m->opsets[k];
        int64_t newest = schema_max_opset(oi->domain);
        if (newest == 0 || oi->version <= newest) continue;
        const char *name = *oi->domain ? oi->domain : "ai.onnx";
        if (!domain_listed(vouched, oi->domain))
            return onyx_error(ONYX_ERR_UNSUPPORTED,
                              "the model imports opset %lld of domain '%s', newer than the newest "
                              "onyx implements (%lld)",
                              (long long)oi->version, name, (long long)newest);
        if (log)
            log_write(log, ONYX_LOG_WARNING,
                      "domain '%s' at opset %lld, newer than onyx's %lld: its ops run as their "
                      "newest versions onyx implements (onyx.allow_newer_opsets)",
                      name, (long long)oi->version, (long long)newest);
    }
    return ONYX_OK;
}

static onyx_status parse_env(const onyx_session_options *o, exec_env *env) {
    memset(env, 0, sizeof *env);
    TRY(backend_devices(env, o->device, o->device_index, o->cpu_first));
    env->log = o->log;
    /* the one place a session's thread count is decided (every prepare path comes here): a
     * request past the CPUs runs on all of them, and says so */
    env->threads = parallel_usable_threads(o->threads);
    if (o->threads > env->threads)
        log_write(&env->log, ONYX_LOG_WARNING,
                  "threads: %d requested, but this process may run on %d CPU%s: using %d",
                  o->threads, env->threads, env->threads > 1 ? "s" : "", env->threads);
    if (o->allow_spinning) {
        env->threads_policy.spin_us = o->spin_us;
        env->threads_policy.doze_us = o->doze_us;
    }
    env->select = device_supports;
    env->find_kernel = device_find_kernel;
    env->optimization = o->optimization;
    env->blocked_layouts = o->blocked_layouts;
    env->half_as_float = o->half_as_float;
    env->bf16 = o->bf16;
    env->winograd = o->winograd;
    env->device_graphs = o->device_graphs;
    env->memory_limit = o->memory_limit;
    env->ops = &ops_registry;
    TRY(shared_cache_create(&env->shared));
    if (o->profile_path) TRY(profiler_create(o->profile_path, &env->profiler));
    return ONYX_OK;
}

/* The cheap refusals first (opsets, unknown ops and versions, no kernel); then what only prepare
 * finds (types a kernel does not take, attribute values it refuses) by preparing the model as a
 * session on `device` would, without running it. */
onyx_status onyx_is_compatible(const onyx_model *model_, const char *device) {
    const model *m = (const model *)model_;
    if (!m) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "model is NULL");
    device_kind kind;
    int index;
    bool cpu_first;
    TRY(device_parse_list(device, &kind, &index, &cpu_first));
    exec_env env = {0};
    TRY(backend_devices(&env, kind, index, cpu_first));
    TRY(check_opsets(m, NULL, NULL));
    TRY(check_graph(m->main, &env));
    onyx_session_options *o = NULL;
    onyx_rep *rep = NULL;
    onyx_status st;
    CHECK(onyx_session_options_create(&o));
    CHECK(onyx_session_options_set_devices(o, device));
    CHECK(onyx_prepare_session(model_, o, &rep));
done:
    onyx_rep_free(rep);
    onyx_session_options_free(o);
    return st;
}

/* Index of the graph input named `name`, or -1. */
static int input_index(const graph *g, const char *name) {
    for (int i = 0; i < g->n_inputs; i++)
        if (strcmp(g->values[g->inputs[i]].name, name) == 0) return i;
    return -1;
}

/* The type each graph input is planned with: its example's, or its declared one. */
static onyx_status example_types(const graph *g, const onyx_session_options *o, type_info *types) {
    bool *given = calloc((size_t)g->n_inputs + 1, sizeof *given);
    if (!given) return onyx_oom("prepare");
    onyx_status st = ONYX_OK;
    int next = 0;
    for (int e = 0; e < o->n_examples; e++) {
        const session_example *ex = &o->examples[e];
        int idx = ex->name ? input_index(g, ex->name) : next;
        if (idx < 0 || idx >= g->n_inputs) {
            st = ex->name ? onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                                       "prepare: no graph input named '%s'", ex->name)
                          : onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                                       "prepare: %d input examples for %d inputs", e + 1,
                                       g->n_inputs);
            goto done;
        }
        next = idx + 1;
        const graph_value *gv = &g->values[g->inputs[idx]];
        if (given[idx]) {
            st = onyx_error(ONYX_ERR_INVALID_ARGUMENT, "prepare: two examples for input '%s'",
                            gv->name);
            goto done;
        }
        if (!types_compatible(&gv->type, &ex->type)) {
            char want[160], got[160];
            st = onyx_error(ONYX_ERR_SHAPE, "prepare: input '%s': expected %s, got %s", gv->name,
                            type_str(&gv->type, want, sizeof want),
                            type_str(&ex->type, got, sizeof got));
            goto done;
        }
        CHECK(type_copy(&types[idx], &ex->type));
        given[idx] = true;
    }
    for (int i = 0; i < g->n_inputs; i++)
        if (!given[i]) CHECK(type_copy(&types[i], &g->values[g->inputs[i]].type));
done:
    free(given);
    return st;
}

/* onyx_prepare_session; `owning`: the rep takes the caller's reference to m (released on
 * failure too). */
static onyx_status prepare(model *m, const onyx_session_options *options, bool owning,
                           onyx_rep **out) {
    onyx_session_options *defaults = NULL;
    if (!options) {
        onyx_status st = onyx_session_options_create(&defaults);
        if (st != ONYX_OK) {
            if (owning) model_release(m);
            return st;
        }
        options = defaults;
    }
    onyx_status st = ONYX_OK;
    const graph *g = m->main;
    type_info *types = NULL;
    const type_info **type_ptrs = NULL;
    onyx_rep *rep = calloc(1, sizeof *rep);
    if (!rep) {
        st = onyx_oom("rep");
        goto done;
    }
    CHECK(parse_env(options, &rep->env));
    /* where the rep alone will hold the model and only the CPU computes, a weight that a kernel
     * keeps packed is held once, as packed (core/shared.h) */
    rep->env.evict_weights = owning && m->refs == 1 && rep->env.n_priority == 1 &&
                             rep->env.priority[0] == DEVICE_CPU;
    CHECK(check_opsets(m, options->newer_opsets, &rep->env.log));
    CHECK(check_graph(g, &rep->env));
    types = calloc((size_t)g->n_inputs + 1, sizeof *types);
    type_ptrs = calloc((size_t)g->n_inputs + 1, sizeof *type_ptrs);
    if (!types || !type_ptrs) {
        st = onyx_oom("prepare");
        goto done;
    }
    for (int i = 0; i < g->n_inputs; i++) {
        type_init(&types[i]);
        type_ptrs[i] = &types[i];
    }
    CHECK(example_types(g, options, types));
    /* written before any plan exists: plans may hand the model's packed weights back */
    if (options->optimized_path) {
        optimize_options opt;
        exec_optimize_options(&rep->env, &opt);
        model_write_options wo = {.path = options->optimized_path,
                                  .external_name = options->optimized_external,
                                  .external_min_bytes = options->optimized_external_min};
        st = model_write_optimized(m, rep->env.ops, &opt, &wo);
        if (st != ONYX_OK) {
            onyx_error_prefix(st, "prepare");
            goto done;
        }
    }
    CHECK(subgraph_create(g, &rep->env, &rep->main));
    st = subgraph_specialize(rep->main, type_ptrs);
    if (st != ONYX_OK) {
        onyx_error_prefix(st, "prepare");
        goto done;
    }
    if (!owning) model_retain(m);
    rep->m = m;
    m = NULL;
    *out = rep;
    rep = NULL;
done:
    if (types)
        for (int i = 0; i < g->n_inputs; i++) type_release(&types[i]);
    free(types);
    free(type_ptrs);
    onyx_rep_free(rep);
    if (owning && m) model_release(m);
    onyx_session_options_free(defaults);
    return st;
}

onyx_status onyx_prepare_session(const onyx_model *model_, const onyx_session_options *options,
                                 onyx_rep **out) {
    if (!model_ || !out) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "prepare: model or out is NULL");
    return prepare((model *)model_, options, false, out);
}

onyx_status onyx_prepare_session_owning(onyx_model *model_, const onyx_session_options *options,
                                        onyx_rep **out) {
    if (!model_ || !out) {
        onyx_model_free(model_);
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "prepare: model or out is NULL");
    }
    return prepare((model *)model_, options, true, out);
}

void onyx_rep_free(onyx_rep *rep) {
    if (!rep) return;
    /* evicted weights made plain memory again before anything frees them */
    if (rep->env.shared) shared_cache_forget_weights(rep->env.shared);
    subgraph_free(rep->main);
    profiler_free(rep->env.profiler);
    shared_cache_free(rep->env.shared); /* after the plans that borrow from it */
    model_release(rep->m);
    free(rep);
}

onyx_status onyx_rep_end_profiling(onyx_rep *rep, const char **path) {
    if (!rep) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "rep is NULL");
    if (!rep->env.profiler)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "profiling is off for this rep");
    return profiler_flush(rep->env.profiler, path);
}

size_t onyx_rep_input_count(const onyx_rep *rep) {
    return rep ? onyx_model_input_count((const onyx_model *)rep->m) : 0;
}
size_t onyx_rep_output_count(const onyx_rep *rep) {
    return rep ? onyx_model_output_count((const onyx_model *)rep->m) : 0;
}
onyx_status onyx_rep_input(const onyx_rep *rep, size_t index, onyx_io_info *out) {
    if (!rep) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "rep is NULL");
    return onyx_model_input((const onyx_model *)rep->m, index, out);
}
onyx_status onyx_rep_output(const onyx_rep *rep, size_t index, onyx_io_info *out) {
    if (!rep) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "rep is NULL");
    return onyx_model_output((const onyx_model *)rep->m, index, out);
}

/* Inputs bound by position without an allocation for models with up to this many inputs. */
#define BOUND_ON_STACK 32

/* A run of the main graph; `targets` NULL or one per graph output (NULL where none). */
static onyx_status run_rep(onyx_rep *rep, const onyx_run_options *options, size_t input_count,
                           const char *const *input_names, const onyx_value *const *inputs,
                           onyx_value *const *targets, size_t *output_count,
                           onyx_value ***outputs) {
    if (!rep || !output_count || !outputs || (input_count && !inputs))
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "run: NULL argument");
    const graph *g = rep->m->main;
    onyx_status st = ONYX_OK;
    run_control control = {0};
    if (options) {
        control.terminate = &options->terminate;
        if (options->timeout > 0)
            control.deadline_ns = exec_now_ns() + (int64_t)(options->timeout * 1e9);
        control.max_iterations = options->max_iterations;
        control.tag = options->tag;
        control.output_device = options->output_device;
        /* outputs stay on the session's GPU: another one asked for would be silently that one */
        const device_entry *out = device_entry_of(options->output_device);
        if (out && out->indexed && rep->env.devices[options->output_device] &&
            options->output_device_index != rep->env.device_index)
            return onyx_error(ONYX_ERR_DEVICE,
                              "run: run options ask for outputs on %s:%d, the session runs on "
                              "%s:%d",
                              out->name, options->output_device_index, out->name,
                              rep->env.device_index);
    }
    const onyx_value *bound_stack[BOUND_ON_STACK] = {0};
    const onyx_value **bound = g->n_inputs <= BOUND_ON_STACK
                                   ? bound_stack
                                   : calloc((size_t)g->n_inputs + 1, sizeof *bound);
    onyx_value **outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
    if (!bound || !outs) {
        st = onyx_oom("run");
        goto done;
    }
    if (!input_names) {
        if (input_count != (size_t)g->n_inputs) {
            st = onyx_error(ONYX_ERR_INVALID_ARGUMENT, "run: %zu inputs given, the model has %d",
                            input_count, g->n_inputs);
            goto done;
        }
        for (int i = 0; i < g->n_inputs; i++) bound[i] = inputs[i];
    } else {
        for (size_t k = 0; k < input_count; k++) {
            int idx = input_names[k] ? input_index(g, input_names[k]) : -1;
            if (idx < 0) {
                st = onyx_error(ONYX_ERR_INVALID_ARGUMENT, "run: no graph input named '%s'",
                                input_names[k] ? input_names[k] : "(null)");
                goto done;
            }
            if (bound[idx]) {
                st = onyx_error(ONYX_ERR_INVALID_ARGUMENT, "run: input '%s' is given twice",
                                input_names[k]);
                goto done;
            }
            if (!inputs[k]) {
                st = onyx_error(ONYX_ERR_INVALID_ARGUMENT, "run: input '%s' is NULL",
                                input_names[k]);
                goto done;
            }
            bound[idx] = inputs[k];
        }
        for (int i = 0; i < g->n_inputs; i++)
            if (!bound[i]) {
                st = onyx_error(ONYX_ERR_INVALID_ARGUMENT, "run: input '%s' is missing",
                                g->values[g->inputs[i]].name);
                goto done;
            }
    }
    for (int i = 0; i < g->n_outputs; i++)
        if (!(outs[i] = value_new())) {
            st = onyx_oom("outputs");
            goto done;
        }
    st = subgraph_run_main(rep->main, options ? &control : NULL, bound, targets, outs);
    if (st != ONYX_OK) {
        onyx_error_prefix(st, "run");
        goto done;
    }
    for (int i = 0; i < g->n_outputs && targets; i++)
        if (targets[i]) { /* written into the caller's memory */
            onyx_value_free(outs[i]);
            outs[i] = NULL;
        }
    *output_count = (size_t)g->n_outputs;
    *outputs = outs;
    outs = NULL;
done:
    if (outs) onyx_values_free(outs, (size_t)g->n_outputs);
    if (bound != bound_stack) free(bound);
    return st;
}

onyx_status onyx_rep_run_with_options(onyx_rep *rep, const onyx_run_options *options,
                                      size_t input_count, const char *const *input_names,
                                      const onyx_value *const *inputs, size_t *output_count,
                                      onyx_value ***outputs) {
    return run_rep(rep, options, input_count, input_names, inputs, NULL, output_count, outputs);
}

static int output_index(const graph *g, const char *name) {
    for (int i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] >= 0 && strcmp(g->values[g->outputs[i]].name, name) == 0) return i;
    return -1;
}

onyx_status onyx_rep_run_into(onyx_rep *rep, const onyx_run_options *options, size_t input_count,
                              const char *const *input_names, const onyx_value *const *inputs,
                              size_t target_count, const char *const *target_names,
                              onyx_value *const *targets, size_t *output_count,
                              onyx_value ***outputs) {
    if (!rep || (target_count && (!target_names || !targets)))
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "run_into: NULL argument");
    const graph *g = rep->m->main;
    onyx_value **by_output = calloc((size_t)g->n_outputs + 1, sizeof *by_output);
    if (!by_output) return onyx_oom("run_into");
    onyx_status st = ONYX_OK;
    for (size_t k = 0; k < target_count && st == ONYX_OK; k++) {
        const char *name = target_names[k] ? target_names[k] : "(null)";
        int i = target_names[k] ? output_index(g, target_names[k]) : -1;
        const onyx_value *t = targets[k];
        if (i < 0)
            st = onyx_error(ONYX_ERR_INVALID_ARGUMENT, "run_into: no graph output named '%s'", name);
        else if (by_output[i])
            st = onyx_error(ONYX_ERR_INVALID_ARGUMENT, "run_into: output '%s' has two targets",
                            name);
        else if (!t || t->kind != ONYX_VALUE_TENSOR || t->t.dtype == ONYX_STRING ||
                 (!t->t.data && t->t.nbytes) ||
                 (t->t.device != DEVICE_CPU && !device_ops_of(t->t.device)))
            st = onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                            "run_into: the target of output '%s' is not a tensor of numbers in "
                            "the memory of the CPU or of a device in use",
                            name);
        else
            by_output[i] = targets[k];
    }
    if (st == ONYX_OK)
        st = run_rep(rep, options, input_count, input_names, inputs, by_output, output_count,
                     outputs);
    free(by_output);
    return st;
}

onyx_status onyx_rep_run(onyx_rep *rep, size_t input_count, const char *const *input_names,
                         const onyx_value *const *inputs, size_t *output_count,
                         onyx_value ***outputs) {
    return onyx_rep_run_with_options(rep, NULL, input_count, input_names, inputs, output_count,
                                     outputs);
}

onyx_status onyx_run_model(const void *model_bytes, size_t size,
                           const onyx_session_options *options, size_t input_count, const onyx_value *const *inputs,
                           size_t *output_count, onyx_value ***outputs) {
    onyx_model *m = NULL;
    onyx_rep *rep = NULL;
    onyx_status st;
    CHECK(onyx_model_load_buffer(model_bytes, size, NULL, &m));
    st = onyx_prepare_session_owning(m, options, &rep);
    m = NULL;
    if (st != ONYX_OK) goto done;
    CHECK(onyx_rep_run(rep, input_count, NULL, inputs, output_count, outputs));
done:
    onyx_rep_free(rep);
    onyx_model_free(m);
    return st;
}

/* ------------------------------------------------------------------ run_node */

/* TypeProto builders for run_node's wrapper model, allocated from a pool. */
static Onnx__TypeProto *tensor_type_proto(pool *p, onyx_dtype dtype, int64_t rank,
                                          const int64_t *dims) {
    Onnx__TypeProto *t = pool_alloc(p, 1, sizeof *t);
    Onnx__TypeProto__Tensor *tt = pool_alloc(p, 1, sizeof *tt);
    if (!t || !tt) return NULL;
    onnx__type_proto__init(t);
    onnx__type_proto__tensor__init(tt);
    t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    t->tensor_type = tt;
    tt->has_elem_type = 1;
    tt->elem_type = (int32_t)dtype;
    if (rank < 0) return t;
    Onnx__TensorShapeProto *shape = pool_alloc(p, 1, sizeof *shape);
    Onnx__TensorShapeProto__Dimension **dv = pool_alloc(p, (size_t)rank + 1, sizeof *dv);
    if (!shape || !dv) return NULL;
    onnx__tensor_shape_proto__init(shape);
    for (int64_t i = 0; i < rank; i++) {
        dv[i] = pool_alloc(p, 1, sizeof **dv);
        if (!dv[i]) return NULL;
        onnx__tensor_shape_proto__dimension__init(dv[i]);
        if (dims && dims[i] >= 0) {
            dv[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            dv[i]->dim_value = dims[i];
        }
    }
    shape->n_dim = (size_t)rank;
    shape->dim = dv;
    tt->shape = shape;
    return t;
}

static Onnx__TypeProto *value_type_proto(pool *p, const onyx_value *v) {
    if (v->kind == ONYX_VALUE_TENSOR) return tensor_type_proto(p, v->t.dtype, v->t.rank, v->t.dims);
    if (v->kind == ONYX_VALUE_MAP) {
        Onnx__TypeProto *t = pool_alloc(p, 1, sizeof *t);
        Onnx__TypeProto__Map *m = pool_alloc(p, 1, sizeof *m);
        if (!t || !m) return NULL;
        onnx__type_proto__init(t);
        onnx__type_proto__map__init(m);
        m->has_key_type = true;
        m->key_type = (int32_t)v->map.keys->t.dtype;
        m->value_type = tensor_type_proto(p, v->map.values->t.dtype, -1, NULL);
        if (!m->value_type) return NULL;
        t->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
        t->map_type = m;
        return t;
    }
    const onyx_value *elem = NULL;
    onyx_dtype elem_dtype = v->elem_type ? v->elem_type->dtype : ONYX_UNDEFINED;
    if (v->kind == ONYX_VALUE_SEQUENCE && v->seq.count > 0) elem = v->seq.items[0];
    if (v->kind == ONYX_VALUE_OPTIONAL) elem = v->opt;
    Onnx__TypeProto *inner = NULL;
    if (elem) {
        inner = value_type_proto(p, elem);
        /* items of a sequence may differ in shape: keep the dtype only */
        if (inner && v->kind == ONYX_VALUE_SEQUENCE && inner->tensor_type)
            inner->tensor_type->shape = NULL;
    } else if (v->elem_type && v->elem_type->kind == ONYX_VALUE_SEQUENCE) {
        Onnx__TypeProto *t = pool_alloc(p, 1, sizeof *t);
        Onnx__TypeProto__Sequence *s = pool_alloc(p, 1, sizeof *s);
        if (!t || !s) return NULL;
        onnx__type_proto__init(t);
        onnx__type_proto__sequence__init(s);
        t->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
        t->sequence_type = s;
        s->elem_type = tensor_type_proto(p, v->elem_type->elem ? v->elem_type->elem->dtype
                                                                : ONYX_UNDEFINED, -1, NULL);
        inner = t;
    } else {
        inner = tensor_type_proto(p, elem_dtype, -1, NULL);
    }
    if (!inner) return NULL;
    Onnx__TypeProto *t = pool_alloc(p, 1, sizeof *t);
    if (!t) return NULL;
    onnx__type_proto__init(t);
    if (v->kind == ONYX_VALUE_SEQUENCE) {
        Onnx__TypeProto__Sequence *s = pool_alloc(p, 1, sizeof *s);
        if (!s) return NULL;
        onnx__type_proto__sequence__init(s);
        s->elem_type = inner;
        t->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
        t->sequence_type = s;
    } else {
        Onnx__TypeProto__Optional *o = pool_alloc(p, 1, sizeof *o);
        if (!o) return NULL;
        onnx__type_proto__optional__init(o);
        o->elem_type = inner;
        t->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
        t->optional_type = o;
    }
    return t;
}

static Onnx__ValueInfoProto *value_info(pool *p, const char *name, Onnx__TypeProto *type) {
    Onnx__ValueInfoProto *vi = pool_alloc(p, 1, sizeof *vi);
    if (!vi) return NULL;
    onnx__value_info_proto__init(vi);
    vi->name = (char *)name;
    vi->type = type;
    return vi;
}

onyx_status onyx_run_node(const void *node_bytes, size_t size, int64_t opset_version,
                          const char *device, size_t input_count, const onyx_value *const *inputs,
                          size_t outputs_info_count, const onyx_output_info *outputs_info,
                          size_t *output_count, onyx_value ***outputs) {
    if (!node_bytes || !output_count || !outputs || (input_count && !inputs))
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "run_node: NULL argument");
    if (opset_version < 0)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "run_node: opset_version must be >= 0 (0: the newest), got %lld",
                          (long long)opset_version);
    /* protobuf-c recurses into attribute subgraphs without a limit: bound the nesting first */
    TRY(loader_check_wire(&onnx__node_proto__descriptor, node_bytes, size, "ONNX NodeProto"));
    onyx_status st = ONYX_OK;
    pool p;
    pool_init(&p);
    model *m = NULL;
    onyx_session_options *so = NULL;
    onyx_rep *rep = NULL;
    Onnx__NodeProto *np = onnx__node_proto__unpack(NULL, size, node_bytes);
    if (!np) return onyx_error(ONYX_ERR_INVALID_MODEL, "run_node: not a valid NodeProto");

    const char *domain = np->domain ? np->domain : "";
    Onnx__OperatorSetIdProto opsets[2], *opset_ptrs[2];
    size_t n_opsets = 1;
    onnx__operator_set_id_proto__init(&opsets[0]);
    opsets[0].domain = "";
    opsets[0].has_version = 1;
    opsets[0].version = opset_version > 0 ? opset_version : schema_max_opset("");
    if (*domain && strcmp(domain, "ai.onnx") != 0) {
        onnx__operator_set_id_proto__init(&opsets[1]);
        opsets[1].domain = (char *)domain;
        opsets[1].has_version = 1;
        int64_t newest = schema_max_opset(domain);
        opsets[1].version = newest > 0 ? newest : 1; /* a domain onyx knows nothing of */
        n_opsets = 2;
    }
    for (size_t i = 0; i < n_opsets; i++) opset_ptrs[i] = &opsets[i];

    Onnx__ValueInfoProto **gin = pool_alloc(&p, np->n_input + 1, sizeof *gin);
    Onnx__ValueInfoProto **gout = pool_alloc(&p, np->n_output + 1, sizeof *gout);
    const onyx_value **feed = pool_alloc(&p, np->n_input + 1, sizeof *feed);
    if (!gin || !gout || !feed) {
        st = onyx_oom("run_node");
        goto done;
    }
    size_t n_gin = 0, used = 0;
    for (size_t i = 0; i < np->n_input; i++) {
        const char *name = np->input[i];
        if (!name || !*name) continue;
        if (used >= input_count) {
            st = onyx_error(ONYX_ERR_INVALID_ARGUMENT, "run_node: the node reads more inputs than the %zu given",
                            input_count);
            goto done;
        }
        const onyx_value *v = inputs[used++];
        bool seen = false;
        for (size_t j = 0; j < n_gin; j++) seen |= strcmp(gin[j]->name, name) == 0;
        if (seen) continue;
        Onnx__TypeProto *tp = v ? value_type_proto(&p, v) : NULL;
        if (!v || !tp || !(gin[n_gin] = value_info(&p, name, tp))) {
            st = v ? onyx_oom("run_node") : onyx_error(ONYX_ERR_INVALID_ARGUMENT, "run_node: input %zu is NULL", i);
            goto done;
        }
        feed[n_gin++] = v;
    }
    if (used != input_count) {
        st = onyx_error(ONYX_ERR_INVALID_ARGUMENT, "run_node: %zu inputs given, the node reads %zu",
                        input_count, used);
        goto done;
    }
    size_t n_gout = 0;
    for (size_t o = 0; o < np->n_output; o++) {
        const char *name = np->output[o];
        if (!name || !*name) continue;
        Onnx__TypeProto *tp = NULL;
        if (outputs_info && o < outputs_info_count && outputs_info[o].dtype != ONYX_UNDEFINED &&
            !(tp = tensor_type_proto(&p, outputs_info[o].dtype, outputs_info[o].rank,
                                     outputs_info[o].dims))) {
            st = onyx_oom("run_node");
            goto done;
        }
        if (!(gout[n_gout++] = value_info(&p, name, tp))) {
            st = onyx_oom("run_node");
            goto done;
        }
    }

    Onnx__GraphProto gp;
    onnx__graph_proto__init(&gp);
    gp.name = "run_node";
    gp.n_node = 1;
    gp.node = &np;
    gp.n_input = n_gin;
    gp.input = gin;
    gp.n_output = n_gout;
    gp.output = gout;
    Onnx__ModelProto mp;
    onnx__model_proto__init(&mp);
    mp.has_ir_version = 1;
    mp.ir_version = 10;
    mp.n_opset_import = n_opsets;
    mp.opset_import = opset_ptrs;
    mp.graph = &gp;
    CHECK(model_from_proto(&ops_registry, &mp, NULL, &m));

    /* the inputs are the examples: every shape is planned at prepare */
    CHECK(onyx_session_options_create(&so));
    if (device) CHECK(onyx_session_options_set_devices(so, device));
    for (size_t i = 0; i < n_gin; i++) CHECK(onyx_session_options_add_example(so, NULL, feed[i]));
    CHECK(onyx_prepare_session((onyx_model *)m, so, &rep));
    CHECK(onyx_rep_run(rep, n_gin, NULL, feed, output_count, outputs));
done:
    onyx_rep_free(rep);
    onyx_session_options_free(so);
    model_release(m);
    onnx__node_proto__free_unpacked(np, NULL);
    pool_destroy(&p);
    return st;
}

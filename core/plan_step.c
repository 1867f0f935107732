/* Running one step of a plan: its inputs checked to be on its kernel's device, its outputs
 * given buffers (arena slots, heap allocations, the caller's targets, or shapes inferred from the
 * actual inputs), its kernel's run, timed when profiling. Used by the runs (core/exec_run.c) and
 * by constant folding while a plan is built (core/plan_build.c). */
#include "core/plan_step.h"

#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/exec_target.h"
#include "core/op_schema.h"
#include "core/parallel.h"
#include "core/profile.h"

/* Per-node arrays of inputs or outputs: on the caller's stack up to EXEC_IO_STACK entries, on the
 * heap past that (Concat, Sum, SequenceConstruct of hundreds of inputs: up to ONYX_VARIADIC). */
#define EXEC_IO_STACK 32

static void *io_array(void *stack, size_t stack_bytes, int n, size_t size) {
    size_t bytes = (size_t)(n > 0 ? n : 1) * size;
    void *a = bytes <= stack_bytes ? stack : malloc(bytes);
    if (a) memset(a, 0, bytes);
    return a;
}

static void io_free(void *a, const void *stack) {
    if (a != stack) free(a);
}

onyx_status plan_infer_node(const graph_node *node, const type_info *const *in_types,
                            const tensor *const *in_values, type_info *out, op_params *params) {
    for (int o = 0; o < node->n_outputs; o++) type_init(&out[o]);
    if (params) params->kind = OP_PARAMS_NONE;
    if (!node->schema || !node->schema->infer) return ONYX_OK;
    infer_ctx ctx = {
        .node = node,
        .n_in = node->n_inputs,
        .n_out = node->n_outputs,
        .in = in_types,
        .in_value = in_values,
        .out = out,
        .params = params,
    };
    return node->schema->infer(&ctx);
}

/* Infers the node's outputs (and params, when not NULL) again from the values it actually gets:
 * everything is known now. */
static onyx_status infer_actual(const graph_node *node, onyx_value *const *in, type_info *rt,
                                op_params *params) {
    const type_info *itypes_s[EXEC_IO_STACK];
    type_info store_s[EXEC_IO_STACK];
    const tensor *ivals_s[EXEC_IO_STACK];
    const type_info **itypes = io_array(itypes_s, sizeof itypes_s, node->n_inputs, sizeof *itypes);
    type_info *store = io_array(store_s, sizeof store_s, node->n_inputs, sizeof *store);
    const tensor **ivals = io_array(ivals_s, sizeof ivals_s, node->n_inputs, sizeof *ivals);
    onyx_status st = itypes && store && ivals ? ONYX_OK : onyx_oom("input types");
    int n = 0;
    for (; n < node->n_inputs && st == ONYX_OK; n++) {
        type_init(&store[n]);
        itypes[n] = NULL;
        ivals[n] = NULL;
        if (!in[n]) continue;
        st = type_of_value(&store[n], in[n]);
        itypes[n] = &store[n];
        /* values are read on the host: a device tensor's bytes are not there */
        if (in[n]->kind == ONYX_VALUE_TENSOR && in[n]->t.device == DEVICE_CPU) ivals[n] = &in[n]->t;
    }
    if (st == ONYX_OK) st = plan_infer_node(node, itypes, ivals, rt, params);
    for (int i = 0; i < n; i++) type_release(&store[i]);
    io_free(itypes, itypes_s);
    io_free(store, store_s);
    io_free(ivals, ivals_s);
    return st;
}

/* The node's output types from the inputs it actually gets, into *rt (made on first need), with
 * its params when `params` is not NULL. */
static onyx_status actual_types(const graph_node *node, onyx_value *const *in, type_info **rt,
                                op_params *params) {
    if (*rt) return ONYX_OK;
    if (!(*rt = calloc((size_t)node->n_outputs, sizeof **rt))) return onyx_oom("output types");
    return infer_actual(node, in, *rt, params);
}

/* An output's buffer in `device`'s memory: on the CPU unzeroed (the kernel writes it whole); on a
 * device, an output left there or a value sized per run. */
static onyx_status alloc_output(onyx_value *out, device_kind device, onyx_dtype dtype, int rank,
                                const int64_t *dims) {
    if (device == DEVICE_CPU) return value_alloc_output(out, dtype, rank, dims);
    value_clear(out);
    TRY(tensor_alloc_on(&out->t, device, dtype, rank, dims));
    out->kind = ONYX_VALUE_TENSOR;
    return ONYX_OK;
}

/* Gives every output of the step a buffer before its kernel runs: arena outputs are ready (or
 * alias their input); heap outputs with a known shape are allocated; the rest are inferred from
 * the actual inputs now, or left empty for kernels that size their own outputs. A step whose
 * static outputs were planned from inputs of unknown shape first checks that the real inputs
 * give those shapes. run_params (or NULL): where the step's params have unknown dims, the ones
 * the actual inputs give, resolved by the same inference. */
static onyx_status bind_outputs(const plan *p, const plan_step *ps, const graph_node *node,
                                const struct exec_frame *frame, onyx_value *const *in,
                                onyx_value *const *out, op_params *run_params) {
    type_info *rt = NULL;
    const bool *targeted = frame->ctx ? frame->ctx->targeted : NULL;
    onyx_status st = ONYX_OK;
    if (ps->recheck || run_params) CHECK(actual_types(node, in, &rt, run_params));
    for (int o = 0; o < node->n_outputs; o++) {
        int vi = node->outputs[o];
        if (vi < 0) continue;
        const plan_value *v = &p->vals[vi];
        if (rt && type_is_static(&rt[o]) && type_is_static(&v->type) &&
            (rt[o].dtype != v->type.dtype ||
             !shape_equal(rt[o].rank, rt[o].dims, v->type.rank, v->type.dims))) {
            char got[160], want[160];
            st = onyx_error(ONYX_ERR_SHAPE, "output %d: the inputs give %s, expected %s", o,
                            type_str(&rt[o], got, sizeof got), type_str(&v->type, want, sizeof want));
            goto done;
        }
        if (targeted && targeted[vi]) { /* the caller's memory (core/exec_target.c), as it is */
            if (!type_is_static(&v->type)) CHECK(actual_types(node, in, &rt, NULL));
            const type_info *want = type_is_static(&v->type) ? &v->type : &rt[o];
            CHECK(target_check(frame->g->values[vi].name, want, &out[o]->t));
            continue;
        }
        if (v->where == ST_ARENA) {
            /* a reshape-like alias may have a graph input as its root, bound per run; an
             * in-place output's root is arena memory, its slot fixed */
            if (v->alias_of >= 0 && in[0] && (ps->k->flags & KF_ALIAS_INPUT0))
                out[o]->t.data = in[0]->t.data;
            continue;
        }
        /* sequences and optionals are built by the kernel, like data-dependent shapes */
        if ((ps->k->flags & KF_DYNAMIC_OUTPUT) ||
            (v->type.kind != ONYX_VALUE_TENSOR && v->type.kind != ONYX_VALUE_NONE)) {
            value_clear(out[o]);
            continue;
        }
        const type_info *want = &v->type;
        if (!type_is_static(want) && (ps->k->flags & KF_DEVICE_COPY)) {
            /* a copy between devices of a value sized per run: the size it has now */
            if (!in[0] || in[0]->kind != ONYX_VALUE_TENSOR) {
                st = onyx_error(ONYX_ERR_RUNTIME, "copy between devices: no tensor to copy");
                goto done;
            }
            CHECK(alloc_output(out[o], v->device, in[0]->t.dtype, in[0]->t.rank, in[0]->t.dims));
            continue;
        }
        if (!type_is_static(want)) {
            CHECK(actual_types(node, in, &rt, NULL));
            if (rt[o].kind != ONYX_VALUE_TENSOR && rt[o].kind != ONYX_VALUE_NONE) {
                value_clear(out[o]);
                continue;
            }
            if (!type_is_static(&rt[o])) {
                char buf[128];
                st = onyx_error(ONYX_ERR_UNSUPPORTED,
                                "output %d: shape not known after inference (%s)", o,
                                type_str(&rt[o], buf, sizeof buf));
                goto done;
            }
            want = &rt[o];
        }
        CHECK(alloc_output(out[o], v->device, want->dtype, want->rank, want->dims));
    }
done:
    if (rt) {
        for (int o = 0; o < node->n_outputs; o++) type_release(&rt[o]);
        free(rt);
    }
    return st;
}

onyx_status plan_run_step(const plan *p, const plan_step *ps, const graph *g,
                          struct exec_frame *frame, void *state) {
    const graph_node *node = step_node(g, ps);
    onyx_value *in_s[EXEC_IO_STACK], *out_s[EXEC_IO_STACK];
    onyx_value **in = io_array(in_s, sizeof in_s, node->n_inputs, sizeof *in),
               **out = io_array(out_s, sizeof out_s, node->n_outputs, sizeof *out);
    if (!in || !out) {
        io_free(in, in_s);
        io_free(out, out_s);
        return onyx_oom("node inputs");
    }
    for (int i = 0; i < node->n_inputs; i++)
        in[i] = node->inputs[i] >= 0 ? frame->vals[node->inputs[i]] : NULL;
    for (int o = 0; o < node->n_outputs; o++)
        out[o] = node->outputs[o] >= 0 ? frame->vals[node->outputs[o]] : NULL;
    onyx_status st = ONYX_OK;
    /* every tensor a kernel reads is on its device: a missing copy is an error, not garbage */
    for (int i = 0; i < node->n_inputs && !(ps->k->flags & KF_DEVICE_COPY); i++) {
        if (!in[i] || in[i]->kind != ONYX_VALUE_TENSOR) continue;
        bool on_host = i < 32 && (ps->k->host_inputs & (1u << i));
        device_kind want = on_host ? DEVICE_CPU : ps->k->device;
        if (in[i]->t.device != want)
            st = onyx_error(ONYX_ERR_RUNTIME, "input %d is on %s but the kernel reads it on %s", i,
                            device_name(in[i]->t.device), device_name(want));
    }
    /* a generic plan's geometry (or one its schema could not resolve at plan time): resolved
     * again for this run's inputs, on this run's stack */
    op_params run_params; /* only its kind set unless per_run: steps mostly need none */
    run_params.kind = OP_PARAMS_NONE;
    const op_params *params = ps->params;
    bool per_run = params && !op_params_known(params);
    if (st == ONYX_OK) st = bind_outputs(p, ps, node, frame, in, out,
                                             per_run ? &run_params : NULL);
    if (per_run) {
        if (st == ONYX_OK && params->kind != OP_PARAMS_UNRESOLVED &&
            run_params.kind != params->kind)
            st = onyx_error(ONYX_ERR_RUNTIME, "the inputs resolve no geometry for the kernel");
        params = run_params.kind != OP_PARAMS_NONE ? &run_params : NULL;
    }
    if (st == ONYX_OK) {
        kernel_call call = {
            .node = node,
            .state = state,
            .n_in = node->n_inputs,
            .n_out = node->n_outputs,
            .in = in,
            .out = out,
            .frame = frame,
            .threads = parallel_threads(),
            .queue = frame->ctx ? frame->ctx->queue[ps->k->device] : NULL,
            .params = params,
        };
        if (frame->profiler) {
            int64_t start = exec_now_ns();
            st = ps->k->run(&call);
            /* a device kernel only queues its work: wait for it, so the event is its run time */
            if (st == ONYX_OK && call.queue)
                st = p->devices[ps->k->device]->queue_finish(call.queue);
            profiler_node(frame->profiler, node, ps->k, node->n_inputs, in, node->n_outputs, out,
                          start, exec_now_ns(), frame->control ? frame->control->tag : NULL);
        } else {
            st = ps->k->run(&call);
        }
    }
    io_free(in, in_s);
    io_free(out, out_s);
    if (st != ONYX_OK) {
        char label[256];
        return onyx_error_prefix(st, "%s", node_label(node, label, sizeof label));
    }
    return ONYX_OK;
}

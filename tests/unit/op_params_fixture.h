/* What the tests of the params a schema resolves once per plan (core/op_params.h) share: a node
 * built in place (its schema, attributes, input types and constant inputs), its inference run
 * asking for its params, and a CPU kernel prepared and run on values with the params a test
 * hands it. Included by tests/unit/test_op_params*.c, after cmocka.h. */
#ifndef ONYX_TESTS_OP_PARAMS_FIXTURE_H
#define ONYX_TESTS_OP_PARAMS_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "core/exec_internal.h"
#include "kernels_cpu/cpu_kernels.h"
#include "ops/schema.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define FX_MAX_IN 8
#define FX_MAX_OUT 4

typedef struct fixture {
    graph_node node;
    graph_attr attrs[8];
    int inputs[FX_MAX_IN], outputs[FX_MAX_OUT]; /* the node's value indices (which some readers
                                                   check for present outputs) */
    type_info in[FX_MAX_IN];
    const type_info *in_ptrs[FX_MAX_IN];
    const tensor *values[FX_MAX_IN];
    onyx_value owned[FX_MAX_IN]; /* constant inputs' values */
    type_info out[FX_MAX_OUT];
    op_params params;
} fixture;

/* A node of (domain, op) at `opset` with n_in inputs (of no type until set_input) and one
 * output. */
static inline void setup_node(fixture *f, const char *domain, const char *op, int64_t opset,
                              int n_in) {
    memset(f, 0, sizeof *f);
    f->node.op_type = op;
    f->node.domain = domain;
    f->node.name = "n";
    f->node.schema = schema_lookup(domain, op, opset);
    assert_non_null(f->node.schema);
    f->node.version = f->node.schema->since_version;
    f->node.n_inputs = n_in;
    f->node.n_outputs = 1;
    f->node.inputs = f->inputs;
    f->node.outputs = f->outputs;
    for (int i = 0; i < FX_MAX_IN; i++) f->inputs[i] = i;
    for (int o = 0; o < FX_MAX_OUT; o++) f->outputs[o] = FX_MAX_IN + o;
    f->node.attrs = f->attrs;
    for (int i = 0; i < FX_MAX_IN; i++) type_init(&f->in[i]);
    for (int o = 0; o < FX_MAX_OUT; o++) type_init(&f->out[o]);
}

static inline void set_input(fixture *f, int i, onyx_dtype dt, int rank, const int64_t *dims) {
    type_set_tensor(&f->in[i], dt, rank, dims);
    f->in_ptrs[i] = &f->in[i];
}

/* Input i as an int64 vector of n values; constant (its value known to inference) or not. */
static inline void set_ints(fixture *f, int i, const int64_t *v, int64_t n, bool constant) {
    set_input(f, i, ONYX_INT64, 1, &n);
    if (!constant) return;
    assert_int_equal(value_alloc_tensor(&f->owned[i], ONYX_INT64, 1, &n), ONYX_OK);
    memcpy(f->owned[i].t.data, v, (size_t)n * sizeof *v);
    f->values[i] = &f->owned[i].t;
}

static inline graph_attr *add_attr(fixture *f, const char *name, attr_type type) {
    assert_true(f->node.n_attrs < N(f->attrs));
    graph_attr *a = &f->attrs[f->node.n_attrs++];
    a->name = name;
    a->type = type;
    return a;
}

static inline void add_int(fixture *f, const char *name, int64_t v) {
    add_attr(f, name, ATTR_INT)->i = v;
}

static inline void add_ints(fixture *f, const char *name, const int64_t *v, size_t n) {
    graph_attr *a = add_attr(f, name, ATTR_INTS);
    a->ints = v;
    a->n = n;
}

static inline void add_string(fixture *f, const char *name, const char *v) {
    graph_attr *a = add_attr(f, name, ATTR_STRING);
    a->s = v;
    a->s_len = strlen(v);
}

/* Runs the schema's inference asking for its params: its status. */
static inline onyx_status try_infer(fixture *f) {
    infer_ctx ctx = {.node = &f->node, .n_in = f->node.n_inputs, .n_out = f->node.n_outputs,
                     .in = f->in_ptrs, .in_value = f->values, .out = f->out,
                     .params = &f->params};
    return f->node.schema->infer(&ctx);
}

/* Runs the schema's inference asking for its params; it must succeed, and a schema that resolves
 * params must say so (OP_GEOMETRY: the plan then resolves them per run where it has none). */
static inline void infer(fixture *f) {
    assert_int_equal(try_infer(f), ONYX_OK);
    assert_true(f->params.kind == OP_PARAMS_NONE || (f->node.schema->flags & OP_GEOMETRY));
}

/* infer for a schema that resolves params, whether it did for these types or not. */
static inline void infer_geometry(fixture *f) {
    infer(f);
    assert_true(f->node.schema->flags & OP_GEOMETRY);
}

/* infer, for a schema that resolves a window: that window. */
static inline const geom_window *infer_window(fixture *f) {
    infer(f);
    assert_int_equal(f->params.kind, OP_PARAMS_WINDOW);
    return op_params_window(&f->params);
}

static inline void teardown(fixture *f) {
    for (int i = 0; i < FX_MAX_IN; i++) {
        type_release(&f->in[i]);
        value_clear(&f->owned[i]);
    }
    for (int o = 0; o < FX_MAX_OUT; o++) type_release(&f->out[o]);
}

/* ---------------------------------------------------------------- running the CPU's kernels */

static inline const kernel *cpu_kernel(const char *domain, const char *op) {
    size_t n;
    const kernel *t = cpu_kernel_table(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].domain, domain) && !strcmp(t[i].op_type, op)) return &t[i];
    return NULL;
}

/* A window of 2 spatial dims over [n, c, h, w]: kernel k, stride s, pads pb/pe, output out. */
static inline geom_window window_2d(int64_t n, int64_t c, int64_t m, int64_t h, int64_t w,
                                    int64_t k, int64_t s, int64_t pb, int64_t pe, int64_t oh,
                                    int64_t ow) {
    geom_window g;
    memset(&g, 0, sizeof g);
    g.nsp = 2;
    g.n = n;
    g.c = c;
    g.m = m;
    g.group = 1;
    const int64_t in[2] = {h, w}, out[2] = {oh, ow};
    for (int i = 0; i < 2; i++) {
        g.in[i] = in[i];
        g.out[i] = out[i];
        g.k[i] = k;
        g.stride[i] = s;
        g.dil[i] = 1;
        g.pad_b[i] = pb;
        g.pad_e[i] = pe;
    }
    return g;
}

/* Runs kernel k once for `node` on in[0..n_in) (NULL for an omitted input) into out[0..n_out)
 * with `params` and the run's `state` (NULL for a stateless kernel). */
static inline onyx_status run_kernel_io(const kernel *k, const graph_node *node, int n_in,
                                        onyx_value *const *in, int n_out, onyx_value *const *out,
                                        const op_params *params, void *state) {
    run_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    struct exec_frame frame = {.ctx = &ctx};
    kernel_call call = {.node = node, .state = state, .n_in = n_in, .n_out = n_out, .in = in,
                        .out = out, .frame = &frame, .threads = 1, .params = params};
    onyx_status st = k->run(&call);
    free(ctx.scratch);
    return st;
}

/* run_kernel_io for a stateless kernel on in[0..n_in) into one output. */
static inline onyx_status run_kernel(const kernel *k, const graph_node *node, int n_in,
                                     onyx_value *in, onyx_value *out, const op_params *params) {
    onyx_value *ins[FX_MAX_IN];
    for (int i = 0; i < n_in; i++) ins[i] = &in[i];
    return run_kernel_io(k, node, n_in, ins, 1, (onyx_value *const[]){out}, params, NULL);
}

/* Prepares kernel k for `node` with these input and output types and prepare-time params, then
 * runs it once on in[0..n_in) into one output with run-time params. */
static inline onyx_status prepare_and_run(const kernel *k, const graph_node *node, int n_in,
                                          const type_info *in_types, const type_info *out_type,
                                          const op_params *at_prepare, const op_params *at_run,
                                          onyx_value *in, onyx_value *out) {
    const type_info *in_ptrs[FX_MAX_IN] = {0};
    const tensor *values[FX_MAX_IN] = {0};
    onyx_value *ins[FX_MAX_IN];
    for (int i = 0; i < n_in; i++) {
        in_ptrs[i] = &in_types[i];
        ins[i] = &in[i];
    }
    kernel_prep prep = {.node = node, .n_in = n_in, .n_out = 1, .in_type = in_ptrs,
                        .in_value = values, .out_type = out_type, .params = at_prepare};
    void *state = NULL, *fork = NULL;
    onyx_status st = k->prepare ? k->prepare(&prep, &state) : ONYX_OK;
    if (st == ONYX_OK && k->fork) st = k->fork(state, &fork);
    if (st == ONYX_OK)
        st = run_kernel_io(k, node, n_in, ins, 1, (onyx_value *const[]){out}, at_run,
                           fork ? fork : state);
    if (fork) k->unfork(fork);
    if (state && k->release) k->release(state);
    return st;
}

static inline void fill_float(onyx_value *v, int rank, const int64_t *dims, float start) {
    assert_int_equal(value_alloc_tensor(v, ONYX_FLOAT, rank, dims), ONYX_OK);
    float *d = v->t.data;
    for (int64_t i = 0; i < v->t.numel; i++) d[i] = start + (float)i;
}

#endif

/* The TEST device: a second device that every machine has, so that placement, copies between
 * devices and fallback are exercised without an accelerator (`onyx-test-runner -d TEST`). Its
 * memory is host memory of its own, stored scrambled (each byte XOR 0xA5): a CPU kernel that
 * reads it without a copy computes garbage, and the executor's device check refuses it first. Its
 * kernels are a subset of the CPU's (elementwise math, MatMul, Gemm, Conv, BatchNormalization,
 * Softmax, Transpose, Gather, Split, Attention, and a decoder's MatMulNBits, GatherNBits, norms and
 * GroupQueryAttention), each run on unscrambled copies of its inputs (constants' copies made at
 * prepare), as a real device's kernels would run on device memory, and the
 * relabellings (Reshape, Flatten, Squeeze, Unsqueeze, Identity) that share their input's bytes,
 * as CUDA's do. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/fuse_chain.h"
#include "core/op_schema.h"
#include "kernels_cpu/cpu_kernels.h"

#define SCRAMBLE 0xA5

static void *test_alloc(size_t bytes) {
    return aligned_alloc(64, (bytes + 63) & ~(size_t)63);
}

static void scrambled_copy(void *dst, const void *src, size_t bytes) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    for (size_t i = 0; i < bytes; i++) d[i] = s[i] ^ SCRAMBLE;
}

/* The TEST device's queue, one per run context as a CUDA stream would be: it holds nothing but a
 * mark and the count of work queued on it, so that a kernel or copy handed another context's
 * queue, a freed one or none is caught. */
#define QUEUE_MARK 0x5445535451554555ull

typedef struct test_queue {
    unsigned long long mark;
    size_t queued; /* kernels and copies since the last finish */
} test_queue;

static onyx_status queue_check(void *queue, const char *what) {
    test_queue *q = queue;
    if (!q || q->mark != QUEUE_MARK)
        return onyx_error(ONYX_ERR_RUNTIME, "TEST device: %s without its run context's queue",
                          what);
    q->queued++;
    return ONYX_OK;
}

static onyx_status test_queue_create(void **out) {
    test_queue *q = malloc(sizeof *q);
    if (!q) return onyx_oom("TEST queue");
    q->mark = QUEUE_MARK;
    q->queued = 0;
    *out = q;
    return ONYX_OK;
}

static void test_queue_destroy(void *queue) {
    test_queue *q = queue;
    if (!q) return;
    q->mark = 0;
    free(q);
}

static onyx_status test_queue_finish(void *queue) {
    TRY(queue_check(queue, "finish"));
    ((test_queue *)queue)->queued = 0;
    return ONYX_OK;
}

/* Copies at prepare (uploaded constants) come without a queue; during a run, with one. */
static onyx_status test_copy(void *queue, void *dst, const void *src, size_t bytes) {
    if (queue) TRY(queue_check(queue, "copy"));
    scrambled_copy(dst, src, bytes);
    return ONYX_OK;
}

/* Within the device: the bytes as stored (scrambled stays scrambled). */
static onyx_status test_device_copy(void *queue, void *dst, const void *src, size_t bytes) {
    if (queue) TRY(queue_check(queue, "copy"));
    memmove(dst, src, bytes);
    return ONYX_OK;
}

/* Graphs: the TEST device records none (its kernels run as they are called), but says it has
 * them, so that the plans it gets are a graph device's (inputs and outputs staged in the arena,
 * graph segments) and every capture takes the executor's way back to running the steps. */
static onyx_status test_capture_begin(void *queue) {
    (void)queue;
    return onyx_error(ONYX_ERR_UNSUPPORTED, "the TEST device records no graphs");
}

static onyx_status test_capture_end(void *queue, void **graph) {
    (void)queue;
    if (graph) *graph = NULL;
    return onyx_error(ONYX_ERR_UNSUPPORTED, "the TEST device records no graphs");
}

static onyx_status test_graph_launch(void *queue, void *graph) {
    (void)queue;
    (void)graph;
    return onyx_error(ONYX_ERR_UNSUPPORTED, "the TEST device records no graphs");
}

static void test_graph_free(void *graph) { (void)graph; }

static const device_ops test_device_ops = {
    .kind = DEVICE_TEST,
    .alloc = test_alloc,
    .free = free,
    .to_host = test_copy,
    .from_host = test_copy,
    .copy = test_device_copy,
    .queue_create = test_queue_create,
    .queue_destroy = test_queue_destroy,
    .queue_finish = test_queue_finish,
    .capture_begin = test_capture_begin,
    .capture_end = test_capture_end,
    .graph_launch = test_graph_launch,
    .graph_free = test_graph_free,
};

/* ------------------------------------------------------------------ kernels */

/* The ops the TEST device runs; everything else falls back to the CPU. Those of onnxruntime-genai's
 * decoders run here as on CUDA: the int4 products and embedding, the norms, attention. */
static const struct {
    const char *domain, *op;
} test_ops[] = {
    {"", "Add"}, {"", "Sub"}, {"", "Mul"}, {"", "Div"}, {"", "Relu"}, {"", "Sigmoid"},
    {"", "Tanh"}, {"", "Exp"}, {"", "Abs"}, {"", "Neg"}, {"", "Sqrt"}, {"", "MatMul"},
    {"", "Gemm"}, {"", "Conv"}, {"", "Softmax"}, {"", "Transpose"}, {"", "Gather"},
    {"", "Split"}, {"", "Attention"}, {"", "BatchNormalization"}, {"", "Swish"},
    {"", "SimplifiedLayerNormalization"}, {"com.microsoft", "SkipSimplifiedLayerNormalization"},
    {"com.microsoft", "SkipLayerNormalization"}, {"com.microsoft", "MatMulNBits"},
    {"com.microsoft", "GroupQueryAttention"}, {"ai.onyx", "GatherNBits"},
};

/* The most inputs or outputs of the ops above (Gemm and Conv take 3, GroupQueryAttention up to 16,
 * trailing ones omitted): larger nodes stay on the CPU. */
#define TEST_MAX_IO 16

typedef struct test_state {
    const kernel *cpu;
    void *cpu_state;
    tensor *host_constants; /* unscrambled constant inputs for the CPU prepare (rep-owned data) */
    int n_constants;
    const void *host_data[TEST_MAX_IO]; /* per input: a constant's unscrambled bytes, which runs
                                           read as they are (not staged again), or NULL */
    /* a device epilogue (core/fuse_device.c): the CPU kernel runs host_node, the product's own
     * inputs, and the chain is applied to its result after it */
    int n_ops;
    fuse_op ops[FUSE_MAX_OPS];
    graph_node host_node;
} test_state;

typedef struct test_fork {
    const test_state *shared;
    void *cpu_fork;
    void *staging; /* the run's unscrambled inputs and outputs */
    size_t staging_size;
} test_fork;

static void test_release(void *state) {
    test_state *s = state;
    if (!s) return;
    if (s->cpu_state && s->cpu->release) s->cpu->release(s->cpu_state);
    free(s->host_constants);
    free(s);
}

/* Whether this device applies the chain as CUDA's kernels would: a bias per column after a
 * product, a sum after a conv or a product (after its bias), a Relu last (after a
 * BatchNormalization too); float only. */
static bool epilogue_ok(const kernel_prep *p) {
    const fuse_chain *c = p->fused;
    bool conv = !strcmp(p->node->op_type, "Conv");
    bool product = !strcmp(p->node->op_type, "MatMul") || !strcmp(p->node->op_type, "Gemm");
    if (p->out_type[0].dtype != ONYX_FLOAT || c->n < 1 || c->n > 3 || c->n_pre || c->x_scale ||
        c->attention || c->has_in_scale)
        return false;
    for (int i = 0; i < c->n; i++) {
        const fuse_op *op = &c->ops[i];
        bool first = i == 0, last = i == c->n - 1;
        bool after_bias = i == 1 && c->ops[0].kind == FUSE_SHIFT;
        bool ok = (op->kind == FUSE_SHIFT && first && product && op->input == 2) ||
                  (op->kind == FUSE_SUM && (first || (product && after_bias)) &&
                   (conv || product) && op->input == 3) ||
                  (op->kind == FUSE_RELU && last && op->alpha == 0);
        if (!ok || (op->kind != FUSE_RELU && (p->n_in <= op->input || !p->in_type[op->input])))
            return false;
    }
    return true;
}

static onyx_status make_host_copy(void *ctx, void **obj) {
    const tensor *c = ctx;
    if (!(*obj = malloc(c->nbytes ? c->nbytes : 1))) return onyx_oom("TEST kernel");
    scrambled_copy(*obj, c->data, c->nbytes);
    return ONYX_OK;
}

/* The unscrambled bytes of device constant c, shared by the rep's kernels and kept as long as it:
 * the CPU kernels key their packed weights by the data pointer, which must not be freed and then
 * reused for another constant while the rep lives (a fused step is prepared again, its first
 * state released). Keyed by the bytes too, as a device pointer may be reused. */
static onyx_status host_constant(const kernel_prep *p, const tensor *c, void **out) {
    struct {
        const void *device_data;
        size_t nbytes;
        uint64_t hash;
    } key = {c->data, c->nbytes, 1469598103934665603ull};
    const unsigned char *b = c->data;
    for (size_t i = 0; i < c->nbytes; i++) key.hash = (key.hash ^ b[i]) * 1099511628211ull;
    return kernel_shared(p, &key, sizeof key, make_host_copy, free, (void *)c, out);
}

/* The chains test_prepare applies (kernel.takes_chain): an attention chain in float that the
 * CPU's kernel takes, or an epilogue as CUDA's kernels apply it. */
static bool test_takes_chain(const kernel_prep *p) {
    if (!p->fused->attention) return epilogue_ok(p);
    if (p->out_type[0].dtype != ONYX_FLOAT || p->n_in > TEST_MAX_IO) return false;
    const kernel *cpu = device_find_kernel(p->node, p->n_in, p->in_type, DEVICE_CPU);
    return cpu && cpu->takes_chain && cpu->takes_chain(p);
}

static onyx_status test_prepare(const kernel_prep *p, void **state) {
    test_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("TEST kernel");
    onyx_status st = ONYX_OK;
    const tensor *host_values[TEST_MAX_IO] = {0};
    kernel_prep host = *p;
    if (p->fused && p->fused->attention) {
        /* an attention chain (core/fuse.c): the CPU's kernel reads it as CUDA's does, in float */
        if (p->out_type[0].dtype != ONYX_FLOAT) {
            st = onyx_error(ONYX_ERR_UNSUPPORTED, "TEST device: attention chains in float only");
            goto done;
        }
    } else if (p->fused) {
        if (!epilogue_ok(p)) {
            st = onyx_error(ONYX_ERR_UNSUPPORTED, "TEST device: this epilogue");
            goto done;
        }
        s->n_ops = p->fused->n;
        memcpy(s->ops, p->fused->ops, sizeof s->ops);
        s->host_node = *p->node;
        s->host_node.n_inputs = p->n_in; /* the product's own: those before the chain's */
        for (int i = 0; i < s->n_ops; i++)
            if (s->ops[i].kind != FUSE_RELU && s->ops[i].input < s->host_node.n_inputs)
                s->host_node.n_inputs = s->ops[i].input;
        host.node = &s->host_node;
        host.n_in = s->host_node.n_inputs;
        host.fused = NULL;
    }
    s->cpu = host.n_in <= TEST_MAX_IO ? device_supports(host.node, host.n_in, host.in_type,
                                                       DEVICE_CPU)
                                      : NULL;
    if (!s->cpu) {
        st = ONYX_ERR_UNSUPPORTED;
        goto done;
    }
    if (!(s->host_constants = calloc((size_t)p->n_in + 1, sizeof *s->host_constants))) {
        st = onyx_oom("TEST kernel");
        goto done;
    }
    for (int i = 0; i < p->n_in; i++) {
        const tensor *c = p->in_value[i];
        host_values[i] = c;
        if (!c || c->device == DEVICE_CPU) continue;
        tensor *h = &s->host_constants[s->n_constants++];
        *h = *c;
        h->device = DEVICE_CPU;
        CHECK(host_constant(p, c, &h->data));
        host_values[i] = h;
        s->host_data[i] = h->data;
    }
    if (s->cpu->prepare) {
        host.in_value = host_values;
        CHECK(s->cpu->prepare(&host, &s->cpu_state));
    }
    *state = s;
    s = NULL;
done:
    test_release(s);
    return st;
}

static onyx_status test_fork_make(const void *state, void **out) {
    const test_state *s = state;
    test_fork *f = calloc(1, sizeof *f);
    if (!f) return onyx_oom("TEST kernel");
    f->shared = s;
    if (s->cpu->fork) {
        onyx_status st = s->cpu->fork(s->cpu_state, &f->cpu_fork);
        if (st != ONYX_OK) {
            free(f);
            return st;
        }
    }
    *out = f;
    return ONYX_OK;
}

static void test_unfork(void *fork) {
    test_fork *f = fork;
    if (!f) return;
    if (f->cpu_fork) f->shared->cpu->unfork(f->cpu_fork);
    free(f->staging);
    free(f);
}

static size_t aligned64(size_t n) { return (n + 63) & ~(size_t)63; }

/* The chain of a device epilogue on the product's float result y (host copies). */
static void apply_epilogue(const test_state *s, onyx_value *const *in, tensor *y) {
    float *v = y->data;
    int64_t cols = y->rank ? y->dims[y->rank - 1] : 1;
    for (int i = 0; i < s->n_ops; i++) {
        const fuse_op *op = &s->ops[i];
        const float *x = op->kind == FUSE_RELU ? NULL : in[op->input]->t.data;
        for (int64_t e = 0; e < y->numel; e++) {
            if (op->kind == FUSE_SHIFT) v[e] += x[e % cols];
            else if (op->kind == FUSE_SUM) v[e] += x[e];
            else v[e] = v[e] < 0 ? 0 : v[e];
        }
    }
}

static onyx_status test_run(const kernel_call *c) {
    test_fork *f = c->state;
    const test_state *s = f->shared;
    TRY(queue_check(c->queue, "kernel"));
    size_t need = 0;
    for (int i = 0; i < c->n_in; i++)
        if (c->in[i] && c->in[i]->kind == ONYX_VALUE_TENSOR && !s->host_data[i])
            need += aligned64(c->in[i]->t.nbytes);
    for (int o = 0; o < c->n_out; o++)
        if (c->out[o]) need += aligned64(c->out[o]->t.nbytes);
    if (need > f->staging_size) {
        void *grown = aligned_alloc(64, need);
        if (!grown) return onyx_oom("TEST staging");
        free(f->staging);
        f->staging = grown;
        f->staging_size = need;
    }
    if (c->n_in > TEST_MAX_IO || c->n_out > TEST_MAX_IO)
        return onyx_error(ONYX_ERR_RUNTIME, "TEST device: more than %d inputs or outputs",
                          TEST_MAX_IO);
    onyx_value host_in[TEST_MAX_IO], host_out[TEST_MAX_IO];
    onyx_value *in[TEST_MAX_IO] = {0}, *out[TEST_MAX_IO] = {0};
    char *at = f->staging;
    for (int i = 0; i < c->n_in; i++) {
        if (!c->in[i]) continue;
        in[i] = c->in[i];
        if (c->in[i]->kind != ONYX_VALUE_TENSOR || c->in[i]->t.device != DEVICE_TEST) continue;
        host_in[i] = *c->in[i];
        host_in[i].t.device = DEVICE_CPU;
        host_in[i].t.owns = false;
        in[i] = &host_in[i];
        if (s->host_data[i]) { /* a constant: its prepared host copy */
            host_in[i].t.data = (void *)s->host_data[i];
            continue;
        }
        host_in[i].t.data = at;
        scrambled_copy(at, c->in[i]->t.data, c->in[i]->t.nbytes);
        at += aligned64(c->in[i]->t.nbytes);
    }
    for (int o = 0; o < c->n_out; o++) {
        if (!c->out[o]) continue;
        host_out[o] = *c->out[o];
        host_out[o].t.device = DEVICE_CPU;
        host_out[o].t.owns = false;
        host_out[o].t.data = at;
        at += aligned64(c->out[o]->t.nbytes);
        /* an output over an input's very bytes (KF_CACHE_IN_PLACE) is over its host copy too */
        for (int i = 0; i < c->n_in; i++)
            if (in[i] != c->in[i] && c->in[i]->t.data == c->out[o]->t.data &&
                c->in[i]->t.nbytes == c->out[o]->t.nbytes)
                host_out[o].t.data = in[i]->t.data;
        out[o] = &host_out[o];
    }
    kernel_call host = *c;
    host.state = f->cpu_fork ? f->cpu_fork : s->cpu_state;
    host.in = in;
    host.out = out;
    if (s->n_ops) {
        host.node = &s->host_node;
        host.n_in = s->host_node.n_inputs;
    }
    TRY(s->cpu->run(&host));
    if (s->n_ops) apply_epilogue(s, in, &out[0]->t);
    for (int o = 0; o < c->n_out; o++)
        if (out[o]) scrambled_copy(c->out[o]->t.data, out[o]->t.data, c->out[o]->t.nbytes);
    return ONYX_OK;
}

/* Numbers only, and nothing the CPU kernel would size or alias itself. */
static bool test_supports(const kernel_prep *p) {
    if (p->n_in > TEST_MAX_IO || p->n_out > TEST_MAX_IO) return false;
    const kernel *cpu = device_find_kernel(p->node, p->n_in, p->in_type, DEVICE_CPU);
    if (!cpu || (cpu->flags & (KF_DYNAMIC_OUTPUT | KF_ALIAS_INPUT0))) return false;
    for (int i = 0; i < p->n_in; i++)
        if (p->in_type[i] && !dtype_in(p->in_type[i]->dtype, DT_FLOATS | DT_INTS)) return false;
    return true;
}

/* A relabelling's output shares its input's bytes (KF_ALIAS_INPUT0): a copy of the scrambled bytes
 * only where the memory plan could not alias them. */
static onyx_status test_alias_run(const kernel_call *c) {
    TRY(queue_check(c->queue, "kernel"));
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (!x || !y) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: input or output missing",
                                    c->node->op_type);
    if (y->data == x->data || x->nbytes == 0) return ONYX_OK;
    if (y->nbytes != x->nbytes)
        return onyx_error(ONYX_ERR_SHAPE, "%s: cannot view %zu bytes as %zu bytes",
                          c->node->op_type, x->nbytes, y->nbytes);
    memcpy(y->data, x->data, x->nbytes);
    return ONYX_OK;
}

/* The relabellings, their shape or axes input (1) read on the host. */
static const kernel test_alias_kernels[] = {
    {"", "Reshape", 1, 25, DEVICE_TEST, DT_NUMERIC, KF_ALIAS_INPUT0, NULL, test_alias_run, NULL,
     NULL, NULL, NULL, 1u << 1, NULL},
    {"", "Flatten", 1, 25, DEVICE_TEST, DT_NUMERIC, KF_ALIAS_INPUT0, NULL, test_alias_run, NULL,
     NULL, NULL, NULL, 0, NULL},
    {"", "Squeeze", 1, 25, DEVICE_TEST, DT_NUMERIC, KF_ALIAS_INPUT0, NULL, test_alias_run, NULL,
     NULL, NULL, NULL, 1u << 1, NULL},
    {"", "Unsqueeze", 1, 25, DEVICE_TEST, DT_NUMERIC, KF_ALIAS_INPUT0, NULL, test_alias_run, NULL,
     NULL, NULL, NULL, 1u << 1, NULL},
    {"", "Identity", 1, 25, DEVICE_TEST, DT_NUMERIC, KF_ALIAS_INPUT0, NULL, test_alias_run, NULL,
     NULL, NULL, NULL, 0, NULL},
};
#define N_ALIAS (sizeof test_alias_kernels / sizeof test_alias_kernels[0])

static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static kernel *table;
static size_t table_count;

static bool is_gqa(const kernel *k) {
    return !strcmp(k->domain, "com.microsoft") && !strcmp(k->op_type, "GroupQueryAttention");
}

static bool is_test_op(const kernel *k) {
    for (size_t i = 0; i < sizeof test_ops / sizeof test_ops[0]; i++)
        if (!strcmp(k->domain, test_ops[i].domain) && !strcmp(k->op_type, test_ops[i].op))
            return true;
    return false;
}

/* The inputs a TEST kernel reads on the host, as CUDA's do: those that size its outputs (Split's
 * sizes; GroupQueryAttention's seqlens_k and total_sequence_length), so that inference at run
 * reads their values. */
static unsigned host_inputs(const kernel *k) {
    if (is_gqa(k)) return (1u << 5) | (1u << 6);
    return !strcmp(k->op_type, "Split") ? 1u << 1 : 0;
}

/* The CPU table's entries for the TEST ops, with the TEST device's wrappers. Every one reads its
 * sizes at run (KF_RUN_SHAPES: they are the CPU's kernels), so the device takes nodes whose shapes
 * only the run knows, and the conformance suite on TEST runs the executor's device values sized
 * per run wherever a shape follows from a value; GroupQueryAttention also appends its present in
 * place where the caller binds it over past (KF_CACHE_IN_PLACE), as CUDA's does. */
static void build_table(void) {
    size_t n;
    const kernel *cpu = cpu_kernel_table(&n);
    kernel *t = calloc(n + N_ALIAS, sizeof *t);
    if (!t) return; /* no TEST kernels: every node falls back to the CPU */
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_test_op(&cpu[i])) continue;
        t[count] = cpu[i];
        t[count].device = DEVICE_TEST;
        /* no post-ops, no blocked layouts, no in-place outputs (but a cache bound over its
         * past) on this device; products take device epilogues and outputs may be views, as on
         * CUDA (a view's bytes are written again with the same values) */
        bool epilogue = !strcmp(cpu[i].op_type, "Conv") || !strcmp(cpu[i].op_type, "MatMul") ||
                        !strcmp(cpu[i].op_type, "Gemm") ||
                        !strcmp(cpu[i].op_type, "BatchNormalization");
        t[count].flags = (epilogue ? KF_DEVICE_EPILOGUE : 0) | (cpu[i].flags & KF_VIEW) |
                         KF_RUN_SHAPES | (is_gqa(&cpu[i]) ? cpu[i].flags & KF_CACHE_IN_PLACE : 0);
        t[count].host_inputs = host_inputs(&cpu[i]);
        t[count].prepare = test_prepare;
        t[count].run = test_run;
        t[count].release = test_release;
        t[count].fork = test_fork_make;
        t[count].unfork = test_unfork;
        t[count].supports = test_supports;
        t[count].takes_chain =
            epilogue || !strcmp(cpu[i].op_type, "Attention") ? test_takes_chain : NULL;
        count++;
    }
    for (size_t i = 0; i < N_ALIAS; i++) t[count++] = test_alias_kernels[i];
    table = t;
    table_count = count;
}

static const kernel *test_kernel_table(size_t *count) {
    pthread_once(&table_once, build_table);
    *count = table_count;
    return table;
}

static bool test_usable(int index) { return index == 0; }

static const device_ops *test_memory(int index) { return index == 0 ? &test_device_ops : NULL; }

/* Its kernels are the CPU's run on copies, so float16 computes in float as on the CPU; no opaque
 * layouts (they would need the CPU's conv kernels on this device's memory). */
const device_entry test_device_entry = {
    .kind = DEVICE_TEST,
    .name = "TEST",
    .float16_as_float = true,
    .usable = test_usable,
    .memory = test_memory,
    .kernels = test_kernel_table,
};

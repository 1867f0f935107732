/* Micro-benchmark (not a test): a binary Add and a full ReduceSum over 16M floats through a
 * prepared rep with one thread per core, next to a memcpy of the same bytes.
 *   build/microbench [elements] [repeats] [threads (0: all cores)] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "onnx.pb-c.h"
#include "onyx.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t, int n) {
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return t[n / 2];
}

/* A one-node model: op(X[, Y]) -> Z over float vectors of n elements; reduce: Z is a scalar.
 * chain: op's result T goes on into ReduceSum(T) -> Z, so that op writes into the rep's arena
 * instead of a fresh output buffer (what the kernel costs without the output allocation). */
static uint8_t *model_bytes(const char *op, int n_in, int64_t n, int reduce, int chain,
                            size_t *size) {
    Onnx__ModelProto m;
    Onnx__GraphProto g;
    Onnx__OperatorSetIdProto os, *osp[1] = {&os};
    Onnx__NodeProto node, sum, *nodes[2] = {&node, &sum};
    Onnx__ValueInfoProto vi[3], *ins[2] = {&vi[0], &vi[1]}, *outs[1] = {&vi[2]};
    Onnx__TypeProto tp[3];
    Onnx__TypeProto__Tensor tt[3];
    Onnx__TensorShapeProto sh[3];
    Onnx__TensorShapeProto__Dimension dim[3], *dimp[3][1];
    Onnx__AttributeProto keep, *attrs[1] = {&keep};
    char *in_names[2] = {"X", "Y"}, *out_names[1] = {"Z"}, *mid[1] = {"T"};
    onnx__model_proto__init(&m);
    onnx__graph_proto__init(&g);
    onnx__operator_set_id_proto__init(&os);
    onnx__node_proto__init(&node);
    os.domain = "";
    os.has_version = 1;
    os.version = 18;
    m.has_ir_version = 1;
    m.ir_version = 8;
    m.n_opset_import = 1;
    m.opset_import = osp;
    m.graph = &g;
    g.name = "bench";
    node.op_type = (char *)op;
    node.n_input = (size_t)n_in;
    node.input = in_names;
    node.n_output = 1;
    node.output = chain ? mid : out_names;
    if (reduce) {
        onnx__attribute_proto__init(&keep);
        keep.name = "keepdims";
        keep.has_type = 1;
        keep.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        keep.has_i = 1;
        keep.i = 0;
        node.n_attribute = 1;
        node.attribute = attrs;
    }
    g.n_node = chain ? 2 : 1;
    g.node = nodes;
    if (chain) {
        onnx__node_proto__init(&sum);
        onnx__attribute_proto__init(&keep);
        keep.name = "keepdims";
        keep.has_type = 1;
        keep.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        keep.has_i = 1;
        keep.i = 0;
        sum.op_type = "ReduceSum";
        sum.n_input = 1;
        sum.input = mid;
        sum.n_output = 1;
        sum.output = out_names;
        sum.n_attribute = 1;
        sum.attribute = attrs;
        reduce = 1;
    }
    for (int k = 0; k < 3; k++) {
        onnx__value_info_proto__init(&vi[k]);
        onnx__type_proto__init(&tp[k]);
        onnx__type_proto__tensor__init(&tt[k]);
        onnx__tensor_shape_proto__init(&sh[k]);
        onnx__tensor_shape_proto__dimension__init(&dim[k]);
        vi[k].name = k < 2 ? in_names[k] : out_names[0];
        vi[k].type = &tp[k];
        tp[k].value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
        tp[k].tensor_type = &tt[k];
        tt[k].has_elem_type = 1;
        tt[k].elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
        tt[k].shape = &sh[k];
        dim[k].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dim[k].dim_value = n;
        dimp[k][0] = &dim[k];
        sh[k].n_dim = (k == 2 && reduce) ? 0 : 1;
        sh[k].dim = dimp[k];
    }
    g.n_input = (size_t)n_in;
    g.input = ins;
    g.n_output = 1;
    g.output = outs;
    *size = onnx__model_proto__get_packed_size(&m);
    uint8_t *buf = malloc(*size);
    if (buf) onnx__model_proto__pack(&m, buf);
    return buf;
}

/* Median seconds of `reps` runs of a one-node model on the given inputs. */
static int bench_threads;

static int bench_op(const char *op, int n_in, int reduce, int chain, int64_t n, onyx_value **in,
                    int reps, double *out_s) {
    size_t size;
    uint8_t *bytes = model_bytes(op, n_in, n, reduce, chain, &size);
    onyx_model *m = NULL;
    onyx_rep *rep = NULL;
    double *t = calloc((size_t)reps, sizeof *t);
    int rc = 1;
    if (!bytes || !t || onyx_model_load_buffer(bytes, size, NULL, &m) != ONYX_OK) goto done;
    onyx_session_options *o = NULL;
    if (onyx_session_options_create(&o) != ONYX_OK) goto done;
    onyx_status st = onyx_session_options_set_threads(o, bench_threads);
    if (st == ONYX_OK) st = onyx_prepare_session(m, o, &rep);
    onyx_session_options_free(o);
    if (st != ONYX_OK) goto done;
    for (int r = -2; r < reps; r++) { /* two warm-up runs */
        size_t n_out;
        onyx_value **outs;
        double t0 = now();
        if (onyx_rep_run(rep, (size_t)n_in, NULL, (const onyx_value *const *)in, &n_out, &outs) !=
            ONYX_OK)
            goto done;
        double dt = now() - t0;
        onyx_values_free(outs, n_out);
        if (r >= 0) t[r] = dt;
    }
    *out_s = median(t, reps);
    rc = 0;
done:
    if (rc) fprintf(stderr, "%s: %s\n", op, onyx_last_error());
    onyx_rep_free(rep);
    onyx_model_free(m);
    free(bytes);
    free(t);
    return rc;
}

static double bench_memcpy(void *dst, const void *src, size_t bytes, int reps) {
    double *t = calloc((size_t)reps, sizeof *t), r = 0;
    if (!t) return 0;
    memcpy(dst, src, bytes); /* fault the pages in */
    for (int i = 0; i < reps; i++) {
        double t0 = now();
        memcpy(dst, src, bytes);
        t[i] = now() - t0;
    }
    r = median(t, reps);
    free(t);
    return r;
}

/* What a fresh zeroed output costs by itself: the executor hands each run's graph outputs to the
 * caller in new buffers (page faults on first touch, then unmapped on free). */
static double bench_fresh(size_t bytes, int reps) {
    double *t = calloc((size_t)reps, sizeof *t), r = 0;
    if (!t) return 0;
    for (int i = 0; i < reps; i++) {
        double t0 = now();
        void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
        if (p) explicit_bzero(p, bytes); /* a memset before free may be optimized away */
        free(p);
        t[i] = now() - t0;
    }
    r = median(t, reps);
    free(t);
    return r;
}

int main(int argc, char **argv) {
    int64_t n = argc > 1 ? atoll(argv[1]) : 16 * 1024 * 1024;
    int reps = argc > 2 ? atoi(argv[2]) : 21;
    bench_threads = argc > 3 ? atoi(argv[3]) : 0;
    if (n <= 0 || reps <= 0) return 2;
    size_t bytes = (size_t)n * sizeof(float);
    float *x = malloc(bytes), *y = malloc(bytes), *z = malloc(bytes);
    if (!x || !y || !z) return 1;
    for (int64_t i = 0; i < n; i++) {
        x[i] = (float)(i % 1000) * 0.001f;
        y[i] = 1.0f - x[i];
    }
    const int64_t dims[1] = {n};
    onyx_value *in[2] = {NULL, NULL};
    if (onyx_value_wrap_tensor(ONYX_FLOAT, 1, dims, x, bytes, &in[0]) != ONYX_OK ||
        onyx_value_wrap_tensor(ONYX_FLOAT, 1, dims, y, bytes, &in[1]) != ONYX_OK)
        return 1;
    double t_copy = bench_memcpy(z, x, bytes, reps), t_add = 0, t_sum = 0, t_chain = 0;
    double t_fresh = bench_fresh(bytes, reps);
    int rc = bench_op("Add", 2, 0, 0, n, in, reps, &t_add) |
             bench_op("ReduceSum", 1, 1, 0, n, in, reps, &t_sum) |
             bench_op("Add", 2, 0, 1, n, in, reps, &t_chain);
    printf("%lld floats (%.1f MB), %d threads, median of %d runs\n", (long long)n,
           (double)bytes / 1e6,
           bench_threads > 0 ? bench_threads : (int)sysconf(_SC_NPROCESSORS_ONLN), reps);
    printf("  memcpy      %8.3f ms  %6.2f GB/s\n", t_copy * 1e3, (double)bytes / t_copy / 1e9);
    if (!rc) {
        /* Add moves 3 arrays (2 read, 1 written) where memcpy moves 2: the ratio is per call */
        printf("  Add         %8.3f ms  ratio to memcpy %.2f\n", t_add * 1e3, t_add / t_copy);
        printf("  ReduceSum   %8.3f ms  ratio to memcpy %.2f\n", t_sum * 1e3, t_sum / t_copy);
        /* the same Add writing into the arena: ReduceSum(Add(X, Y)) less ReduceSum alone */
        printf("  Add kernel  %8.3f ms  ratio to memcpy %.2f (output in the arena, not a fresh "
               "buffer)\n",
               (t_chain - t_sum) * 1e3, (t_chain - t_sum) / t_copy);
        printf("  fresh output buffer (aligned_alloc + memset + free) %8.3f ms\n", t_fresh * 1e3);
    }
    onyx_value_free(in[0]);
    onyx_value_free(in[1]);
    free(x);
    free(y);
    free(z);
    return rc;
}

/* The CUDA device from the outside. Everywhere: CUDA is usable exactly when onyx says so, and a
 * session asking for an unusable CUDA is refused with a clear error. Then, on the device under
 * test (CUDA with a GPU; without one the TEST device, which keeps its memory apart from the
 * host's like a GPU, so that these tests' own logic runs in every build): models run there (with
 * fallback to the CPU) give the CPU's outputs, nodes are placed there, runs from many threads on
 * one rep stay right, and a bad input after device runs is refused without harm.
 * tools/cuda/check.sh runs them on a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onyx.h"

/* The device under test and the priority list that puts it first. */
static const char *device_under_test(const char **devices) {
    bool cuda = onyx_supports_device("CUDA");
    static bool told;
    if (!cuda && !told) print_message("no usable GPU here: the TEST device stands in for CUDA\n");
    told = true;
    *devices = cuda ? "CUDA,CPU" : "TEST,CPU";
    return cuda ? "CUDA" : "TEST";
}

typedef struct placed {
    pthread_mutex_t lock;
    const char *device;
    int on_device; /* nodes the placement log put on the device under test */
} placed;

static void count_placement(void *user, onyx_log_level level, const char *message) {
    (void)level;
    placed *p = user;
    const char *on = strrchr(message, ' ');
    if (strstr(message, "placement:") && on && on - message >= 3 && !strncmp(on - 3, " on", 3) &&
        !strcmp(on + 1, p->device)) {
        pthread_mutex_lock(&p->lock);
        p->on_device++;
        pthread_mutex_unlock(&p->lock);
    }
}

static onyx_rep *prepare_on(const onyx_model *m, const char *devices, placed *log) {
    onyx_session_options *o = NULL;
    onyx_rep *rep = NULL;
    assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
    assert_int_equal(onyx_session_options_set_devices(o, devices), ONYX_OK);
    assert_int_equal(onyx_session_options_set_threads(o, 2), ONYX_OK);
    if (log)
        assert_int_equal(onyx_session_options_set_log(o, ONYX_LOG_VERBOSE, count_placement, log),
                         ONYX_OK);
    onyx_status st = onyx_prepare_session(m, o, &rep);
    onyx_session_options_free(o);
    if (st != ONYX_OK) fail_msg("prepare on %s: %s", devices, onyx_last_error());
    return rep;
}

static void test_unusable_cuda_is_refused(void **state) {
    (void)state;
    if (onyx_supports_device("CUDA")) {
        assert_true(onyx_supports_device("CUDA:0"));
        skip();
    }
    onyx_model *m = NULL;
    onyx_session_options *o = NULL;
    onyx_rep *rep = NULL;
    assert_int_equal(onyx_model_load_file("tests/models/example.onnx", &m), ONYX_OK);
    assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
    assert_int_equal(onyx_session_options_set_devices(o, "CUDA,CPU"), ONYX_OK);
    assert_int_equal(onyx_prepare_session(m, o, &rep), ONYX_ERR_DEVICE);
    assert_null(rep);
    assert_non_null(strstr(onyx_last_error(), "CUDA"));
    onyx_session_options_free(o);
    onyx_model_free(m);
}

/* Inputs for a model: floats in [-1, 1), integer inputs in [0, 10) (token ids of any vocabulary),
 * 1 for masks and [0, 2) for token types; an unknown first dim (the batch) is `dyn`, other unknown
 * dims (image sides, sequence lengths) 16 * `dyn`: each `dyn` a new shape that convs can take. */
static onyx_value **make_inputs(const onyx_model *m, int64_t dyn, size_t *count) {
    size_t n = onyx_model_input_count(m);
    onyx_value **in = calloc(n, sizeof *in);
    assert_non_null(in);
    uint32_t seed = 12345;
    for (size_t i = 0; i < n; i++) {
        onyx_io_info info;
        assert_int_equal(onyx_model_input(m, i, &info), ONYX_OK);
        assert_true(info.rank >= 0 && info.rank <= 8);
        int64_t dims[8], numel = 1;
        for (int64_t d = 0; d < info.rank; d++) {
            dims[d] = info.dims[d] >= 0 ? info.dims[d] : d == 0 ? dyn : 16 * dyn;
            numel *= dims[d];
        }
        size_t elem = onyx_dtype_bits(info.dtype) / 8;
        void *data = malloc((size_t)numel * elem + 1);
        assert_non_null(data);
        bool mask = strstr(info.name, "mask") != NULL;
        int64_t range = strstr(info.name, "type") ? 2 : 10;
        for (int64_t k = 0; k < numel; k++) {
            seed = seed * 1664525u + 1013904223u;
            int64_t id = mask ? 1 : (int64_t)((seed >> 16) % (uint32_t)range);
            switch (info.dtype) {
            case ONYX_FLOAT: ((float *)data)[k] = (float)(seed >> 8) / 8388608.0f - 1.0f; break;
            case ONYX_INT64: ((int64_t *)data)[k] = id; break;
            case ONYX_INT32: ((int32_t *)data)[k] = (int32_t)id; break;
            default: fail_msg("input %s: type %s not filled", info.name, onyx_dtype_name(info.dtype));
            }
        }
        assert_int_equal(onyx_value_new_tensor(info.dtype, (size_t)info.rank, dims, data,
                                               (size_t)numel * elem, &in[i]),
                         ONYX_OK);
        free(data);
    }
    *count = n;
    return in;
}

/* Float outputs within 1e-3 relative (cuBLAS and cuDNN sum in other orders), others exact. */
static void assert_same_outputs(const char *model, onyx_value **a, onyx_value **b, size_t n) {
    for (size_t o = 0; o < n; o++) {
        assert_int_equal(onyx_tensor_dtype(a[o]), onyx_tensor_dtype(b[o]));
        assert_int_equal(onyx_tensor_numel(a[o]), onyx_tensor_numel(b[o]));
        int64_t numel = onyx_tensor_numel(a[o]);
        if (onyx_tensor_dtype(a[o]) != ONYX_FLOAT) {
            assert_memory_equal(onyx_tensor_data(a[o]), onyx_tensor_data(b[o]),
                                onyx_tensor_nbytes(a[o]));
            continue;
        }
        const float *x = onyx_tensor_data(a[o]), *y = onyx_tensor_data(b[o]);
        double scale = 0;
        for (int64_t k = 0; k < numel; k++) scale = fmax(scale, fabs(x[k]));
        for (int64_t k = 0; k < numel; k++)
            if (!(fabs(x[k] - y[k]) <= 1e-5 + 1e-3 * scale))
                fail_msg("%s: output %zu element %lld: CPU %g, CUDA %g", model, o, (long long)k,
                         x[k], y[k]);
    }
}

static void run_checked(onyx_rep *rep, onyx_value **in, size_t n_in, size_t *n_out,
                        onyx_value ***out) {
    onyx_status st = onyx_rep_run(rep, n_in, NULL, (const onyx_value *const *)in, n_out, out);
    if (st != ONYX_OK) fail_msg("run: %s", onyx_last_error());
}

static const char *const models[] = {
    "tests/models/example.onnx",         "tests/models/concurrency.onnx",
    "tests/models/activation_patterns.onnx", "tests/models/tiny/tiny_cnn.onnx",
    "tests/models/tiny/tiny_cnn.dynamo.onnx", "tests/models/tiny/tiny_vit.onnx",
    "tests/models/tiny/tiny_bert.onnx",  "tests/models/tiny/tiny_bert.dynamo.onnx",
};

static void test_models_match_cpu(void **state) {
    (void)state;
    const char *devices, *device = device_under_test(&devices);
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        onyx_model *m = NULL;
        assert_int_equal(onyx_model_load_file(models[i], &m), ONYX_OK);
        placed log = {.lock = PTHREAD_MUTEX_INITIALIZER, .device = device};
        onyx_rep *cpu = prepare_on(m, "CPU", NULL), *dev = prepare_on(m, devices, &log);
        for (int64_t batch = 1; batch <= 2; batch++) { /* a second shape: a second plan */
            size_t n_in, n_a, n_b;
            onyx_value **in = make_inputs(m, batch, &n_in), **a = NULL, **b = NULL;
            run_checked(cpu, in, n_in, &n_a, &a);
            for (int r = 0; r < 3; r++) { /* the same plan and context again */
                run_checked(dev, in, n_in, &n_b, &b);
                assert_int_equal(n_a, n_b);
                assert_same_outputs(models[i], a, b, n_a);
                onyx_values_free(b, n_b);
            }
            onyx_values_free(a, n_a);
            onyx_values_free(in, n_in); /* the values and their array */
        }
        /* counted over both plans (symbolic dims are placed when a run binds them) */
        print_message("%s: %d node placements on %s\n", models[i], log.on_device, device);
        assert_true(log.on_device > 0);
        onyx_rep_free(dev);
        onyx_rep_free(cpu);
        onyx_model_free(m);
    }
}

#define THREADS 6
#define RUNS 40

typedef struct worker {
    onyx_rep *rep;
    onyx_value **in;
    size_t n_in;
    onyx_value **expected;
    int wrong, failed;
} worker;

static void *work(void *arg) {
    worker *w = arg;
    for (int r = 0; r < RUNS; r++) {
        size_t n_out = 0;
        onyx_value **out = NULL;
        if (onyx_rep_run(w->rep, w->n_in, NULL, (const onyx_value *const *)w->in, &n_out, &out) !=
            ONYX_OK) {
            w->failed++;
            continue;
        }
        const float *x = onyx_tensor_data(w->expected[0]), *y = onyx_tensor_data(out[0]);
        for (int64_t k = 0; k < onyx_tensor_numel(out[0]); k++)
            if (fabsf(x[k] - y[k]) > 1e-5f) { /* the same GPU computation: the same result */
                w->wrong++;
                break;
            }
        onyx_values_free(out, n_out);
    }
    return NULL;
}

/* Each run context has its own stream, arena and handles: concurrent runs must not mix them. */
static void test_concurrent_runs(void **state) {
    (void)state;
    const char *devices;
    device_under_test(&devices);
    onyx_model *m = NULL;
    assert_int_equal(onyx_model_load_file("tests/models/tiny/tiny_cnn.onnx", &m), ONYX_OK);
    onyx_rep *dev = prepare_on(m, devices, NULL);
    size_t n_in, n_ref;
    onyx_value **in = make_inputs(m, 2, &n_in), **ref = NULL;
    run_checked(dev, in, n_in, &n_ref, &ref);
    pthread_t tid[THREADS];
    worker w[THREADS];
    for (int t = 0; t < THREADS; t++) {
        w[t] = (worker){.rep = dev, .in = in, .n_in = n_in, .expected = ref};
        assert_int_equal(pthread_create(&tid[t], NULL, work, &w[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(tid[t], NULL);
        assert_int_equal(w[t].failed, 0);
        assert_int_equal(w[t].wrong, 0);
    }
    onyx_values_free(ref, n_ref);
    onyx_values_free(in, n_in);
    onyx_rep_free(dev);
    onyx_model_free(m);
}

/* A wrong input after CUDA runs: a clear error, and the rep still runs right after it. */
static void test_bad_input_after_runs(void **state) {
    (void)state;
    const char *devices;
    device_under_test(&devices);
    onyx_model *m = NULL;
    assert_int_equal(onyx_model_load_file("tests/models/tiny/tiny_cnn.onnx", &m), ONYX_OK);
    onyx_rep *dev = prepare_on(m, devices, NULL);
    size_t n_in, n_out;
    onyx_value **in = make_inputs(m, 1, &n_in), **out = NULL;
    run_checked(dev, in, n_in, &n_out, &out);
    onyx_values_free(out, n_out);
    onyx_value *wrong = NULL;
    int64_t dims[1] = {3};
    const int64_t ids[3] = {1, 2, 3};
    assert_int_equal(onyx_value_new_tensor(ONYX_INT64, 1, dims, ids, sizeof ids, &wrong), ONYX_OK);
    const onyx_value *bad[1] = {wrong};
    assert_int_not_equal(onyx_rep_run(dev, 1, NULL, bad, &n_out, &out), ONYX_OK);
    assert_true(strlen(onyx_last_error()) > 0);
    run_checked(dev, in, n_in, &n_out, &out);
    onyx_values_free(out, n_out);
    onyx_value_free(wrong);
    onyx_values_free(in, n_in);
    onyx_rep_free(dev);
    onyx_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unusable_cuda_is_refused),
        cmocka_unit_test(test_models_match_cpu),
        cmocka_unit_test(test_concurrent_runs),
        cmocka_unit_test(test_bad_input_after_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

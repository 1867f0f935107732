/* One rep run from many threads at once, with mixed input shapes (so plans are built while other
 * runs go on), every output checked against the same run made alone; and the run options that
 * stop a run: deadline, terminate from another thread, iteration cap. The many-threads test runs
 * a CNN (on the CPU, and split with the TEST device), attention spelled out (one fused step per
 * plan) and convolutions by Winograd. Built a second time under ThreadSanitizer by `make tsan`.
 * Models: tests/models/gen_run_models.py. */
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
#include <time.h>
#include <unistd.h>

#include "onyx.h"

#ifndef CONCURRENCY_THREADS
#define CONCURRENCY_THREADS 8
#endif
#ifndef CONCURRENCY_RUNS
#define CONCURRENCY_RUNS 200
#endif

#define N_SHAPES 5
#define N_CLASSES 5

/* [batch, 3, height, width] of the inputs the threads pick from. */
static const int64_t shapes[N_SHAPES][4] = {
    {1, 3, 8, 8}, {2, 3, 8, 8}, {3, 3, 16, 16}, {1, 3, 12, 20}, {4, 3, 6, 10},
};

typedef struct fixture {
    onyx_rep *rep;
    float *input[N_SHAPES];
    onyx_value *value[N_SHAPES];
    float *expected[N_SHAPES]; /* the outputs of each input run alone */
} fixture;

static int64_t numel4(const int64_t *d) { return d[0] * d[1] * d[2] * d[3]; }

/* Inputs differ per shape and are fixed, so each has one right answer. */
static void fill(float *x, int64_t n, uint32_t seed) {
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
}

static onyx_rep *prepare_on(const char *path, int threads, const char *devices) {
    onyx_model *m = NULL;
    onyx_rep *rep = NULL;
    onyx_session_options *o = NULL;
    assert_int_equal(onyx_model_load_file(path, &m), ONYX_OK);
    assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
    assert_int_equal(onyx_session_options_set_threads(o, threads), ONYX_OK);
    assert_int_equal(onyx_session_options_set_devices(o, devices), ONYX_OK);
    onyx_status st = onyx_prepare_session(m, o, &rep);
    if (st != ONYX_OK) fail_msg("prepare: %s", onyx_last_error());
    onyx_session_options_free(o);
    onyx_model_free(m);
    return rep;
}

static onyx_rep *prepare_file(const char *path, int threads) {
    return prepare_on(path, threads, "CPU");
}

/* The rep of `model` runs on `devices`; the references are made on the CPU alone. */
static int setup_on(void **state, const char *model, const char *devices) {
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    /* threads=1 per run: the runs themselves are the parallelism here, and one OpenMP thread per
     * run keeps the ThreadSanitizer build clear of libgomp's uninstrumented barriers */
    f->rep = prepare_on(model, 1, devices);
    for (int s = 0; s < N_SHAPES; s++) {
        int64_t n = numel4(shapes[s]);
        f->input[s] = malloc((size_t)n * sizeof(float));
        assert_non_null(f->input[s]);
        fill(f->input[s], n, 1234u + (uint32_t)s);
        assert_int_equal(onyx_value_wrap_tensor(ONYX_FLOAT, 4, shapes[s], f->input[s],
                                                (size_t)n * sizeof(float), &f->value[s]),
                         ONYX_OK);
        /* the reference: a rep of its own, run once, alone */
        onyx_rep *alone = prepare_file(model, 1);
        size_t n_out = 0;
        onyx_value **out = NULL;
        const onyx_value *in[1] = {f->value[s]};
        assert_int_equal(onyx_rep_run(alone, 1, NULL, in, &n_out, &out), ONYX_OK);
        assert_int_equal(n_out, 1);
        assert_int_equal(onyx_tensor_numel(out[0]), shapes[s][0] * N_CLASSES);
        size_t bytes = onyx_tensor_nbytes(out[0]);
        f->expected[s] = malloc(bytes);
        assert_non_null(f->expected[s]);
        memcpy(f->expected[s], onyx_tensor_data(out[0]), bytes);
        onyx_values_free(out, n_out);
        onyx_rep_free(alone);
    }
    *state = f;
    return 0;
}

static int setup(void **state) { return setup_on(state, "tests/models/concurrency.onnx", "CPU"); }

/* Conv, MatMul and the elementwise steps on the TEST device, the rest on the CPU: each run
 * context has an arena per device and the copy steps between them. */
static int setup_test_device(void **state) {
    return setup_on(state, "tests/models/concurrency.onnx", "TEST,CPU");
}

/* Attention spelled out, which each plan runs as one fused Attention step (its scores in the
 * run context's scratch) */
static int setup_attention(void **state) {
    return setup_on(state, "tests/models/attention_concurrency.onnx", "CPU");
}

/* Two 3x3 convs that the larger shapes' plans run by Winograd, the smaller ones' by oneDNN */
static int setup_winograd(void **state) {
    return setup_on(state, "tests/models/winograd_concurrency.onnx", "CPU");
}

static int teardown(void **state) {
    fixture *f = *state;
    for (int s = 0; s < N_SHAPES; s++) {
        onyx_value_free(f->value[s]);
        free(f->input[s]);
        free(f->expected[s]);
    }
    onyx_rep_free(f->rep);
    free(f);
    return 0;
}

typedef struct worker {
    fixture *f;
    unsigned seed;
    int wrong, failed;     /* outputs that differ from the reference; runs that failed */
    char first_error[256];
} worker;

static bool same_output(const onyx_value *out, const float *expected, int64_t n) {
    if (onyx_tensor_dtype(out) != ONYX_FLOAT || onyx_tensor_numel(out) != n) return false;
    const float *got = onyx_tensor_data(out);
    for (int64_t i = 0; i < n; i++)
        if (fabsf(got[i] - expected[i]) > 1e-6f + 1e-5f * fabsf(expected[i])) return false;
    return true;
}

static void *work(void *arg) {
    worker *w = arg;
    for (int r = 0; r < CONCURRENCY_RUNS; r++) {
        w->seed = w->seed * 1103515245u + 12345u;
        int s = (int)((w->seed >> 16) % N_SHAPES);
        const onyx_value *in[1] = {w->f->value[s]};
        size_t n_out = 0;
        onyx_value **out = NULL;
        if (onyx_rep_run(w->f->rep, 1, NULL, in, &n_out, &out) != ONYX_OK) {
            if (!w->failed++)
                snprintf(w->first_error, sizeof w->first_error, "%s", onyx_last_error());
            continue;
        }
        if (n_out != 1 || !same_output(out[0], w->f->expected[s], shapes[s][0] * N_CLASSES))
            w->wrong++;
        onyx_values_free(out, n_out);
    }
    return NULL;
}

static void test_one_rep_many_threads(void **state) {
    fixture *f = *state;
    pthread_t tid[CONCURRENCY_THREADS];
    worker w[CONCURRENCY_THREADS];
    for (int t = 0; t < CONCURRENCY_THREADS; t++) {
        w[t] = (worker){.f = f, .seed = 77u + 31u * (unsigned)t};
        assert_int_equal(pthread_create(&tid[t], NULL, work, &w[t]), 0);
    }
    int wrong = 0, failed = 0;
    for (int t = 0; t < CONCURRENCY_THREADS; t++) {
        pthread_join(tid[t], NULL);
        if (w[t].failed) print_message("thread %d: %s\n", t, w[t].first_error);
        wrong += w[t].wrong;
        failed += w[t].failed;
    }
    assert_int_equal(failed, 0);
    assert_int_equal(wrong, 0);
}

/* More shapes than the plan cache holds (16): plans are evicted while other threads still run
 * them, and rebuilt; every output must stay right. */
#define N_EVICT_SHAPES 24
#define EVICT_THREADS 4
#define EVICT_RUNS 60

typedef struct evict_case {
    int64_t dims[4];
    float *x;
    onyx_value *value;
    float expected[N_CLASSES];
} evict_case;

typedef struct evict_worker {
    onyx_rep *rep;
    evict_case *cases;
    unsigned seed;
    int wrong, failed;
} evict_worker;

static void *evict_work(void *arg) {
    evict_worker *w = arg;
    for (int r = 0; r < EVICT_RUNS; r++) {
        w->seed = w->seed * 1103515245u + 12345u;
        evict_case *k = &w->cases[(w->seed >> 16) % N_EVICT_SHAPES];
        const onyx_value *in[1] = {k->value};
        size_t n_out = 0;
        onyx_value **out = NULL;
        if (onyx_rep_run(w->rep, 1, NULL, in, &n_out, &out) != ONYX_OK) {
            w->failed++;
            continue;
        }
        if (!same_output(out[0], k->expected, N_CLASSES)) w->wrong++;
        onyx_values_free(out, n_out);
    }
    return NULL;
}

static void test_plan_eviction_under_load(void **state) {
    (void)state;
    evict_case cases[N_EVICT_SHAPES];
    onyx_rep *alone = prepare_file("tests/models/concurrency.onnx", 1);
    for (int k = 0; k < N_EVICT_SHAPES; k++) {
        evict_case *c = &cases[k];
        int64_t d[4] = {1, 3, 4 + k % 6, 4 + k / 6};
        memcpy(c->dims, d, sizeof d);
        int64_t n = numel4(d);
        c->x = malloc((size_t)n * sizeof(float));
        assert_non_null(c->x);
        fill(c->x, n, 99u + (uint32_t)k);
        assert_int_equal(onyx_value_wrap_tensor(ONYX_FLOAT, 4, d, c->x, (size_t)n * sizeof(float),
                                                &c->value),
                         ONYX_OK);
        const onyx_value *in[1] = {c->value};
        size_t n_out = 0;
        onyx_value **out = NULL;
        assert_int_equal(onyx_rep_run(alone, 1, NULL, in, &n_out, &out), ONYX_OK);
        memcpy(c->expected, onyx_tensor_data(out[0]), sizeof c->expected);
        onyx_values_free(out, n_out);
    }
    onyx_rep_free(alone);
    onyx_rep *rep = prepare_file("tests/models/concurrency.onnx", 1);
    pthread_t tid[EVICT_THREADS];
    evict_worker w[EVICT_THREADS];
    for (int t = 0; t < EVICT_THREADS; t++) {
        w[t] = (evict_worker){.rep = rep, .cases = cases, .seed = 5u + 7u * (unsigned)t};
        assert_int_equal(pthread_create(&tid[t], NULL, evict_work, &w[t]), 0);
    }
    int wrong = 0, failed = 0;
    for (int t = 0; t < EVICT_THREADS; t++) {
        pthread_join(tid[t], NULL);
        wrong += w[t].wrong;
        failed += w[t].failed;
    }
    assert_int_equal(failed, 0);
    assert_int_equal(wrong, 0);
    onyx_rep_free(rep);
    for (int k = 0; k < N_EVICT_SHAPES; k++) {
        onyx_value_free(cases[k].value);
        free(cases[k].x);
    }
}

/* ---- run options on a Loop that never ends by itself */

typedef struct endless {
    onyx_rep *rep;
    onyx_value *in[3];
    int64_t trips, start;
    bool cond;
} endless;

static void endless_init(endless *e) {
    e->rep = prepare_file("tests/models/endless_loop.onnx", 1);
    e->trips = INT64_MAX;
    e->start = 0;
    e->cond = true;
    assert_int_equal(onyx_value_wrap_tensor(ONYX_INT64, 0, NULL, &e->trips, 8, &e->in[0]), ONYX_OK);
    assert_int_equal(onyx_value_wrap_tensor(ONYX_BOOL, 0, NULL, &e->cond, 1, &e->in[1]), ONYX_OK);
    assert_int_equal(onyx_value_wrap_tensor(ONYX_INT64, 0, NULL, &e->start, 8, &e->in[2]), ONYX_OK);
}

static void endless_free(endless *e) {
    for (int i = 0; i < 3; i++) onyx_value_free(e->in[i]);
    onyx_rep_free(e->rep);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static onyx_status run_endless(endless *e, const onyx_run_options *o, double *seconds) {
    size_t n_out = 0;
    onyx_value **out = NULL;
    double t0 = now_s();
    onyx_status st = onyx_rep_run_with_options(e->rep, o, 3, NULL, (const onyx_value *const *)e->in,
                                               &n_out, &out);
    *seconds = now_s() - t0;
    if (st == ONYX_OK) onyx_values_free(out, n_out);
    return st;
}

/* The rep must still run right afterwards: a bounded loop counts to its trip count. */
static void assert_still_usable(endless *e) {
    int64_t trips = 1000;
    onyx_value *in[3] = {NULL, e->in[1], e->in[2]};
    assert_int_equal(onyx_value_wrap_tensor(ONYX_INT64, 0, NULL, &trips, 8, &in[0]), ONYX_OK);
    size_t n_out = 0;
    onyx_value **out = NULL;
    assert_int_equal(onyx_rep_run(e->rep, 3, NULL, (const onyx_value *const *)in, &n_out, &out),
                     ONYX_OK);
    assert_int_equal(*(const int64_t *)onyx_tensor_data(out[0]), 1000);
    onyx_values_free(out, n_out);
    onyx_value_free(in[0]);
}

static void test_deadline_stops_endless_loop(void **state) {
    (void)state;
    endless e;
    endless_init(&e);
    onyx_run_options *o = NULL;
    assert_int_equal(onyx_run_options_create(&o), ONYX_OK);
    assert_int_equal(onyx_run_options_set_timeout(o, 1.0), ONYX_OK);
    double seconds;
    assert_int_equal(run_endless(&e, o, &seconds), ONYX_ERR_TIMEOUT);
    assert_non_null(strstr(onyx_last_error(), "deadline"));
    assert_true(seconds >= 1.0);
    assert_true(seconds <= 1.1);
    assert_still_usable(&e);
    onyx_run_options_free(o);
    endless_free(&e);
}

typedef struct terminator {
    onyx_run_options *o;
    double after;
} terminator;

static void *terminate_later(void *arg) {
    terminator *t = arg;
    usleep((useconds_t)(t->after * 1e6));
    onyx_run_options_set_terminate(t->o, true);
    return NULL;
}

static void test_terminate_from_another_thread(void **state) {
    (void)state;
    endless e;
    endless_init(&e);
    onyx_run_options *o = NULL;
    assert_int_equal(onyx_run_options_create(&o), ONYX_OK);
    terminator t = {o, 0.3};
    pthread_t tid;
    /* timed from before the thread exists: the thread may start sleeping before the run's own
     * clock starts, so the run alone may last a hair under 0.3 s */
    double t0 = now_s();
    assert_int_equal(pthread_create(&tid, NULL, terminate_later, &t), 0);
    double seconds;
    onyx_status st = run_endless(&e, o, &seconds);
    double since_request_thread = now_s() - t0;
    pthread_join(tid, NULL);
    assert_int_equal(st, ONYX_ERR_TERMINATED);
    assert_non_null(strstr(onyx_last_error(), "terminated"));
    assert_true(since_request_thread >= 0.3);
    assert_true(seconds <= 0.4); /* stopped within 100 ms of the request */
    /* a terminated options object stops the next run at once; cleared, it lets runs go on */
    assert_int_equal(run_endless(&e, o, &seconds), ONYX_ERR_TERMINATED);
    assert_int_equal(onyx_run_options_set_terminate(o, false), ONYX_OK);
    assert_still_usable(&e);
    onyx_run_options_free(o);
    endless_free(&e);
}

static void test_iteration_cap(void **state) {
    (void)state;
    endless e;
    endless_init(&e);
    onyx_run_options *o = NULL;
    assert_int_equal(onyx_run_options_create(&o), ONYX_OK);
    assert_int_equal(onyx_run_options_set_max_iterations(o, 5000), ONYX_OK);
    double seconds;
    assert_int_equal(run_endless(&e, o, &seconds), ONYX_ERR_LIMIT);
    assert_non_null(strstr(onyx_last_error(), "5000"));
    assert_non_null(strstr(onyx_last_error(), "endless")); /* names the node */
    assert_int_equal(onyx_run_options_set_max_iterations(o, -1), ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_run_options_set_timeout(o, -1.0), ONYX_ERR_INVALID_ARGUMENT);
    assert_still_usable(&e);
    onyx_run_options_free(o);
    endless_free(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_one_rep_many_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_rep_many_threads, setup_test_device, teardown),
        cmocka_unit_test_setup_teardown(test_one_rep_many_threads, setup_attention, teardown),
        cmocka_unit_test_setup_teardown(test_one_rep_many_threads, setup_winograd, teardown),
        cmocka_unit_test(test_plan_eviction_under_load),
        cmocka_unit_test(test_deadline_stops_endless_loop),
        cmocka_unit_test(test_terminate_from_another_thread),
        cmocka_unit_test(test_iteration_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Session and run options through the public API: devices (the TEST device, CUDA without a GPU),
 * optimization levels, the memory limit, profiling to a Chrome trace, the log callback, thread
 * counts past the CPUs (clamped), runs into the caller's buffers, and the errors of bad and absurd
 * settings. Models: tests/models/ (example.onnx, concurrency.onnx). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "onyx.h"

#define CONCURRENCY_MODEL "tests/models/concurrency.onnx"

static onyx_model *load(const char *path) {
    onyx_model *m = NULL;
    if (onyx_model_load_file(path, &m) != ONYX_OK) fail_msg("load: %s", onyx_last_error());
    return m;
}

/* One input [2,3,8,8] of fixed values. */
typedef struct input {
    float x[2 * 3 * 8 * 8];
    onyx_value *v;
} input;

static void input_init(input *in) {
    int64_t dims[4] = {2, 3, 8, 8};
    for (size_t i = 0; i < sizeof in->x / sizeof in->x[0]; i++) in->x[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    assert_int_equal(onyx_value_wrap_tensor(ONYX_FLOAT, 4, dims, in->x, sizeof in->x, &in->v), ONYX_OK);
}

/* Prepares with `o`, runs once, returns the 2x5 probabilities in out. */
static onyx_status run_with(onyx_model *m, const onyx_session_options *o, const input *in,
                            float out[10]) {
    onyx_rep *rep = NULL;
    onyx_status st = onyx_prepare_session(m, o, &rep);
    if (st != ONYX_OK) return st;
    size_t n = 0;
    onyx_value **outs = NULL;
    const onyx_value *ins[1] = {in->v};
    st = onyx_rep_run(rep, 1, NULL, ins, &n, &outs);
    if (st == ONYX_OK) {
        assert_int_equal(onyx_tensor_numel(outs[0]), 10);
        memcpy(out, onyx_tensor_data(outs[0]), 10 * sizeof(float));
        onyx_values_free(outs, n);
    }
    onyx_rep_free(rep);
    return st;
}

static void assert_close(const float *a, const float *b, int n) {
    for (int i = 0; i < n; i++)
        if (fabsf(a[i] - b[i]) > 1e-5f + 1e-4f * fabsf(b[i]))
            fail_msg("value %d: %g against %g", i, (double)a[i], (double)b[i]);
}

static void test_devices_and_levels_agree(void **state) {
    (void)state;
    onyx_model *m = load(CONCURRENCY_MODEL);
    input in;
    input_init(&in);
    float ref[10], got[10];
    assert_int_equal(run_with(m, NULL, &in, ref), ONYX_OK);
    const char *devices[] = {"TEST", "TEST,CPU", "cpu", "CPU,TEST"};
    for (size_t d = 0; d < sizeof devices / sizeof devices[0]; d++) {
        onyx_session_options *o = NULL;
        assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
        assert_int_equal(onyx_session_options_set_devices(o, devices[d]), ONYX_OK);
        assert_int_equal(run_with(m, o, &in, got), ONYX_OK);
        assert_close(got, ref, 10);
        onyx_session_options_free(o);
    }
    for (int level = ONYX_OPT_NONE; level <= ONYX_OPT_ALL; level++) {
        onyx_session_options *o = NULL;
        assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
        assert_int_equal(onyx_session_options_set_optimization(o, (onyx_optimization_level)level),
                         ONYX_OK);
        assert_int_equal(onyx_session_options_set_config(o, "optimization.blocked_layouts", "0"),
                         ONYX_OK);
        assert_int_equal(run_with(m, o, &in, got), ONYX_OK);
        assert_close(got, ref, 10);
        onyx_session_options_free(o);
    }
    assert_true(onyx_supports_device("TEST"));
    assert_int_equal(onyx_is_compatible(m, "TEST"), ONYX_OK);
    onyx_value_free(in.v);
    onyx_model_free(m);
}

/* Nodes the placement log put on each device (lines "placement: NODE on DEVICE"). */
typedef struct placements {
    int cpu, test;
} placements;

static void count_places(void *user, onyx_log_level level, const char *message) {
    (void)level;
    placements *p = user;
    if (!strstr(message, "placement:")) return;
    size_t n = strlen(message);
    if (n >= 7 && !strcmp(message + n - 7, " on CPU")) p->cpu++;
    if (n >= 8 && !strcmp(message + n - 8, " on TEST")) p->test++;
}

/* The device list is a priority order: a node goes to the first device that takes it. TEST's
 * kernels are a subset of the CPU's, so CPU,TEST puts every node on the CPU. */
static void test_device_list_is_a_priority_order(void **state) {
    (void)state;
    onyx_model *m = load(CONCURRENCY_MODEL);
    input in;
    input_init(&in);
    float out[10];
    const char *lists[] = {"CPU,TEST", "TEST,CPU", "TEST"};
    placements got[3];
    for (int d = 0; d < 3; d++) {
        onyx_session_options *o = NULL;
        got[d] = (placements){0, 0};
        assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
        assert_int_equal(onyx_session_options_set_devices(o, lists[d]), ONYX_OK);
        assert_int_equal(onyx_session_options_set_log(o, ONYX_LOG_VERBOSE, count_places, &got[d]),
                         ONYX_OK);
        assert_int_equal(run_with(m, o, &in, out), ONYX_OK); /* placed when shapes are known */
        onyx_session_options_free(o);
    }
    onyx_value_free(in.v);
    assert_true(got[0].cpu > 0);
    assert_int_equal(got[0].test, 0);
    assert_true(got[1].test > 0);
    assert_int_equal(got[1].test, got[2].test); /* the CPU is every list's last fallback */
    assert_int_equal(got[1].cpu + got[1].test, got[0].cpu);
    onyx_model_free(m);
}

static void test_bad_settings(void **state) {
    (void)state;
    onyx_session_options *o = NULL;
    assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
    assert_int_equal(onyx_session_options_set_devices(o, "GPU"), ONYX_ERR_DEVICE);
    assert_non_null(strstr(onyx_last_error(), "GPU"));
    assert_int_equal(onyx_session_options_set_devices(o, "CPU,,TEST"), ONYX_ERR_DEVICE);
    assert_int_equal(onyx_session_options_set_devices(o, ""), ONYX_ERR_DEVICE);
    assert_int_equal(onyx_session_options_set_threads(o, -1), ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_session_options_set_optimization(o, (onyx_optimization_level)7),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_session_options_set_config(o, "no.such.key", "1"),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(onyx_last_error(), "no.such.key"));
    assert_int_equal(onyx_session_options_set_config(o, "optimization.blocked_layouts", "yes"),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_session_options_set_config(o, "optimization.float16_as_float32", "2"),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_session_options_set_config(o, "optimization.bfloat16", "on"),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_session_options_set_profiling(o, ""), ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_session_options_add_example(o, "x", NULL), ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_session_options_set_threads(NULL, 1), ONYX_ERR_INVALID_ARGUMENT);

    /* CUDA without a GPU: refused at prepare, with the device named */
    onyx_model *m = load(CONCURRENCY_MODEL);
    onyx_rep *rep = NULL;
    assert_false(onyx_supports_device("CUDA"));
    assert_int_equal(onyx_session_options_set_devices(o, "CUDA:0,CPU"), ONYX_OK);
    assert_int_equal(onyx_prepare_session(m, o, &rep), ONYX_ERR_DEVICE);
    assert_non_null(strstr(onyx_last_error(), "CUDA"));
    assert_null(rep);

    /* an example naming no input */
    onyx_session_options_free(o);
    assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
    input in;
    input_init(&in);
    assert_int_equal(onyx_session_options_add_example(o, "nope", in.v), ONYX_OK);
    assert_int_equal(onyx_prepare_session(m, o, &rep), ONYX_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(onyx_last_error(), "nope"));
    onyx_value_free(in.v);
    onyx_session_options_free(o);
    onyx_model_free(m);
}

/* Whether `needle` is in the last error message. */
static void assert_error_names(const char *needle) {
    if (!strstr(onyx_last_error(), needle))
        fail_msg("error '%s' does not name '%s'", onyx_last_error(), needle);
}

/* Absurd values of every setting: an error naming what was wrong, never a crash or a setting
 * quietly dropped. */
static void test_absurd_settings(void **state) {
    (void)state;
    onyx_session_options *o = NULL;
    assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
    assert_int_equal(onyx_session_options_set_threads(o, -5), ONYX_ERR_INVALID_ARGUMENT);
    assert_error_names("threads");
    assert_error_names("-5");
    assert_int_equal(onyx_session_options_set_threads(o, INT32_MIN), ONYX_ERR_INVALID_ARGUMENT);
    /* device strings: empty, an index where none is taken, a negative one, two devices */
    const char *bad_devices[] = {"", "CPU:-1", "CPU:0", "CUDA:-1", "CUDA:", "CUDA:1x", "CUDA:99999",
                                 "CUDA:0,CUDA:1", "TEST,CUDA", "CUDA,TEST,CPU", ","};
    for (size_t i = 0; i < sizeof bad_devices / sizeof *bad_devices; i++) {
        if (onyx_session_options_set_devices(o, bad_devices[i]) != ONYX_ERR_DEVICE)
            fail_msg("devices '%s' accepted", bad_devices[i]);
        if (*bad_devices[i] && !strchr(bad_devices[i], ',')) assert_error_names(bad_devices[i]);
        assert_false(onyx_supports_device(bad_devices[i]));
    }
    assert_int_equal(onyx_session_options_set_devices(o, "CUDA:0,CUDA:1"), ONYX_ERR_DEVICE);
    assert_error_names("CUDA:1");
    assert_int_equal(onyx_session_options_set_devices(o, "TEST,CPU,TEST"), ONYX_OK);
    assert_int_equal(onyx_session_options_set_optimization(o, (onyx_optimization_level)-1),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_session_options_set_log(o, (onyx_log_level)5, NULL, NULL),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_session_options_set_log(o, (onyx_log_level)-1, NULL, NULL),
                     ONYX_ERR_INVALID_ARGUMENT);
    /* unknown keys in onyx's own namespaces, onnxruntime's too: the C API knows only its own */
    const char *bad_keys[] = {"optimization.blocked_layout",
                              "optimization.enable_gelu_approximation", "device.graph",
                              "session.use_env_allocators", ""};
    for (size_t i = 0; i < sizeof bad_keys / sizeof *bad_keys; i++) {
        if (onyx_session_options_set_config(o, bad_keys[i], "1") != ONYX_ERR_INVALID_ARGUMENT)
            fail_msg("config key '%s' accepted", bad_keys[i]);
        assert_error_names(bad_keys[i]);
        assert_error_names("optimization.blocked_layouts"); /* the known keys are listed */
    }
    assert_int_equal(onyx_session_options_set_config(o, "device.graphs", ""),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_session_options_set_config(o, "optimization.bfloat16", "01"),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_session_options_set_config(o, NULL, "1"), ONYX_ERR_INVALID_ARGUMENT);
    /* the threads' wait policy: onnxruntime's switch, and onyx's spin and doze in microseconds */
    assert_int_equal(onyx_session_options_set_config(o, "session.intra_op.allow_spinning", "0"),
                     ONYX_OK);
    assert_int_equal(onyx_session_options_set_config(o, "session.intra_op.allow_spinning", "2"),
                     ONYX_ERR_INVALID_ARGUMENT);
    const char *spin_keys[] = {"onyx.intra_op.spin_us", "onyx.intra_op.doze_us"};
    const char *bad_us[] = {"", "-1", "10000001", "1e3", "20ms", " 5", "99999999999999999999"};
    for (size_t k = 0; k < 2; k++) {
        assert_int_equal(onyx_session_options_set_config(o, spin_keys[k], "0"), ONYX_OK);
        assert_int_equal(onyx_session_options_set_config(o, spin_keys[k], "10000000"), ONYX_OK);
        for (size_t i = 0; i < sizeof bad_us / sizeof *bad_us; i++) {
            if (onyx_session_options_set_config(o, spin_keys[k], bad_us[i]) !=
                ONYX_ERR_INVALID_ARGUMENT)
                fail_msg("%s='%s' accepted", spin_keys[k], bad_us[i]);
            assert_error_names(spin_keys[k]);
        }
    }

    /* CUDA:999 parses, and is refused at prepare naming it; a trace that cannot be written is
     * refused at prepare, not lost when the rep is freed */
    onyx_model *m = load(CONCURRENCY_MODEL);
    onyx_rep *rep = NULL;
    assert_int_equal(onyx_session_options_set_devices(o, "CUDA:999"), ONYX_OK);
    assert_int_equal(onyx_prepare_session(m, o, &rep), ONYX_ERR_DEVICE);
    assert_error_names("CUDA:999");
    assert_int_equal(onyx_session_options_set_devices(o, "CPU"), ONYX_OK);
    assert_int_equal(onyx_session_options_set_profiling(o, "/nonexistent-onyx-dir/trace.json"),
                     ONYX_OK);
    assert_int_equal(onyx_prepare_session(m, o, &rep), ONYX_ERR_IO);
    assert_error_names("/nonexistent-onyx-dir/trace.json");
    assert_null(rep);
    onyx_session_options_free(o);
    onyx_model_free(m);

    /* run options */
    onyx_run_options *ro = NULL;
    assert_int_equal(onyx_run_options_create(&ro), ONYX_OK);
    const double bad_timeouts[] = {-1.0, -0.0 - 1e-9, NAN, INFINITY, -INFINITY, 1e10};
    for (size_t i = 0; i < sizeof bad_timeouts / sizeof *bad_timeouts; i++) {
        if (onyx_run_options_set_timeout(ro, bad_timeouts[i]) != ONYX_ERR_INVALID_ARGUMENT)
            fail_msg("timeout %g accepted", bad_timeouts[i]);
        assert_error_names("timeout");
    }
    assert_int_equal(onyx_run_options_set_timeout(ro, 1e9), ONYX_OK);
    assert_int_equal(onyx_run_options_set_max_iterations(ro, INT64_MIN), ONYX_ERR_INVALID_ARGUMENT);
    assert_error_names("iterations");
    assert_int_equal(onyx_run_options_set_max_iterations(ro, INT64_MAX), ONYX_OK);
    char tag[ONYX_RUN_TAG_MAX + 2];
    memset(tag, 'a', sizeof tag - 1);
    tag[sizeof tag - 1] = '\0';
    assert_int_equal(onyx_run_options_set_tag(ro, tag), ONYX_ERR_INVALID_ARGUMENT);
    assert_error_names("tag");
    tag[ONYX_RUN_TAG_MAX] = '\0';
    assert_int_equal(onyx_run_options_set_tag(ro, tag), ONYX_OK);
    assert_int_equal(onyx_run_options_set_output_device(ro, ""), ONYX_ERR_DEVICE);
    assert_int_equal(onyx_run_options_set_output_device(ro, "CPU:-1"), ONYX_ERR_DEVICE);
    assert_error_names("CPU:-1");
    onyx_run_options_free(ro);

    /* run_node: a negative opset is refused before the bytes are read */
    size_t n_out = 0;
    onyx_value **outs = NULL;
    assert_int_equal(onyx_run_node("x", 1, -1, "CPU", 0, NULL, 0, NULL, &n_out, &outs),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_error_names("opset");

    /* values: an empty device name is no device */
    float one = 1.0f;
    int64_t dims[1] = {1};
    onyx_value *v = NULL, *copy = NULL;
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, 1, dims, &one, sizeof one, &v), ONYX_OK);
    assert_int_equal(onyx_value_copy_to_device(v, "", &copy), ONYX_ERR_DEVICE);
    assert_int_equal(onyx_value_copy_to_device(v, "CUDA:999", &copy), ONYX_ERR_DEVICE);
    assert_null(copy);
    onyx_value_free(v);
}

/* Outputs asked on a GPU other than the session's: refused at run, not put on the session's GPU
 * unasked. Needs a GPU (skipped without one). */
static void test_output_device_of_another_gpu(void **state) {
    (void)state;
    if (!onyx_supports_device("CUDA")) {
        skip();
        return;
    }
    onyx_model *m = load(CONCURRENCY_MODEL);
    input in;
    input_init(&in);
    onyx_session_options *o = NULL;
    onyx_rep *rep = NULL;
    onyx_run_options *ro = NULL;
    assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
    assert_int_equal(onyx_session_options_set_devices(o, "CUDA:0"), ONYX_OK);
    assert_int_equal(onyx_prepare_session(m, o, &rep), ONYX_OK);
    assert_int_equal(onyx_run_options_create(&ro), ONYX_OK);
    assert_int_equal(onyx_run_options_set_output_device(ro, "CUDA:1"), ONYX_OK);
    size_t n = 0;
    onyx_value **outs = NULL;
    const onyx_value *ins[1] = {in.v};
    assert_int_equal(onyx_rep_run_with_options(rep, ro, 1, NULL, ins, &n, &outs), ONYX_ERR_DEVICE);
    assert_error_names("CUDA:1");
    assert_int_equal(onyx_run_options_set_output_device(ro, "CUDA:0"), ONYX_OK);
    assert_int_equal(onyx_rep_run_with_options(rep, ro, 1, NULL, ins, &n, &outs), ONYX_OK);
    onyx_values_free(outs, n);
    onyx_run_options_free(ro);
    onyx_rep_free(rep);
    onyx_session_options_free(o);
    onyx_value_free(in.v);
    onyx_model_free(m);
}

/* onyx_rep_run_into: an output written into the caller's buffer (its entry in the outputs NULL),
 * the same numbers as a plain run; a buffer over the input's own memory computed apart and copied
 * in after the run (a product written over the input it reads would be garbage); unknown names,
 * an output given twice and a buffer of another shape refused. */
static void test_run_into(void **state) {
    (void)state;
    onyx_model *m = load(CONCURRENCY_MODEL);
    input in;
    input_init(&in);
    float want[10];
    assert_int_equal(run_with(m, NULL, &in, want), ONYX_OK);
    onyx_rep *rep = NULL;
    assert_int_equal(onyx_prepare_session(m, NULL, &rep), ONYX_OK);
    onyx_io_info info;
    assert_int_equal(onyx_rep_output(rep, 0, &info), ONYX_OK);
    const char *names[2] = {info.name, info.name};
    float buf[10] = {0};
    int64_t dims[2] = {2, 5}, wrong[2] = {5, 2};
    onyx_value *t = NULL, *t2 = NULL, *over = NULL;
    assert_int_equal(onyx_value_wrap_tensor(ONYX_FLOAT, 2, dims, buf, sizeof buf, &t), ONYX_OK);
    assert_int_equal(onyx_value_wrap_tensor(ONYX_FLOAT, 2, wrong, buf, sizeof buf, &t2), ONYX_OK);
    /* the input's first ten floats: read by the run, written after it */
    assert_int_equal(onyx_value_wrap_tensor(ONYX_FLOAT, 2, dims, in.x, 10 * sizeof(float), &over),
                     ONYX_OK);
    const onyx_value *ins[1] = {in.v};
    size_t n = 0;
    onyx_value **outs = NULL;
    onyx_value *targets[2] = {t, t};
    assert_int_equal(onyx_rep_run_into(rep, NULL, 1, NULL, ins, 1, names, targets, &n, &outs),
                     ONYX_OK);
    assert_null(outs[0]);
    assert_close(buf, want, 10);
    onyx_values_free(outs, n);
    assert_int_equal(onyx_rep_run_into(rep, NULL, 1, NULL, ins, 2, names, targets, &n, &outs),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_error_names("two targets");
    const char *unknown[1] = {"no_such_output"};
    assert_int_equal(onyx_rep_run_into(rep, NULL, 1, NULL, ins, 1, unknown, targets, &n, &outs),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_error_names("no_such_output");
    targets[0] = t2;
    assert_int_equal(onyx_rep_run_into(rep, NULL, 1, NULL, ins, 1, names, targets, &n, &outs),
                     ONYX_ERR_SHAPE);
    assert_error_names("its target is");
    targets[0] = over;
    assert_int_equal(onyx_rep_run_into(rep, NULL, 1, NULL, ins, 1, names, targets, &n, &outs),
                     ONYX_OK);
    assert_close(in.x, want, 10);
    onyx_values_free(outs, n);
    onyx_value_free(t);
    onyx_value_free(t2);
    onyx_value_free(over);
    onyx_rep_free(rep);
    onyx_value_free(in.v);
    onyx_model_free(m);
}

typedef struct clamp_log {
    int warnings; /* lines saying the thread count was clamped */
} clamp_log;

static void on_clamp(void *user, onyx_log_level level, const char *message) {
    clamp_log *l = user;
    if (level == ONYX_LOG_WARNING && strstr(message, "threads:") && strstr(message, "requested"))
        l->warnings++;
}

/* Thread counts past the CPUs run on the CPUs, with a warning: 100000 used to end in a SIGSEGV in
 * libgomp while oneDNN packed the conv's and the MatMul's constant weights at prepare. */
static void test_threads_past_the_cpus(void **state) {
    (void)state;
    onyx_model *m = load(CONCURRENCY_MODEL);
    input in;
    input_init(&in);
    float ref[10], got[10];
    onyx_session_options *o = NULL;
    assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
    assert_int_equal(onyx_session_options_set_threads(o, 1), ONYX_OK);
    assert_int_equal(run_with(m, o, &in, ref), ONYX_OK);
    const int counts[] = {100000, INT32_MAX, 4096};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        clamp_log lines = {0};
        assert_int_equal(onyx_session_options_set_threads(o, counts[c]), ONYX_OK);
        assert_int_equal(onyx_session_options_set_log(o, ONYX_LOG_WARNING, on_clamp, &lines),
                         ONYX_OK);
        assert_int_equal(run_with(m, o, &in, got), ONYX_OK);
        assert_close(got, ref, 10);
        assert_int_equal(lines.warnings, 1);
    }
    /* a count within the CPUs is no warning */
    clamp_log quiet = {0};
    assert_int_equal(onyx_session_options_set_threads(o, 1), ONYX_OK);
    assert_int_equal(onyx_session_options_set_log(o, ONYX_LOG_WARNING, on_clamp, &quiet), ONYX_OK);
    assert_int_equal(run_with(m, o, &in, got), ONYX_OK);
    assert_int_equal(quiet.warnings, 0);
    onyx_session_options_free(o);
    onyx_value_free(in.v);
    onyx_model_free(m);
}

static void test_memory_limit(void **state) {
    (void)state;
    onyx_model *m = load(CONCURRENCY_MODEL);
    input in;
    input_init(&in);
    onyx_session_options *o = NULL;
    assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
    assert_int_equal(onyx_session_options_set_memory_limit(o, 1024), ONYX_OK);
    float got[10];
    /* [2,8,8,8] floats alone are 4 KiB: the plan for this input is over the limit */
    assert_int_equal(run_with(m, o, &in, got), ONYX_ERR_NO_MEMORY);
    assert_non_null(strstr(onyx_last_error(), "limit of 1024"));
    assert_int_equal(onyx_session_options_set_memory_limit(o, 1 << 20), ONYX_OK);
    assert_int_equal(run_with(m, o, &in, got), ONYX_OK);
    onyx_session_options_free(o);
    onyx_value_free(in.v);
    onyx_model_free(m);
}

/* Counts the complete events of the trace whose line holds `needle`. */
static int count_events(const char *path, const char *needle) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[8192];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "\"ph\":\"X\"") && strstr(line, needle)) n++;
    fclose(f);
    return n;
}

typedef struct log_lines {
    int placement; /* lines saying a node went to a device */
} log_lines;

static void on_log(void *user, onyx_log_level level, const char *message) {
    log_lines *l = user;
    if (level == ONYX_LOG_VERBOSE && strstr(message, "placement:") && strstr(message, "TEST"))
        l->placement++;
}

static void test_profiling_and_log(void **state) {
    (void)state;
    char path[] = "/tmp/onyx-profile-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    onyx_model *m = load(CONCURRENCY_MODEL);
    input in;
    input_init(&in);
    onyx_session_options *o = NULL;
    log_lines lines = {0};
    assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
    assert_int_equal(onyx_session_options_set_profiling(o, path), ONYX_OK);
    assert_int_equal(onyx_session_options_set_devices(o, "TEST,CPU"), ONYX_OK);
    assert_int_equal(onyx_session_options_set_log(o, ONYX_LOG_VERBOSE, on_log, &lines), ONYX_OK);
    onyx_rep *rep = NULL;
    assert_int_equal(onyx_prepare_session(m, o, &rep), ONYX_OK);
    onyx_run_options *ro = NULL;
    assert_int_equal(onyx_run_options_create(&ro), ONYX_OK);
    assert_int_equal(onyx_run_options_set_tag(ro, "request-42"), ONYX_OK);
    const onyx_value *ins[1] = {in.v};
    for (int r = 0; r < 3; r++) {
        size_t n = 0;
        onyx_value **outs = NULL;
        assert_int_equal(onyx_rep_run_with_options(rep, ro, 1, NULL, ins, &n, &outs), ONYX_OK);
        onyx_values_free(outs, n);
    }
    /* placed when the first run planned the input's shape: conv, bias add, matmul at least */
    assert_true(lines.placement >= 3);
    const char *written = NULL;
    assert_int_equal(onyx_rep_end_profiling(rep, &written), ONYX_OK);
    assert_string_equal(written, path);
    /* one event per run and one per step of each run: conv on TEST, its copies, the loop ... */
    assert_int_equal(count_events(path, "\"name\":\"model_run\""), 3);
    assert_int_equal(count_events(path, "\"name\":\"conv_kernel_time\""), 3);
    assert_int_equal(count_events(path, "\"name\":\"loop_kernel_time\""), 3);
    assert_true(count_events(path, "\"provider\":\"TEST\"") >= 9);
    assert_true(count_events(path, "MemcpyToHost") >= 3);
    assert_int_equal(count_events(path, "\"run_tag\":\"request-42\""),
                     count_events(path, "\"ph\":\"X\""));
    assert_true(count_events(path, "\"input_type_shape\":[{\"float\":[2,3,8,8]}") >= 3);
    /* the next profile starts empty */
    assert_int_equal(onyx_rep_end_profiling(rep, NULL), ONYX_OK);
    assert_int_equal(count_events(path, "\"ph\":\"X\""), 0);
    /* a tag is escaped as a JSON string: quote, backslash and control character */
    assert_int_equal(onyx_run_options_set_tag(ro, "a\"b\\c\td"), ONYX_OK);
    size_t n_out = 0;
    onyx_value **tagged = NULL;
    assert_int_equal(onyx_rep_run_with_options(rep, ro, 1, NULL, ins, &n_out, &tagged), ONYX_OK);
    onyx_values_free(tagged, n_out);
    assert_int_equal(onyx_rep_end_profiling(rep, NULL), ONYX_OK);
    assert_true(count_events(path, "\"run_tag\":\"a\\\"b\\\\c\\u0009d\"") >= 2);
    assert_int_equal(count_events(path, "\"run_tag\":\"a\\\"b\\\\c\\u0009d\""),
                     count_events(path, "\"ph\":\"X\""));
    onyx_rep_free(rep);
    onyx_run_options_free(ro);

    /* without profiling there is nothing to end */
    assert_int_equal(onyx_prepare_session(m, NULL, &rep), ONYX_OK);
    assert_int_equal(onyx_rep_end_profiling(rep, NULL), ONYX_ERR_INVALID_ARGUMENT);
    onyx_rep_free(rep);
    onyx_session_options_free(o);
    onyx_value_free(in.v);
    onyx_model_free(m);
    unlink(path);
}

static void count_shared(void *user, onyx_log_level level, const char *message) {
    if (level == ONYX_LOG_VERBOSE && strstr(message, "shared:")) ++*(int *)user;
}

/* Weights packed for the first input shape serve every later shape: a new batch size or image
 * size plans anew but repacks nothing (the conv's reordered weights, the MatMul's packed B). */
static void test_new_shape_repacks_no_weights(void **state) {
    (void)state;
    onyx_model *m = load(CONCURRENCY_MODEL);
    onyx_session_options *o = NULL;
    int made = 0;
    assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
    assert_int_equal(onyx_session_options_set_threads(o, 1), ONYX_OK);
    assert_int_equal(onyx_session_options_set_log(o, ONYX_LOG_VERBOSE, count_shared, &made), ONYX_OK);
    onyx_rep *rep = NULL;
    assert_int_equal(onyx_prepare_session(m, o, &rep), ONYX_OK);
    static float x[4 * 3 * 8 * 8];
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = (float)(i % 13) / 13.0f;
    const int64_t shapes[3][4] = {{1, 3, 8, 8}, {4, 3, 8, 8}, {2, 3, 6, 10}};
    int after_first = 0;
    for (int k = 0; k < 3; k++) {
        onyx_value *in = NULL;
        size_t bytes = (size_t)(shapes[k][0] * shapes[k][1] * shapes[k][2] * shapes[k][3]) * 4;
        assert_int_equal(onyx_value_wrap_tensor(ONYX_FLOAT, 4, shapes[k], x, bytes, &in), ONYX_OK);
        size_t n = 0;
        onyx_value **outs = NULL;
        assert_int_equal(onyx_rep_run(rep, 1, NULL, (const onyx_value *const *)&in, &n, &outs),
                         ONYX_OK);
        onyx_values_free(outs, n);
        onyx_value_free(in);
        if (k == 0) after_first = made;
    }
    assert_true(after_first >= 1); /* the conv's reordered weights at least */
    assert_int_equal(made, after_first);
    onyx_rep_free(rep);
    onyx_session_options_free(o);
    onyx_model_free(m);
}

/* Runs activation_patterns.onnx at `level` with profiling into `trace`; outputs into out[7][32]. */
static void run_patterns(onyx_optimization_level level, const char *trace, float out[7][32]) {
    onyx_model *m = load("tests/models/activation_patterns.onnx");
    onyx_session_options *o = NULL;
    assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
    assert_int_equal(onyx_session_options_set_optimization(o, level), ONYX_OK);
    assert_int_equal(onyx_session_options_set_profiling(o, trace), ONYX_OK);
    onyx_rep *rep = NULL;
    assert_int_equal(onyx_prepare_session(m, o, &rep), ONYX_OK);
    float x[32], y[32];
    for (int i = 0; i < 32; i++) {
        x[i] = (float)(i - 16) / 4.0f; /* -4 .. 3.75: both tails of the activations */
        y[i] = (float)((i * 7) % 32 - 16) / 8.0f;
    }
    int64_t dims[2] = {2, 16};
    onyx_value *in[2];
    assert_int_equal(onyx_value_wrap_tensor(ONYX_FLOAT, 2, dims, x, sizeof x, &in[0]), ONYX_OK);
    assert_int_equal(onyx_value_wrap_tensor(ONYX_FLOAT, 2, dims, y, sizeof y, &in[1]), ONYX_OK);
    size_t n = 0;
    onyx_value **outs = NULL;
    assert_int_equal(onyx_rep_run(rep, 2, NULL, (const onyx_value *const *)in, &n, &outs), ONYX_OK);
    assert_int_equal(n, 7);
    for (size_t k = 0; k < n; k++) memcpy(out[k], onyx_tensor_data(outs[k]), 32 * sizeof(float));
    onyx_values_free(outs, n);
    assert_int_equal(onyx_rep_end_profiling(rep, NULL), ONYX_OK);
    onyx_value_free(in[0]);
    onyx_value_free(in[1]);
    onyx_rep_free(rep);
    onyx_session_options_free(o);
    onyx_model_free(m);
}

/* The spelled-out GELU and SiLU become Gelu and Swish at ONYX_OPT_ALL, with the results of the
 * ops as written; the near misses stay as they are. The three erf forms read the same x, so once
 * found they are one Gelu and two Identities of it (common subexpressions). */
static void test_activation_rewrites(void **state) {
    (void)state;
    char trace[] = "/tmp/onyx-rewrites-XXXXXX";
    int fd = mkstemp(trace);
    assert_true(fd >= 0);
    close(fd);
    float fused[7][32], plain[7][32];
    run_patterns(ONYX_OPT_BASIC, trace, plain);
    assert_int_equal(count_events(trace, "\"op_name\":\"Gelu\""), 0);
    assert_int_equal(count_events(trace, "\"op_name\":\"Erf\""), 4);
    run_patterns(ONYX_OPT_ALL, trace, fused);
    assert_int_equal(count_events(trace, "\"op_name\":\"Gelu\""), 2);     /* erf, tanh */
    assert_int_equal(count_events(trace, "\"op_name\":\"Identity\""), 2);
    assert_int_equal(count_events(trace, "\"op_name\":\"Swish\""), 1);
    assert_int_equal(count_events(trace, "\"op_name\":\"Erf\""), 1);     /* not_gelu */
    assert_int_equal(count_events(trace, "\"op_name\":\"Sigmoid\""), 1); /* not_silu */
    for (int k = 0; k < 7; k++) assert_close(fused[k], plain[k], 32);
    unlink(trace);
}

/* A Loop appending one item per iteration to a sequence (SequenceInsert) must be linear: it
 * used to copy the whole sequence each iteration (49 s for 20000 items, now ~0.05 s). */
static void test_sequence_loop_is_linear(void **state) {
    (void)state;
    onyx_model *m = load("tests/models/sequence_loop.onnx");
    onyx_rep *rep = NULL;
    assert_int_equal(onyx_prepare_session(m, NULL, &rep), ONYX_OK);
    int64_t trips = 20000;
    onyx_value *in = NULL;
    assert_int_equal(onyx_value_wrap_tensor(ONYX_INT64, 0, NULL, &trips, sizeof trips, &in), ONYX_OK);
    const onyx_value *ins[1] = {in};
    size_t n = 0;
    onyx_value **outs = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(onyx_rep_run(rep, 1, NULL, ins, &n, &outs), ONYX_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    assert_int_equal(n, 2);
    assert_int_equal(*(const int64_t *)onyx_tensor_data(outs[0]), trips);
    assert_int_equal(onyx_tensor_numel(outs[1]), trips);
    const float *v = onyx_tensor_data(outs[1]);
    for (int64_t i = 0; i < trips; i++)
        if (v[i] != (float)i) fail_msg("item %lld is %g", (long long)i, (double)v[i]);
    if (s > 1.0) fail_msg("20000 SequenceInserts in a Loop took %.2f s, expected well under 1 s", s);
    onyx_values_free(outs, n);
    onyx_value_free(in);
    onyx_rep_free(rep);
    onyx_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_devices_and_levels_agree),
        cmocka_unit_test(test_device_list_is_a_priority_order),
        cmocka_unit_test(test_bad_settings),
        cmocka_unit_test(test_absurd_settings),
        cmocka_unit_test(test_threads_past_the_cpus),
        cmocka_unit_test(test_output_device_of_another_gpu),
        cmocka_unit_test(test_run_into),
        cmocka_unit_test(test_memory_limit),
        cmocka_unit_test(test_profiling_and_log),
        cmocka_unit_test(test_activation_rewrites),
        cmocka_unit_test(test_new_shape_repacks_no_weights),
        cmocka_unit_test(test_sequence_loop_is_linear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

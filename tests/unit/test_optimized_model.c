/* onyx_session_options_set_optimized_model through the public API: the model written at prepare
 * loads again and computes the same bits (the rewritten activation patterns, and a model with its
 * initializers in an external file, written again over its own data file), and bad paths and
 * external names are refused with nothing written. The graph shapes and onnxruntime's reading
 * are checked in tests/python/test_optimized_model.py. Models: tests/models/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onyx.h"

#define PATTERNS "tests/models/activation_patterns.onnx"
#define EXAMPLE "tests/models/example.onnx"

static onyx_model *load(const char *path) {
    onyx_model *m = NULL;
    if (onyx_model_load_file(path, &m) != ONYX_OK) fail_msg("load %s: %s", path, onyx_last_error());
    return m;
}

/* A fresh folder under /tmp: its path in dir (PATH_MAX-sized). */
static void make_folder(char *dir, size_t cap) {
    snprintf(dir, cap, "/tmp/onyx-optimized-XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static bool exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* Runs `path` at `level` on inputs filled from a fixed pattern: every output's bytes, one buffer
 * each (caller frees them and `outs`), their count in *n. */
static void run(const char *path, onyx_optimization_level level, void ***outs, size_t **sizes,
                size_t *n) {
    onyx_model *m = load(path);
    onyx_session_options *o = NULL;
    assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
    assert_int_equal(onyx_session_options_set_optimization(o, level), ONYX_OK);
    onyx_rep *rep = NULL;
    if (onyx_prepare_session(m, o, &rep) != ONYX_OK)
        fail_msg("prepare %s: %s", path, onyx_last_error());
    size_t n_in = onyx_rep_input_count(rep);
    onyx_value **in = calloc(n_in, sizeof *in);
    float *data[8] = {0};
    assert_true(n_in <= 8);
    for (size_t i = 0; i < n_in; i++) {
        onyx_io_info info;
        assert_int_equal(onyx_rep_input(rep, i, &info), ONYX_OK);
        int64_t dims[8], numel = 1;
        assert_true(info.rank >= 0 && info.rank <= 8 && info.dtype == ONYX_FLOAT);
        for (int64_t d = 0; d < info.rank; d++) {
            dims[d] = info.dims[d] > 0 ? info.dims[d] : 2; /* symbolic dims: 2 */
            numel *= dims[d];
        }
        data[i] = malloc((size_t)numel * sizeof(float));
        for (int64_t k = 0; k < numel; k++)
            data[i][k] = (float)((k * 37 + (int64_t)i) % 29) / 7.0f - 2.0f;
        assert_int_equal(onyx_value_wrap_tensor(ONYX_FLOAT, (size_t)info.rank, dims, data[i],
                                                (size_t)numel * sizeof(float), &in[i]),
                         ONYX_OK);
    }
    onyx_value **res = NULL;
    assert_int_equal(onyx_rep_run(rep, n_in, NULL, (const onyx_value *const *)in, n, &res),
                     ONYX_OK);
    *outs = calloc(*n, sizeof **outs);
    *sizes = calloc(*n, sizeof **sizes);
    for (size_t k = 0; k < *n; k++) {
        (*sizes)[k] = (size_t)onyx_tensor_numel(res[k]) * sizeof(float);
        (*outs)[k] = malloc((*sizes)[k] + 1);
        memcpy((*outs)[k], onyx_tensor_data(res[k]), (*sizes)[k]);
    }
    onyx_values_free(res, *n);
    for (size_t i = 0; i < n_in; i++) {
        onyx_value_free(in[i]);
        free(data[i]);
    }
    free(in);
    onyx_rep_free(rep);
    onyx_session_options_free(o);
    onyx_model_free(m);
}

/* Prepares `model` at `level` writing the optimized model to `path` (external file `ext`, NULL
 * for inline): the status. */
static onyx_status write_optimized(const char *model, onyx_optimization_level level,
                                   const char *path, const char *ext, size_t min_bytes) {
    onyx_model *m = load(model);
    onyx_session_options *o = NULL;
    assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
    assert_int_equal(onyx_session_options_set_optimization(o, level), ONYX_OK);
    assert_int_equal(onyx_session_options_set_optimized_model(o, path, ext, min_bytes), ONYX_OK);
    onyx_rep *rep = NULL;
    onyx_status st = onyx_prepare_session(m, o, &rep);
    onyx_rep_free(rep);
    onyx_session_options_free(o);
    onyx_model_free(m);
    return st;
}

/* Both files' outputs at `level`, bit for bit. */
static void assert_same_outputs(const char *a, const char *b, onyx_optimization_level level) {
    void **x = NULL, **y = NULL;
    size_t *xs = NULL, *ys = NULL, nx = 0, ny = 0;
    run(a, level, &x, &xs, &nx);
    run(b, level, &y, &ys, &ny);
    assert_int_equal(nx, ny);
    for (size_t k = 0; k < nx; k++) {
        assert_int_equal(xs[k], ys[k]);
        assert_memory_equal(x[k], y[k], xs[k]);
        free(x[k]);
        free(y[k]);
    }
    free(x);
    free(y);
    free(xs);
    free(ys);
}

static void test_rewritten_patterns_read_back(void **state) {
    (void)state;
    char dir[64], path[128];
    make_folder(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/patterns.onnx", dir);
    assert_int_equal(write_optimized(PATTERNS, ONYX_OPT_ALL, path, NULL, 0), ONYX_OK);
    assert_same_outputs(PATTERNS, path, ONYX_OPT_ALL);
    unlink(path);
    rmdir(dir);
}

static void test_external_data_written_again_over_itself(void **state) {
    (void)state;
    char dir[64], path[128], data[128];
    make_folder(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/example.onnx", dir);
    snprintf(data, sizeof data, "%s/weights.bin", dir);
    assert_int_equal(write_optimized(EXAMPLE, ONYX_OPT_ALL, path, "weights.bin", 16), ONYX_OK);
    assert_true(exists(data));
    assert_same_outputs(EXAMPLE, path, ONYX_OPT_ALL);
    /* the loaded model reads weights.bin while the new one is written to the same name */
    assert_int_equal(write_optimized(path, ONYX_OPT_ALL, path, "weights.bin", 16), ONYX_OK);
    assert_same_outputs(EXAMPLE, path, ONYX_OPT_ALL);
    unlink(path);
    unlink(data);
    rmdir(dir);
}

static void assert_refused(onyx_status got, onyx_status want, const char *needle) {
    assert_int_equal(got, want);
    if (!strstr(onyx_last_error(), needle))
        fail_msg("'%s' does not name '%s'", onyx_last_error(), needle);
}

static void test_bad_paths_are_refused(void **state) {
    (void)state;
    char dir[64], path[160];
    make_folder(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/no_such_folder/m.onnx", dir);
    assert_refused(write_optimized(EXAMPLE, ONYX_OPT_ALL, path, NULL, 0), ONYX_ERR_IO,
                   "no_such_folder");
    snprintf(path, sizeof path, "%s/m.onnx", dir);
    assert_refused(write_optimized(EXAMPLE, ONYX_OPT_ALL, path, "../w.bin", 0),
                   ONYX_ERR_INVALID_ARGUMENT, "'../w.bin' leaves the model's folder");
    assert_refused(write_optimized(EXAMPLE, ONYX_OPT_ALL, path, "/tmp/w.bin", 0),
                   ONYX_ERR_INVALID_ARGUMENT, "'/tmp/w.bin' is absolute");
    assert_refused(write_optimized(EXAMPLE, ONYX_OPT_ALL, path, "m.onnx", 0),
                   ONYX_ERR_INVALID_ARGUMENT, "is the model file");
    assert_false(exists(path));
    assert_int_equal(rmdir(dir), 0); /* nothing was left in it */
    onyx_session_options *o = NULL;
    assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
    assert_int_equal(onyx_session_options_set_optimized_model(o, "", NULL, 0),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_session_options_set_optimized_model(NULL, "m.onnx", NULL, 0),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_session_options_set_optimized_model(o, "m.onnx", "w.bin", 0), ONYX_OK);
    assert_int_equal(onyx_session_options_set_optimized_model(o, NULL, NULL, 0), ONYX_OK); /* off */
    onyx_session_options_free(o);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rewritten_patterns_read_back),
        cmocka_unit_test(test_external_data_written_again_over_itself),
        cmocka_unit_test(test_bad_paths_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

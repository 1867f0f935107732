/* Inputs and outputs in device memory (io binding), on the TEST device that every machine has:
 * a run reads inputs where they are and leaves outputs on the device when asked, with the same
 * numbers as the CPU; plans are told apart by where their inputs live; wrong devices are refused
 * with a clear error. tools/cuda/check.sh runs test_cuda for the same on a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onyx.h"

#define BATCH 3
#define FEATURES 16

typedef struct fixture {
    onyx_model *model;
    onyx_rep *rep;       /* TEST,CPU */
    onyx_value *x;       /* on the CPU */
    onyx_value *expected; /* the CPU session's output */
} fixture;

static onyx_rep *prepare(const onyx_model *m, const char *devices) {
    onyx_session_options *o = NULL;
    onyx_rep *rep = NULL;
    assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
    assert_int_equal(onyx_session_options_set_devices(o, devices), ONYX_OK);
    assert_int_equal(onyx_session_options_set_threads(o, 1), ONYX_OK);
    onyx_status st = onyx_prepare_session(m, o, &rep);
    onyx_session_options_free(o);
    if (st != ONYX_OK) fail_msg("prepare on %s: %s", devices, onyx_last_error());
    return rep;
}

static onyx_value *run1(onyx_rep *rep, const onyx_value *x, const char *output_device) {
    onyx_run_options *ro = NULL;
    assert_int_equal(onyx_run_options_create(&ro), ONYX_OK);
    if (output_device) assert_int_equal(onyx_run_options_set_output_device(ro, output_device), ONYX_OK);
    const onyx_value *in[1] = {x};
    size_t n = 0;
    onyx_value **out = NULL;
    onyx_status st = onyx_rep_run_with_options(rep, ro, 1, NULL, in, &n, &out);
    onyx_run_options_free(ro);
    if (st != ONYX_OK) fail_msg("run: %s", onyx_last_error());
    assert_int_equal(n, 1);
    onyx_value *y = out[0];
    free(out);
    return y;
}

static void assert_close(const onyx_value *host, const onyx_value *expected) {
    assert_string_equal(onyx_tensor_device(host), "CPU");
    assert_int_equal(onyx_tensor_numel(host), onyx_tensor_numel(expected));
    const float *a = onyx_tensor_data(host), *b = onyx_tensor_data(expected);
    for (int64_t i = 0; i < onyx_tensor_numel(host); i++)
        assert_true(fabsf(a[i] - b[i]) <= 1e-6f + 1e-5f * fabsf(b[i]));
}

static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(onyx_model_load_file("tests/models/example.onnx", &f->model), ONYX_OK);
    float data[BATCH * FEATURES];
    for (int i = 0; i < BATCH * FEATURES; i++) data[i] = (float)((i * 37) % 23) / 11.0f - 1.0f;
    int64_t dims[2] = {BATCH, FEATURES};
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, 2, dims, data, sizeof data, &f->x), ONYX_OK);
    onyx_rep *cpu = prepare(f->model, "CPU");
    f->expected = run1(cpu, f->x, NULL);
    onyx_rep_free(cpu);
    f->rep = prepare(f->model, "TEST,CPU");
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    onyx_value_free(f->x);
    onyx_value_free(f->expected);
    onyx_rep_free(f->rep);
    onyx_model_free(f->model);
    free(f);
    return 0;
}

/* Input on the device, output left there, brought back: the CPU's numbers. */
static void test_input_and_output_on_device(void **state) {
    fixture *f = *state;
    onyx_value *xd = NULL;
    assert_int_equal(onyx_value_copy_to_device(f->x, "TEST", &xd), ONYX_OK);
    assert_string_equal(onyx_tensor_device(xd), "TEST");
    void *last_block = NULL;
    for (int r = 0; r < 3; r++) { /* the same plan again */
        onyx_value *yd = run1(f->rep, xd, "TEST");
        assert_string_equal(onyx_tensor_device(yd), "TEST"); /* Softmax ran on TEST */
        /* the block the last output freed comes back: no device allocation per run */
        if (last_block) assert_ptr_equal(onyx_tensor_data(yd), last_block);
        last_block = onyx_tensor_data(yd);
        onyx_value *y = NULL;
        assert_int_equal(onyx_value_copy_to_device(yd, "CPU", &y), ONYX_OK);
        assert_close(y, f->expected);
        onyx_value_free(y);
        onyx_value_free(yd);
    }
    /* the host input again: another plan, the same numbers, the output on the CPU */
    onyx_value *y = run1(f->rep, f->x, NULL);
    assert_close(y, f->expected);
    onyx_value_free(y);
    /* device input, host output */
    y = run1(f->rep, xd, "CPU");
    assert_close(y, f->expected);
    onyx_value_free(y);
    onyx_value_free(xd);
}

/* Device memory the caller owns, wrapped without a copy. TEST memory stores bytes XOR 0xA5. */
static void test_wrapped_device_memory(void **state) {
    fixture *f = *state;
    size_t nbytes = onyx_tensor_nbytes(f->x);
    unsigned char *mine = malloc(nbytes);
    assert_non_null(mine);
    const unsigned char *src = onyx_tensor_data(f->x);
    for (size_t i = 0; i < nbytes; i++) mine[i] = src[i] ^ 0xA5;
    onyx_value *xd = NULL;
    assert_int_equal(onyx_value_wrap_device_tensor("TEST", ONYX_FLOAT, 2,
                                                   onyx_tensor_dims(f->x), mine, nbytes, &xd),
                     ONYX_OK);
    onyx_value *y = run1(f->rep, xd, NULL);
    assert_close(y, f->expected);
    onyx_value_free(y);
    onyx_value_free(xd);
    assert_int_equal(mine[0], src[0] ^ 0xA5); /* read, never written */
    free(mine);
}

static void test_wrong_devices_refused(void **state) {
    fixture *f = *state;
    float dummy[4] = {0};
    int64_t dims[1] = {4};
    onyx_value *v = NULL;
    if (!onyx_supports_device("CUDA")) {
        assert_int_equal(onyx_value_wrap_device_tensor("CUDA", ONYX_FLOAT, 1, dims, dummy,
                                                       sizeof dummy, &v), ONYX_ERR_DEVICE);
        assert_null(v);
        assert_int_equal(onyx_value_copy_to_device(f->x, "CUDA", &v), ONYX_ERR_DEVICE);
    }
    assert_int_equal(onyx_value_copy_to_device(f->x, "MARS", &v), ONYX_ERR_DEVICE);
    assert_int_equal(onyx_value_wrap_device_tensor("TEST", ONYX_STRING, 1, dims, dummy,
                                                   sizeof dummy, &v), ONYX_ERR_INVALID_ARGUMENT);
    onyx_run_options *ro = NULL;
    assert_int_equal(onyx_run_options_create(&ro), ONYX_OK);
    assert_int_equal(onyx_run_options_set_output_device(ro, "MARS"), ONYX_ERR_DEVICE);
    onyx_run_options_free(ro);

    /* an input on TEST given to a session that only uses the CPU */
    onyx_rep *cpu = prepare(f->model, "CPU");
    onyx_value *xd = NULL;
    assert_int_equal(onyx_value_copy_to_device(f->x, "TEST", &xd), ONYX_OK);
    const onyx_value *in[1] = {xd};
    size_t n = 0;
    onyx_value **out = NULL;
    assert_int_equal(onyx_rep_run(cpu, 1, NULL, in, &n, &out), ONYX_ERR_DEVICE);
    assert_non_null(strstr(onyx_last_error(), "TEST"));
    /* outputs asked on a device the session does not use come back on the CPU */
    onyx_value *y = run1(cpu, f->x, "TEST");
    assert_close(y, f->expected);
    onyx_value_free(y);
    onyx_value_free(xd);
    onyx_rep_free(cpu);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_input_and_output_on_device, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrapped_device_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_devices_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The device registry (core/device_registry.h): each device's entry (name, spelling, usable, kernel
 * table, supports, layouts), unknown names refused with a message naming them, a device answering
 * supports itself, and device lists turned into priority orders (backend/device.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/device_registry.h"
#include "onyx.h"

static int setup(void **state) {
    (void)state;
    backend_register_devices();
    return 0;
}

static void test_entries_sit_in_their_slots(void **state) {
    (void)state;
    const char *names[DEVICE_KINDS] = {[DEVICE_CPU] = "CPU", [DEVICE_CUDA] = "CUDA",
                                       [DEVICE_TEST] = "TEST"};
    for (int k = 0; k < DEVICE_KINDS; k++) {
        const device_entry *e = device_entry_of((device_kind)k);
        assert_non_null(e);
        assert_int_equal(e->kind, k);
        assert_string_equal(e->name, names[k]);
        assert_string_equal(device_name((device_kind)k), names[k]);
        assert_non_null(e->usable);
        assert_non_null(e->memory);
        assert_non_null(e->kernels);
    }
    assert_null(device_entry_of((device_kind)DEVICE_KINDS));
    assert_string_equal(device_name((device_kind)DEVICE_KINDS), "?");
    /* only CUDA is spelled with an index, and only CUDA is loaded on demand */
    assert_false(device_entry_of(DEVICE_CPU)->indexed);
    assert_true(device_entry_of(DEVICE_CUDA)->indexed);
    assert_false(device_entry_of(DEVICE_TEST)->indexed);
    assert_true(device_entry_of(DEVICE_CUDA)->on_demand);
    assert_false(device_entry_of(DEVICE_TEST)->on_demand);
}

static void parses(const char *text, device_kind kind, int index) {
    device_kind k = (device_kind)-1;
    int i = -1;
    if (device_parse(text, &k, &i) != ONYX_OK) fail_msg("'%s': %s", text, onyx_last_error());
    assert_int_equal(k, kind);
    assert_int_equal(i, index);
}

/* Refused with ONYX_ERR_DEVICE, the message naming `named` and listing the known spellings. */
static void refuses(const char *text, const char *named) {
    device_kind k = DEVICE_TEST;
    int i = 7;
    assert_int_equal(device_parse(text, &k, &i), ONYX_ERR_DEVICE);
    const char *msg = onyx_last_error();
    if (!strstr(msg, named) || !strstr(msg, "CPU, CUDA, CUDA:N or TEST"))
        fail_msg("'%s': message '%s' does not name '%s' and the known devices", text, msg, named);
    assert_int_equal(k, DEVICE_TEST); /* out-params untouched */
    assert_int_equal(i, 7);
    onyx_error_clear();
}

static void test_spellings(void **state) {
    (void)state;
    parses(NULL, DEVICE_CPU, 0);
    parses("CPU", DEVICE_CPU, 0);
    parses("cpu", DEVICE_CPU, 0);
    parses("Test", DEVICE_TEST, 0);
    parses("CUDA", DEVICE_CUDA, 0);
    parses("cuda:3", DEVICE_CUDA, 3);
    refuses("GPU", "'GPU'");
    refuses("CPUS", "'CPUS'");
    refuses("CPU:0", "'CPU:0'");   /* the CPU has no index */
    refuses("TEST:1", "'TEST:1'");
    refuses("CUDA:", "'CUDA:'");
    refuses("CUDA:x", "'CUDA:x'");
    refuses("CUDA:1x", "'CUDA:1x'");
    refuses("CUDA:99999", "'CUDA:99999'");
    refuses("CUDA:-1", "'CUDA:-1'");
    refuses("", "empty");
}

/* device_lookup: device_parse's answer, and a miss sets no message. */
static void test_lookup_is_quiet(void **state) {
    (void)state;
    onyx_error_clear();
    device_kind k = DEVICE_CPU;
    int i = 0;
    assert_true(device_lookup("cuda:3", &k, &i));
    assert_int_equal(k, DEVICE_CUDA);
    assert_int_equal(i, 3);
    assert_false(device_lookup("GPU", &k, &i));
    assert_false(device_lookup("", &k, &i));
    assert_false(device_lookup("CPU:0", &k, &i));
    assert_false(onyx_supports_device("GPU"));
    assert_true(onyx_supports_device("cpu"));
    assert_string_equal(onyx_last_error(), "");
}

static void test_usable(void **state) {
    (void)state;
    assert_true(device_usable(DEVICE_CPU, 0));
    assert_false(device_usable(DEVICE_CPU, 1));
    assert_true(device_usable(DEVICE_TEST, 0));
    assert_false(device_usable(DEVICE_TEST, 1));
    assert_false(device_usable((device_kind)DEVICE_KINDS, 0));
    /* CUDA: the plugin loaded and a GPU present; the public query says the same */
    assert_int_equal(device_usable(DEVICE_CUDA, 0), onyx_supports_device("CUDA:0"));
    assert_false(device_usable(DEVICE_CUDA, -1));
    assert_false(device_usable(DEVICE_CUDA, 1024));
    /* the memory of a usable device, none of an unusable one */
    assert_int_equal(backend_device_ops(DEVICE_CPU, 0)->kind, DEVICE_CPU);
    assert_int_equal(backend_device_ops(DEVICE_TEST, 0)->kind, DEVICE_TEST);
    assert_null(backend_device_ops(DEVICE_TEST, 1));
    assert_null(backend_device_ops(DEVICE_CUDA, 1024));
}

static graph_node node_of(const char *op, int version) {
    return (graph_node){.name = "n", .op_type = op, .domain = "", .version = version};
}

static void test_tables_and_supports(void **state) {
    (void)state;
    type_info f32, str;
    int64_t dims[2] = {2, 3};
    type_set_tensor(&f32, ONYX_FLOAT, 2, dims);
    type_set_tensor(&str, ONYX_STRING, 2, dims);
    const type_info *in_f32[1] = {&f32}, *in_str[1] = {&str};
    graph_node relu = node_of("Relu", 14), topk = node_of("TopK", 11);

    const device_kind host_and_test[2] = {DEVICE_CPU, DEVICE_TEST};
    for (int i = 0; i < 2; i++) {
        device_kind k = host_and_test[i];
        const kernel *r = device_supports(&relu, 1, in_f32, k);
        assert_non_null(r);
        assert_int_equal(r->device, k); /* each table's kernels are its device's */
        assert_string_equal(r->op_type, "Relu");
        size_t count = 0;
        assert_non_null(device_entry_of(k)->kernels(&count));
        assert_true(count > 0);
    }
    /* an op the TEST device has no kernel for: refused by TEST, named; taken by the CPU */
    assert_null(device_supports(&topk, 1, in_f32, DEVICE_TEST));
    assert_non_null(strstr(onyx_last_error(), "no TEST kernel for op TopK version 11"));
    onyx_error_clear();
    assert_false(device_has_kernel(DEVICE_TEST, &topk));
    assert_true(device_has_kernel(DEVICE_CPU, &topk));
    assert_non_null(device_supports(&topk, 1, in_f32, DEVICE_CPU));
    /* a dtype no kernel takes: named */
    assert_null(device_supports(&relu, 1, in_str, DEVICE_CPU));
    assert_non_null(strstr(onyx_last_error(), "no CPU kernel for Relu input type string"));
    onyx_error_clear();
    /* a version past the table's */
    graph_node relu_old = node_of("Relu", 0);
    assert_null(device_supports(&relu_old, 1, in_f32, DEVICE_CPU));
    assert_non_null(strstr(onyx_last_error(), "version 0"));
    onyx_error_clear();
    /* a kind without an entry */
    assert_null(device_supports(&relu, 1, in_f32, (device_kind)DEVICE_KINDS));
    onyx_error_clear();
    assert_false(device_has_kernel((device_kind)DEVICE_KINDS, &relu));
}

/* device_find_kernel: device_supports' kernel, and NULL without a message where it has none. */
static void test_find_kernel_is_quiet(void **state) {
    (void)state;
    type_info f32, str;
    int64_t dims[2] = {2, 3};
    type_set_tensor(&f32, ONYX_FLOAT, 2, dims);
    type_set_tensor(&str, ONYX_STRING, 2, dims);
    const type_info *in_f32[1] = {&f32}, *in_str[1] = {&str};
    graph_node relu = node_of("Relu", 14), topk = node_of("TopK", 11), old = node_of("Relu", 0);
    graph_node wrong_domain = relu;
    wrong_domain.domain = "com.microsoft";
    onyx_error_clear();
    const kernel *r = device_find_kernel(&relu, 1, in_f32, DEVICE_CPU);
    assert_non_null(r);
    assert_ptr_equal(r, device_supports(&relu, 1, in_f32, DEVICE_CPU));
    assert_ptr_equal(device_find_kernel(&topk, 1, in_f32, DEVICE_CPU),
                     device_supports(&topk, 1, in_f32, DEVICE_CPU));
    assert_null(device_find_kernel(&topk, 1, in_f32, DEVICE_TEST));         /* absent op */
    assert_null(device_find_kernel(&relu, 1, in_str, DEVICE_CPU));          /* wrong dtype */
    assert_null(device_find_kernel(&old, 1, in_f32, DEVICE_CPU));           /* no such version */
    assert_null(device_find_kernel(&wrong_domain, 1, in_f32, DEVICE_CPU));  /* wrong domain */
    assert_null(device_find_kernel(&relu, 1, in_f32, (device_kind)DEVICE_KINDS));
    assert_string_equal(onyx_last_error(), "");
}

static int declines_asked;

/* A device that answers supports itself: nothing but Relu. */
static const kernel *relu_only(const device_entry *d, const graph_node *node, int n_in,
                               const type_info *const *in_type) {
    declines_asked++;
    if (strcmp(node->op_type, "Relu") != 0) return NULL;
    return device_table_supports(d, node, n_in, in_type);
}

static void test_device_answers_supports(void **state) {
    (void)state;
    const device_entry *test = device_entry_of(DEVICE_TEST);
    device_entry picky = *test;
    picky.supports = relu_only;
    type_info f32;
    int64_t dims[1] = {4};
    type_set_tensor(&f32, ONYX_FLOAT, 1, dims);
    const type_info *in[1] = {&f32};
    graph_node relu = node_of("Relu", 14), add = node_of("Add", 14);
    assert_non_null(device_supports(&add, 1, in, DEVICE_TEST)); /* the table's answer */
    device_registry_add(&picky);
    declines_asked = 0;
    const kernel *r = device_supports(&relu, 1, in, DEVICE_TEST);
    onyx_error_clear();
    const kernel *quiet = device_find_kernel(&add, 1, in, DEVICE_TEST);
    bool no_message = !*onyx_last_error();
    const kernel *a = device_supports(&add, 1, in, DEVICE_TEST);
    const char *msg = a ? "" : onyx_last_error();
    bool names_it = strstr(msg, "the TEST device does not take Add version 14 with input type "
                                "float") != NULL;
    onyx_error_clear();
    device_registry_add(test); /* restored before any assert can end the test */
    assert_int_equal(declines_asked, 3);
    assert_null(quiet);
    assert_true(no_message);
    assert_non_null(r);
    assert_int_equal(r->device, DEVICE_TEST);
    assert_null(a);
    assert_true(names_it);
    assert_ptr_equal(device_entry_of(DEVICE_TEST), test);
}

static void test_layouts(void **state) {
    (void)state;
    /* the CPU keeps tensors between convolutions channels last, rank 3 to 5, float and 8-bit */
    const device_layouts *cpu = device_layouts_of(DEVICE_CPU);
    assert_int_equal(cpu->opaque_min_rank, 3);
    assert_int_equal(cpu->opaque_max_rank, 5);
    assert_true(cpu->opaque_8bit);
    /* the other devices keep every tensor plain */
    assert_int_equal(device_layouts_of(DEVICE_TEST)->opaque_max_rank, 0);
    assert_int_equal(device_layouts_of(DEVICE_CUDA)->opaque_max_rank, 0);
    assert_int_equal(device_layouts_of((device_kind)DEVICE_KINDS)->opaque_max_rank, 0);
    /* float16 computes in float where the CPU's kernels run it */
    assert_true(device_entry_of(DEVICE_CPU)->float16_as_float);
    assert_true(device_entry_of(DEVICE_TEST)->float16_as_float);
    assert_false(device_entry_of(DEVICE_CUDA)->float16_as_float);
}

/* The tensors the fusion pass kept opaque, from its log line ("fusion: N tensors kept opaque"). */
static void count_opaque(void *user, onyx_log_level level, const char *message) {
    (void)level;
    const char *at = strstr(message, "fusion: ");
    if (at && strstr(at, "kept opaque")) *(int *)user = atoi(at + strlen("fusion: "));
}

/* tiny_cnn on the CPU with one input of ones: its logits, and how many tensors were kept opaque. */
static void run_cnn(float logits[10], int *opaque) {
    onyx_model *m = NULL;
    assert_int_equal(onyx_model_load_file("tests/models/tiny/tiny_cnn.onnx", &m), ONYX_OK);
    onyx_session_options *o = NULL;
    assert_int_equal(onyx_session_options_create(&o), ONYX_OK);
    assert_int_equal(onyx_session_options_set_threads(o, 1), ONYX_OK);
    *opaque = 0;
    assert_int_equal(onyx_session_options_set_log(o, ONYX_LOG_VERBOSE, count_opaque, opaque),
                     ONYX_OK);
    onyx_rep *rep = NULL;
    onyx_status st = onyx_prepare_session(m, o, &rep);
    onyx_session_options_free(o);
    onyx_model_free(m);
    if (st != ONYX_OK) fail_msg("prepare: %s", onyx_last_error());
    static float x[3 * 32 * 32];
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = (float)(i % 17) / 17.0f - 0.5f;
    int64_t dims[4] = {1, 3, 32, 32};
    onyx_value *in = NULL;
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, 4, dims, x, sizeof x, &in), ONYX_OK);
    const onyx_value *ins[1] = {in};
    size_t n = 0;
    onyx_value **out = NULL;
    st = onyx_rep_run(rep, 1, NULL, ins, &n, &out);
    onyx_value_free(in);
    onyx_rep_free(rep);
    if (st != ONYX_OK) fail_msg("run: %s", onyx_last_error());
    assert_int_equal(n, 1);
    assert_int_equal(onyx_tensor_numel(out[0]), 10);
    memcpy(logits, onyx_tensor_data(out[0]), 10 * sizeof *logits);
    onyx_values_free(out, n);
}

/* The opaque layout is the CPU entry's preference: with the entry's layouts taken away (or
 * narrowed to ranks the CNN does not have) the fusion pass keeps every tensor plain, and the
 * numbers stay the same. */
static void test_fusion_follows_the_cpu_entrys_layouts(void **state) {
    (void)state;
    float with[10], plain[10], narrow[10];
    int opaque_with, opaque_plain, opaque_narrow;
    run_cnn(with, &opaque_with);
    const device_entry *cpu = device_entry_of(DEVICE_CPU);
    static device_entry changed; /* static: still valid if an assert ends the test early */
    changed = *cpu;
    changed.layouts = (device_layouts){0};
    device_registry_add(&changed);
    run_cnn(plain, &opaque_plain);
    changed.layouts = (device_layouts){.opaque_min_rank = 3, .opaque_max_rank = 3};
    run_cnn(narrow, &opaque_narrow);
    device_registry_add(cpu);
    assert_true(opaque_with > 0);
    assert_int_equal(opaque_plain, 0);
    assert_int_equal(opaque_narrow, 0); /* its tensors between convolutions are of rank 4 */
    for (int i = 0; i < 10; i++) {
        assert_true(fabsf(with[i] - plain[i]) <= 1e-4f + 1e-4f * fabsf(plain[i]));
        assert_true(fabsf(with[i] - narrow[i]) <= 1e-4f + 1e-4f * fabsf(plain[i]));
    }
}

/* The session's devices in the order its list gives them, the CPU always last fallback. */
static void assert_order(const char *list, int n, const device_kind *want) {
    device_kind kind;
    int index;
    bool cpu_first;
    if (device_parse_list(list, &kind, &index, &cpu_first) != ONYX_OK)
        fail_msg("'%s': %s", list, onyx_last_error());
    exec_env env = {0};
    assert_int_equal(backend_devices(&env, kind, index, cpu_first), ONYX_OK);
    if (env.n_priority != n) fail_msg("'%s': %d devices, expected %d", list, env.n_priority, n);
    for (int i = 0; i < n; i++) assert_int_equal(env.priority[i], want[i]);
    /* the CPU and TEST are ready in every session, CUDA only where asked for */
    assert_non_null(env.devices[DEVICE_CPU]);
    assert_non_null(env.devices[DEVICE_TEST]);
    if (kind != DEVICE_CUDA) assert_null(env.devices[DEVICE_CUDA]);
}

static void test_device_list_is_a_priority_order(void **state) {
    (void)state;
    assert_order("CPU", 1, (device_kind[]){DEVICE_CPU});
    assert_order(NULL, 1, (device_kind[]){DEVICE_CPU});
    assert_order("CPU,TEST", 2, (device_kind[]){DEVICE_CPU, DEVICE_TEST});
    assert_order("TEST,CPU", 2, (device_kind[]){DEVICE_TEST, DEVICE_CPU});
    assert_order("TEST", 2, (device_kind[]){DEVICE_TEST, DEVICE_CPU});
    assert_order(" test , cpu ", 2, (device_kind[]){DEVICE_TEST, DEVICE_CPU});
    /* an unknown name in a list is refused, named */
    device_kind kind;
    int index;
    bool cpu_first;
    assert_int_equal(device_parse_list("CPU,NPU", &kind, &index, &cpu_first), ONYX_ERR_DEVICE);
    assert_non_null(strstr(onyx_last_error(), "'NPU'"));
    onyx_error_clear();
    /* a device that is not usable here is refused by name */
    if (!device_usable(DEVICE_CUDA, 0)) {
        exec_env env = {0};
        assert_int_equal(backend_devices(&env, DEVICE_CUDA, 0, false), ONYX_ERR_DEVICE);
        assert_non_null(strstr(onyx_last_error(), "CUDA:0 is not usable"));
        onyx_error_clear();
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entries_sit_in_their_slots),
        cmocka_unit_test(test_spellings),
        cmocka_unit_test(test_lookup_is_quiet),
        cmocka_unit_test(test_usable),
        cmocka_unit_test(test_tables_and_supports),
        cmocka_unit_test(test_find_kernel_is_quiet),
        cmocka_unit_test(test_device_answers_supports),
        cmocka_unit_test(test_layouts),
        cmocka_unit_test(test_fusion_follows_the_cpu_entrys_layouts),
        cmocka_unit_test(test_device_list_is_a_priority_order),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}

/* Out of memory inside oneDNN: with the address space capped (RLIMIT_AS, in a forked child) at
 * many levels just above what the process already maps, preparing and running a model of Conv,
 * MatMul and Gemm must either work or fail with ONYX_ERR_NO_MEMORY, never crash (oneDNN 2.6
 * threw std::bad_alloc through its C API, or crashed generating JIT code, before
 * kernels_cpu/common/dnnl_guard.cc). Not under AddressSanitizer, which cannot run with a capped
 * address space. Model: tests/models/dnnl_oom.onnx. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onyx.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

#ifndef UNDER_SANITIZER
enum { WORKED = 10, NO_MEMORY = 11, OTHER_ERROR = 12 };

static long vm_size_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmSize:", 7)) kb = atol(line + 7);
    fclose(f);
    return kb;
}

static int verdict(onyx_status st) {
    if (st == ONYX_OK) return WORKED;
    if (st == ONYX_ERR_NO_MEMORY) return NO_MEMORY;
    fprintf(stderr, "status %d: %s\n", (int)st, onyx_last_error());
    return OTHER_ERROR;
}

/* In the child: load, cap the address space at what is mapped + headroom, prepare, run. */
static int child(long headroom_mb) {
    onyx_model *m = NULL;
    if (onyx_model_load_file("tests/models/dnnl_oom.onnx", &m) != ONYX_OK) return OTHER_ERROR;
    static float x[4 * 16 * 16 * 16];
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = (float)(i % 7) - 3;
    const int64_t dims[4] = {4, 16, 16, 16};
    onyx_value *in = NULL;
    if (onyx_value_wrap_tensor(ONYX_FLOAT, 4, dims, x, sizeof x, &in) != ONYX_OK) return OTHER_ERROR;
    long kb = vm_size_kb();
    if (kb < 0) return OTHER_ERROR;
    rlim_t cap = (rlim_t)(kb + headroom_mb * 1024) * 1024;
    struct rlimit r = {cap, cap};
    if (setrlimit(RLIMIT_AS, &r) != 0) return OTHER_ERROR;
    onyx_rep *rep = NULL;
    onyx_status st = onyx_prepare_session(m, NULL, &rep);
    if (st != ONYX_OK) return verdict(st);
    const onyx_value *ins[1] = {in};
    size_t n = 0;
    onyx_value **outs = NULL;
    st = onyx_rep_run(rep, 1, NULL, ins, &n, &outs);
    if (st == ONYX_OK) onyx_values_free(outs, n);
    return verdict(st);
}

#endif

static void test_dnnl_out_of_memory(void **state) {
    (void)state;
#ifdef UNDER_SANITIZER
    skip();
#else
    const long headrooms_mb[] = {0, 1, 2, 4, 8, 12, 16, 20, 24, 28, 30, 32, 34, 36, 40, 48, 64, 256};
    int refused = 0, worked = 0;
    for (size_t i = 0; i < sizeof headrooms_mb / sizeof headrooms_mb[0]; i++) {
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) _exit(child(headrooms_mb[i]));
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (WIFSIGNALED(status))
            fail_msg("%ld MB left: the child died of signal %d", headrooms_mb[i], WTERMSIG(status));
        int code = WEXITSTATUS(status);
        if (code != WORKED && code != NO_MEMORY)
            fail_msg("%ld MB left: exit status %d, expected success or ONYX_ERR_NO_MEMORY",
                     headrooms_mb[i], code);
        refused += code == NO_MEMORY;
        worked += code == WORKED;
    }
    /* both outcomes happened: the caps really squeezed oneDNN, and the largest left enough */
    assert_true(refused > 0);
    assert_true(worked > 0);
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dnnl_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

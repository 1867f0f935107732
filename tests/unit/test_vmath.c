/* Unit tests for kernels_cpu/common/vmath.c: every path this CPU runs (scalar, AVX2, AVX-512)
 * against double-precision libm over a sweep of float inputs (all exponents, subnormals, ±0, ±inf,
 * NaN, [-100, 100] densely), special values exactly, masked tails, and the softmax pieces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_cpu/common/vmath.h"

static const cpu_vmath *isa_table(int k) {
    static const cpu_vmath_isa isas[] = {CPU_VMATH_SCALAR, CPU_VMATH_AVX2, CPU_VMATH_AVX512};
    return k < 3 ? cpu_vmath_for(isas[k]) : NULL;
}
#define FOR_ISAS(vm)                                                                               \
    for (int k_ = 0; k_ < 3; k_++)                                                                 \
        for (const cpu_vmath *vm = isa_table(k_); vm; vm = NULL)

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Distance of got from the exact ref in units of the last place of ref's float binade
 * (subnormals: 2^-149); 0 when both are the same infinity or both NaN, huge when one is NaN. */
static double ulp_err(float got, double ref) {
    if (isnan(ref) || isnan(got)) return isnan(ref) && isnan(got) ? 0 : 1e30;
    if ((float)ref == got) return 0;
    if (isinf(got)) return 1e30;
    double a = fabs(ref);
    double u = a < 0x1p-126 ? 0x1p-149 : ldexp(1, ilogb(a) - 23);
    if (a >= 0x1p128) u = 0x1p104; /* ref beyond float: measured against the largest binade */
    return fabs((double)got - ref) / u;
}

/* The sweep: every 4099th bit pattern (all exponents, both signs, subnormals), [-100, 100] in
 * steps of 2^-11, then the edges. */
static float *sweep(int64_t *n_out) {
    int64_t cap = (int64_t)(0x100000000ull / 4099) + 409600 + 64, n = 0;
    float *x = malloc((size_t)cap * sizeof *x);
    assert_non_null(x);
    for (uint64_t u = 0; u < 0x100000000ull; u += 4099) x[n++] = from_bits((uint32_t)u);
    for (int64_t i = -204800; i < 204800; i++) x[n++] = (float)i * 0x1p-11f;
    static const float edge[] = {
        0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-149f, -0x1p-149f, 0x1p-126f, -0x1p-126f,
        0x1.fffffep-127f, 88.72283f, 88.72284f, -87.33654f, -103.97207f, -103.98f, -104.0f,
        89.0f, 3.9f, 4.0f, 4.1f, 1.0f, -1.0f, 0.99999994f, 1.0000001f, 1e-30f, -1e-30f, 20.0f,
        -20.0f, 9.0f, -9.0f, -17.3f, -17.4f, 0x1p-25f, -0x1p-25f, 0x1p-24f, 3.4e38f, -3.4e38f};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++) x[n++] = edge[i];
    *n_out = n;
    return x;
}

static double r_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double r_gelu(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }
static double r_gelu_tanh(double x) {
    /* 0.5 (1 + tanh w) = 1 / (1 + e^-2w), which does not cancel in double either */
    double k = sqrt(2 / M_PI);
    return x / (1 + exp(-2 * k * (x + 0.044715 * x * x * x)));
}
static double r_mish(double x) { return x * tanh(log1p(exp(x))); }
static double r_softplus(double x) { return fmax(x, 0) + log1p(exp(-fabs(x))); }
static double r_silu(double x) { return x / (1 + exp(-x)); }
static double r_elu(double x) { return x > 0 ? x : 1.5 * expm1(x); }
static double r_hswish(double x) { return x * fmax(0, fmin(1, x / 6 + 0.5)); }

static void silu_(const float *x, float *y, int64_t n) { cpu_vmath_get()->swish(x, y, n, 1); }
static void elu_(const float *x, float *y, int64_t n) { cpu_vmath_get()->elu(x, y, n, 1.5f, 1, 1); }
static void hswish_(const float *x, float *y, int64_t n) {
    cpu_vmath_get()->hard(x, y, n, 1.0f / 6, 0.5f, 1);
}

typedef struct check {
    const char *name;
    size_t off;                          /* the cpu_vmath member, or (size_t)-1: use fn */
    void (*fn)(const cpu_vmath *, const float *, float *, int64_t);
    double (*ref)(double);
    double max_ulp;                      /* whole sweep (core), or |x| <= 5 (activations) */
} check;

#define MEMBER(m) offsetof(cpu_vmath, m)

static void run_check(const cpu_vmath *vm, const check *c, const float *x, float *y, int64_t n) {
    if (c->off != (size_t)-1) {
        cpu_vm_map_fn f;
        memcpy(&f, (const char *)vm + c->off, sizeof f);
        f(x, y, n);
    } else {
        c->fn(vm, x, y, n);
    }
}

static void swish1(const cpu_vmath *vm, const float *x, float *y, int64_t n) {
    vm->swish(x, y, n, 1);
}
static void elu15(const cpu_vmath *vm, const float *x, float *y, int64_t n) {
    vm->elu(x, y, n, 1.5f, 1, 1);
}

static const check core[] = {
    {"exp", MEMBER(exp), NULL, exp, 2},
    {"expm1", MEMBER(expm1), NULL, expm1, 2},
    {"log", MEMBER(log), NULL, log, 2},
    {"tanh", MEMBER(tanh), NULL, tanh, 3},
    {"erf", MEMBER(erf), NULL, erf, 2},
    {"sigmoid", MEMBER(sigmoid), NULL, r_sigmoid, 3},
};
/* Composites: in ulp where |x| <= 5 (their useful range); everywhere a relative 1e-4 for normal
 * results, since far tails are limited by the conditioning of float inputs (Gelu's x / sqrt 2 at
 * x = -13 moves the result by 170 ulp), and subnormal results within 1e-37. */
static const check acts[] = {
    {"gelu", MEMBER(gelu), NULL, r_gelu, 64},
    {"gelu_tanh", MEMBER(gelu_tanh), NULL, r_gelu_tanh, 40},
    {"mish", MEMBER(mish), NULL, r_mish, 6},
    {"softplus", MEMBER(softplus), NULL, r_softplus, 4},
    {"silu", (size_t)-1, swish1, r_silu, 4},
    {"elu", (size_t)-1, elu15, r_elu, 4},
};

static void test_core_functions(void **state) {
    (void)state;
    int64_t n;
    float *x = sweep(&n), *y = malloc((size_t)n * sizeof *y);
    assert_non_null(y);
    FOR_ISAS(vm) {
        for (size_t f = 0; f < sizeof core / sizeof *core; f++) {
            run_check(vm, &core[f], x, y, n);
            double worst = 0;
            float at = 0;
            for (int64_t i = 0; i < n; i++) {
                double e = ulp_err(y[i], core[f].ref(x[i]));
                if (e > worst) worst = e, at = x[i];
            }
            print_message("%-7s %-10s max %.2f ulp (at %g)\n", vm->name, core[f].name, worst, at);
            assert_true(worst <= core[f].max_ulp);
        }
    }
    free(x);
    free(y);
}

static void test_activations(void **state) {
    (void)state;
    int64_t n;
    float *x = sweep(&n), *y = malloc((size_t)n * sizeof *y);
    assert_non_null(y);
    FOR_ISAS(vm) {
        for (size_t f = 0; f < sizeof acts / sizeof *acts; f++) {
            run_check(vm, &acts[f], x, y, n);
            double worst = 0, worst_rel = 0;
            float at = 0;
            for (int64_t i = 0; i < n; i++) {
                double r = acts[f].ref(x[i]);
                if (isnan(r) || isinf(r)) {
                    /* -inf * 0 in the formulas: the limit or NaN are both acceptable */
                    if (!isnan(r)) assert_true((float)r == y[i]);
                    continue;
                }
                if (fabs(r) < 0x1p-126) {
                    assert_true(fabs((double)y[i] - r) <= 1e-37);
                    continue;
                }
                double rel = fabs((double)y[i] - r) / fabs(r);
                if (rel > worst_rel) worst_rel = rel;
                if (fabsf(x[i]) > 5) continue;
                double e = ulp_err(y[i], r);
                if (e > worst) worst = e, at = x[i];
            }
            print_message("%-7s %-10s max %.2f ulp in [-5, 5] (at %g), relative %.2g overall\n",
                          vm->name, acts[f].name, worst, at, worst_rel);
            assert_true(worst <= acts[f].max_ulp);
            assert_true(worst_rel <= 1e-4);
        }
    }
    free(x);
    free(y);
}

static void test_special_values(void **state) {
    (void)state;
    static const float x[] = {INFINITY, -INFINITY, NAN, 0.0f, -0.0f, -1.0f, 0x1p-149f, 200.0f};
    enum { N = sizeof x / sizeof *x };
    float y[N];
    FOR_ISAS(vm) {
        vm->exp(x, y, N);
        assert_true(y[0] == INFINITY && y[1] == 0 && isnan(y[2]) && y[3] == 1 && y[4] == 1);
        assert_true(y[7] == INFINITY);
        vm->log(x, y, N);
        assert_true(y[0] == INFINITY && isnan(y[1]) && isnan(y[2]) && y[3] == -INFINITY);
        assert_true(y[4] == -INFINITY && isnan(y[5]));
        assert_true(fabsf(y[6] - (float)log(0x1p-149)) <= 1e-5f);
        vm->tanh(x, y, N);
        assert_true(y[0] == 1 && y[1] == -1 && isnan(y[2]) && y[3] == 0 && signbit(y[4]));
        assert_true(y[6] == 0x1p-149f && y[7] == 1);
        vm->erf(x, y, N);
        assert_true(y[0] == 1 && y[1] == -1 && isnan(y[2]) && y[3] == 0 && signbit(y[4]));
        vm->expm1(x, y, N);
        assert_true(y[0] == INFINITY && y[1] == -1 && isnan(y[2]) && y[3] == 0 && signbit(y[4]));
        assert_true(y[6] == 0x1p-149f);
        vm->sigmoid(x, y, N);
        assert_true(y[0] == 1 && y[1] == 0 && isnan(y[2]) && y[3] == 0.5f && y[7] == 1);
        vm->gelu(x, y, N);
        assert_true(y[0] == INFINITY && isnan(y[2]) && y[3] == 0 && y[7] == 200);
        vm->gelu_tanh(x, y, N);
        assert_true(y[0] == INFINITY && isnan(y[2]) && y[3] == 0 && y[7] == 200);
        vm->mish(x, y, N);
        assert_true(y[0] == INFINITY && isnan(y[2]) && y[3] == 0 && y[7] == 200);
        vm->softplus(x, y, N);
        assert_true(y[0] == INFINITY && y[1] == 0 && isnan(y[2]) && y[7] == 200);
        vm->hard(x, y, N, 0.2f, 0.5f, 0);
        assert_true(y[0] == 1 && y[1] == 0 && isnan(y[2]) && y[3] == 0.5f && y[5] == 0.3f);
    }
}

/* Every length 0..70 at every offset 0..3 gives what the long run gives: the masked tails read
 * and write nothing outside [0, n). */
static void test_tails(void **state) {
    (void)state;
    enum { L = 80 };
    float x[L + 8], full[L + 8], y[L + 8];
    for (int i = 0; i < L + 8; i++) x[i] = (float)(i - 40) * 0.37f;
    FOR_ISAS(vm) {
        cpu_vm_map_fn fns[] = {vm->exp, vm->erf, vm->gelu, vm->softplus};
        for (size_t f = 0; f < sizeof fns / sizeof *fns; f++) {
            fns[f](x, full, L + 8);
            for (int off = 0; off < 4; off++)
                for (int n = 0; n <= 70; n++) {
                    for (int i = 0; i < L + 8; i++) y[i] = -7.0f;
                    fns[f](x + off, y + off, n);
                    for (int i = 0; i < L + 8; i++) {
                        bool in = i >= off && i < off + n;
                        assert_true(in ? y[i] == full[i] : y[i] == -7.0f);
                    }
                }
        }
        /* in place */
        memcpy(y, x, sizeof y);
        vm->tanh(y, y, 37);
        vm->tanh(x, full, 37);
        assert_memory_equal(y, full, 37 * sizeof(float));
    }
}

static void test_softmax_pieces(void **state) {
    (void)state;
    enum { N = 1500 };
    static float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = sinf((float)i * 0.7f) * 20.0f - (float)(i % 7);
    FOR_ISAS(vm) {
        for (int n = 1; n <= N; n += n < 40 ? 1 : 97) {
            float mx = -INFINITY;
            for (int i = 0; i < n; i++) mx = x[i] > mx ? x[i] : mx;
            assert_true(vm->max(x, n) == mx);
            double s = 0;
            for (int i = 0; i < n; i++) s += exp((double)(x[i] - mx));
            float got = vm->exp_sum(x, y, n, mx);
            assert_true(fabs(got - s) <= 1e-6 * s);
            for (int i = 0; i < n; i++) assert_true(ulp_err(y[i], exp((double)(x[i] - mx))) <= 2);
            assert_true(vm->exp_sum(x, NULL, n, mx) == got);
            cpu_vm_softmax_row(vm, x, y, n);
            for (int i = 0; i < n; i++)
                assert_true(fabs(y[i] - exp((double)(x[i] - mx)) / s) <= 4e-6 * y[i] + 1e-30);
        }
        float t[5] = {1, NAN, 3, -INFINITY, 2};
        assert_true(isnan(vm->max(t, 5)));
        assert_true(vm->max(t + 2, 3) == 3);
        vm->affine(t + 2, y, 3, 2, -1);
        assert_true(y[0] == 5 && y[1] == -INFINITY && y[2] == 3);
    }
}

/* HardSwish/HardSigmoid: x / 6 + 1/2 cancels near x = -3 in any float evaluation, so absolute. */
static void test_hard(void **state) {
    (void)state;
    enum { N = 20001 };
    static float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = (float)(i - N / 2) * 1e-3f;
    FOR_ISAS(vm) {
        vm->hard(x, y, N, 1.0f / 6, 0.5f, 1);
        for (int i = 0; i < N; i++)
            assert_true(fabs(y[i] - r_hswish(x[i])) <= 2e-7 * fmax(1, fabs(x[i])));
        vm->hard(x, y, N, 0.2f, 0.5f, 0);
        for (int i = 0; i < N; i++)
            assert_true(fabs(y[i] - fmax(0, fmin(1, 0.2 * x[i] + 0.5))) <= 2e-7);
    }
}

/* The run-time choice is the widest path the CPU has. */
static void test_dispatch(void **state) {
    (void)state;
    const cpu_vmath *best = cpu_vmath_get();
    assert_non_null(best);
    const cpu_vmath *want = cpu_vmath_for(CPU_VMATH_AVX512);
    if (!want) want = cpu_vmath_for(CPU_VMATH_AVX2);
    if (!want) want = cpu_vmath_for(CPU_VMATH_SCALAR);
    assert_ptr_equal(best, want);
    print_message("vmath: %s\n", best->name);
    float a[3] = {-1, 0, 3}, b[3];
    silu_(a, b, 3);
    assert_true(b[1] == 0 && fabs(b[2] - r_silu(3)) < 1e-6);
    elu_(a, b, 3);
    assert_true(fabs(b[0] - r_elu(-1)) < 1e-6 && b[2] == 3);
    hswish_(a, b, 3);
    assert_true(b[2] == 3 && fabs(b[0] - r_hswish(-1)) < 1e-7);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dispatch),
        cmocka_unit_test(test_core_functions),
        cmocka_unit_test(test_activations),
        cmocka_unit_test(test_special_values),
        cmocka_unit_test(test_hard),
        cmocka_unit_test(test_tails),
        cmocka_unit_test(test_softmax_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for core/rng.c: its draws must equal numpy's legacy RandomState bit for bit. The
 * reference values were printed by numpy 2.4 (np.random.RandomState(seed).<method>), the spec. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/rng.h"

static void test_seed_and_u32(void **state) {
    (void)state;
    /* RandomState(s).randint(0, 2**32, size=2, dtype=np.uint32) */
    static const uint32_t seeds[] = {0, 1, 12345, 4294967295u, 2147483648u};
    static const uint32_t want[][2] = {{2357136044u, 2546248239u},
                                       {1791095845u, 4282876139u},
                                       {3992670690u, 3823185381u},
                                       {419326371u, 479346978u},
                                       {652847386u, 1439962116u}};
    for (size_t k = 0; k < sizeof seeds / sizeof *seeds; k++) {
        rng r;
        rng_seed(&r, seeds[k]);
        assert_int_equal(rng_u32(&r), want[k][0]);
        assert_int_equal(rng_u32(&r), want[k][1]);
    }
}

static void test_sample_normal_binomial(void **state) {
    (void)state;
    rng r;
    rng_seed(&r, 0);
    /* r.random_sample(3), r.standard_normal(3), r.binomial(1, 0.5, 5) on one state */
    assert_true(rng_uniform(&r) == 0.5488135039273248);
    assert_true(rng_uniform(&r) == 0.7151893663724195);
    assert_true(rng_uniform(&r) == 0.6027633760716439);
    assert_true(rng_normal(&r) == -2.268328201180374);
    assert_true(rng_normal(&r) == 1.3335453816218967);
    assert_true(rng_normal(&r) == -0.8427240538292873);
    static const int64_t bin[] = {1, 1, 0, 1, 1};
    for (int i = 0; i < 5; i++) assert_int_equal(rng_binomial(&r, 1, 0.5), bin[i]);
}

static void test_binomial_edges(void **state) {
    (void)state;
    rng r;
    rng_seed(&r, 42);
    /* r.binomial(1, [0, 1, .3, 0, .7]) then r.random_sample(): p = 0 and 1 still draw */
    static const double p[] = {0.0, 1.0, 0.3, 0.0, 0.7};
    static const int64_t want[] = {0, 1, 1, 0, 1};
    for (int i = 0; i < 5; i++) assert_int_equal(rng_binomial(&r, 1, p[i]), want[i]);
    assert_true(rng_uniform(&r) == 0.15599452033620265);
}

static void test_binomial_btpe(void **state) {
    (void)state;
    rng r;
    rng_seed(&r, 7);
    /* [r.binomial(ns[i], ps[i]) for 4 rounds]: n*min(p,1-p) > 30 takes BTPE */
    static const int64_t ns[] = {100, 1000, 100000, 37, 5000};
    static const double ps[] = {0.4, 0.9, 0.5, 0.99, 0.02};
    static const int64_t want[] = {36, 899, 50204, 37, 104, 47, 903, 50183, 37, 98,
                                   54, 897, 50144, 37, 109, 35, 900, 49970, 37, 94};
    for (int j = 0; j < 20; j++) assert_int_equal(rng_binomial(&r, ns[j % 5], ps[j % 5]), want[j]);
}

static void test_seed_random_differs(void **state) {
    (void)state;
    rng a, b;
    rng_seed_random(&a);
    rng_seed_random(&b);
    /* the counter alone separates two seeds taken in the same clock tick */
    assert_true(rng_u32(&a) != rng_u32(&b) || rng_u32(&a) != rng_u32(&b));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_and_u32),        cmocka_unit_test(test_sample_normal_binomial),
        cmocka_unit_test(test_binomial_edges),      cmocka_unit_test(test_binomial_btpe),
        cmocka_unit_test(test_seed_random_differs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Memory planner: values whose lifetimes overlap never share bytes; values that do not, do. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "core/planner.h"

static plan_value arena_value(size_t size, int first, int last) {
    plan_value v = {0};
    v.where = ST_ARENA;
    v.alias_of = -1;
    v.size = size;
    v.first = first;
    v.last = last;
    return v;
}

static bool bytes_overlap(const plan_value *a, const plan_value *b) {
    return a->offset < b->offset + b->size && b->offset < a->offset + a->size;
}

static void check_no_conflicts(const plan_value *v, int n, size_t total) {
    for (int i = 0; i < n; i++) {
        if (v[i].where != ST_ARENA || v[i].alias_of >= 0) continue;
        assert_true(v[i].offset % 64 == 0);
        assert_true(v[i].offset + v[i].size <= total);
        for (int j = i + 1; j < n; j++) {
            if (v[j].where != ST_ARENA || v[j].alias_of >= 0) continue;
            bool live_together = v[i].first <= v[j].last && v[j].first <= v[i].last;
            if (live_together) assert_false(bytes_overlap(&v[i], &v[j]));
        }
    }
}

static void chain_reuses_memory(void **state) {
    (void)state;
    /* a -> b -> c -> d: each value dies when the next is made, so two buffers suffice */
    plan_value v[4] = {arena_value(1000, 0, 1), arena_value(1000, 1, 2), arena_value(1000, 2, 3),
                       arena_value(1000, 3, 4)};
    size_t total = plan_assign_offsets(v, 4, DEVICE_CPU);
    check_no_conflicts(v, 4, total);
    assert_int_equal(total, 2 * 1024);
}

static void all_live_values_are_disjoint(void **state) {
    (void)state;
    plan_value v[3] = {arena_value(100, 0, 5), arena_value(200, 1, 5), arena_value(300, 2, 5)};
    size_t total = plan_assign_offsets(v, 3, DEVICE_CPU);
    check_no_conflicts(v, 3, total);
    assert_int_equal(total, 128 + 256 + 320);
}

static void non_arena_and_aliases_take_no_space(void **state) {
    (void)state;
    plan_value v[3] = {arena_value(640, 0, 2), arena_value(640, 1, 2), arena_value(640, 1, 2)};
    v[1].alias_of = 0;    /* shares v[0]'s buffer */
    v[2].where = ST_HEAP; /* not in the arena */
    size_t total = plan_assign_offsets(v, 3, DEVICE_CPU);
    assert_int_equal(total, 640);
    assert_int_equal(v[0].offset, 0);
}

static void random_lifetimes_never_collide(void **state) {
    (void)state;
    enum { N = 200 };
    plan_value v[N];
    srand(7);
    for (int i = 0; i < N; i++) {
        int first = rand() % 100;
        v[i] = arena_value((size_t)(1 + rand() % 5000), first, first + rand() % 20);
    }
    size_t total = plan_assign_offsets(v, N, DEVICE_CPU);
    check_no_conflicts(v, N, total);
    size_t sum = 0;
    for (int i = 0; i < N; i++) sum += (v[i].size + 63) / 64 * 64;
    assert_true(total < sum); /* short lifetimes must let memory be reused */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chain_reuses_memory),
        cmocka_unit_test(all_live_values_are_disjoint),
        cmocka_unit_test(non_arena_and_aliases_take_no_space),
        cmocka_unit_test(random_lifetimes_never_collide),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

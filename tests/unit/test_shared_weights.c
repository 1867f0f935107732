/* Unit tests for the weights handed back by core/shared.c: a weight is evicted only when a cached
 * object can rebuild it and it is not pinned; an evicted weight's whole pages leave memory (RSS
 * falls) and are unreadable; a restore rebuilds its bytes exactly, in place; an object made from
 * an evicted weight restores it first; forgetting the weights makes their memory plain again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/shared.h"
#include "core/value.h"

enum { N = 1 << 20 }; /* floats: 4 MiB */

/* The packed object: a copy of the weight's floats, reversed (so that unpacking is not a copy
 * of the same layout). */
typedef struct packed {
    float *v;
    int64_t n;
} packed;

static const tensor *make_source;
static int makes;

static onyx_status make_packed(void *ctx, void **obj) {
    const tensor *t = ctx;
    packed *p = malloc(sizeof *p);
    p->n = t->numel;
    p->v = malloc((size_t)p->n * sizeof *p->v);
    const float *src = t->data;
    for (int64_t i = 0; i < p->n; i++) p->v[i] = src[p->n - 1 - i];
    make_source = t;
    makes++;
    *obj = p;
    return ONYX_OK;
}

static void release_packed(void *obj) {
    packed *p = obj;
    free(p->v);
    free(p);
}

static onyx_status unpack(const void *obj, void *dst) {
    const packed *p = obj;
    float *d = dst;
    for (int64_t i = 0; i < p->n; i++) d[i] = p->v[p->n - 1 - i];
    return ONYX_OK;
}

static void weight_init(tensor *t, float *data) {
    memset(t, 0, sizeof *t);
    t->dtype = ONYX_FLOAT;
    t->rank = 1;
    t->dims[0] = t->numel = N;
    t->nbytes = (size_t)N * sizeof(float);
    t->data = data;
    for (int64_t i = 0; i < N; i++) data[i] = (float)i * 0.5f - 7.0f;
}

/* The object under key `key` made from w (unpack: whether it can rebuild w); *made says whether
 * this call made it. */
static void *get(shared_cache *c, int key, tensor *w, bool unpacks, bool *made) {
    void *obj = NULL;
    assert_int_equal(shared_cache_get_weight(c, &key, sizeof key, make_packed, release_packed, w,
                                             w, unpacks ? unpack : NULL, &obj, made),
                     ONYX_OK);
    return obj;
}

static bool holds_pattern(const tensor *t) {
    const float *d = t->data;
    for (int64_t i = 0; i < N; i++)
        if (d[i] != (float)i * 0.5f - 7.0f) return false;
    return true;
}

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void test_evicts_only_what_an_object_rebuilds(void **state) {
    (void)state;
    shared_cache *c;
    assert_int_equal(shared_cache_create(&c), ONYX_OK);
    float *data = aligned_alloc(4096, (size_t)N * sizeof(float));
    tensor w;
    weight_init(&w, data);
    assert_false(shared_cache_evict(c, &w)); /* no object yet */
    int key = 1;
    bool made;
    /* an object that cannot rebuild the weight: still not evictable */
    (void)get(c, key, &w, false, &made);
    assert_true(made);
    assert_false(shared_cache_evict(c, &w));
    key = 2;
    (void)get(c, key, &w, true, &made);
    long before = rss_kib();
    assert_true(shared_cache_evict(c, &w));
    assert_true(shared_cache_evicted(c, &w));
    long after = rss_kib();
    assert_true(before - after >= 3 * 1024); /* most of the 4 MiB handed back */
    assert_int_equal(shared_cache_restore(c, &w, false), ONYX_OK);
    assert_false(shared_cache_evicted(c, &w));
    assert_true(holds_pattern(&w));
    /* evictable again; pinned by a restore that says so, never again */
    assert_true(shared_cache_evict(c, &w));
    assert_int_equal(shared_cache_restore(c, &w, true), ONYX_OK);
    assert_true(holds_pattern(&w));
    assert_false(shared_cache_evict(c, &w));
    shared_cache_free(c);
    free(data);
}

static void test_object_made_from_an_evicted_weight_restores_it(void **state) {
    (void)state;
    shared_cache *c;
    assert_int_equal(shared_cache_create(&c), ONYX_OK);
    float *data = aligned_alloc(4096, (size_t)N * sizeof(float));
    tensor w;
    weight_init(&w, data);
    int key = 1;
    void *obj;
    bool made;
    obj = get(c, key, &w, true, &made);
    assert_true(shared_cache_evict(c, &w));
    /* the same key: the cached object, nothing read */
    makes = 0;
    obj = get(c, key, &w, true, &made);
    assert_false(made);
    assert_int_equal(makes, 0);
    assert_true(shared_cache_evicted(c, &w));
    /* another key: made from the restored bytes */
    key = 2;
    obj = get(c, key, &w, true, &made);
    assert_true(made);
    assert_false(shared_cache_evicted(c, &w));
    const packed *p = obj;
    assert_true(p->v[0] == (float)(N - 1) * 0.5f - 7.0f && p->v[N - 1] == -7.0f);
    assert_true(holds_pattern(&w));
    shared_cache_free(c);
    free(data);
}

static void test_forgetting_makes_memory_plain(void **state) {
    (void)state;
    shared_cache *c;
    assert_int_equal(shared_cache_create(&c), ONYX_OK);
    float *data = malloc((size_t)N * sizeof(float)); /* not page aligned: partial end pages */
    tensor w;
    weight_init(&w, data);
    int key = 1;
    bool made;
    (void)get(c, key, &w, true, &made);
    assert_true(shared_cache_evict(c, &w));
    /* the bytes in the partial pages at both ends stay */
    assert_true(data[0] == -7.0f && data[N - 1] == (float)(N - 1) * 0.5f - 7.0f);
    shared_cache_forget_weights(c);
    assert_false(shared_cache_evicted(c, &w));
    memset(data, 0, (size_t)N * sizeof(float)); /* writable again (a fault would end the test) */
    shared_cache_free(c);
    free(data);
}

static void test_small_weight_is_not_evicted(void **state) {
    (void)state;
    shared_cache *c;
    assert_int_equal(shared_cache_create(&c), ONYX_OK);
    float small[64];
    tensor w = {.dtype = ONYX_FLOAT, .rank = 1, .numel = 64, .nbytes = sizeof small,
                .data = small};
    w.dims[0] = 64;
    int key = 1;
    bool made;
    (void)get(c, key, &w, true, &made);
    assert_false(shared_cache_evict(c, &w)); /* no whole page inside it */
    shared_cache_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_evicts_only_what_an_object_rebuilds),
        cmocka_unit_test(test_object_made_from_an_evicted_weight_restores_it),
        cmocka_unit_test(test_forgetting_makes_memory_plain),
        cmocka_unit_test(test_small_weight_is_not_evicted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

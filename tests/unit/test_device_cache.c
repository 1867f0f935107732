/* Unit tests for core/device_cache.c, on a counting stand-in for a device's memory (host memory
 * under the TEST kind, with a capacity to run out of): freed blocks come back for their size
 * class and only for it, the cache is bounded (the host as much as a device), memory running out
 * gives the kept blocks back first, a new host block gives back the stalest kept ones first
 * (those kept before the newest run began, never the blocks the run itself frees and takes
 * again), and threads sharing the cache never get one block twice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/device_cache.h"
#include "core/value.h"

static atomic_int allocs, frees;
static atomic_size_t live_bytes;
static size_t capacity = SIZE_MAX;

/* The block's size sits in front of it, so that free can count the bytes it gives back. Blocks
 * past 1 MiB are never written here: they get 1 MiB of host memory. */
static void *fake_alloc(size_t bytes) {
    if (bytes > capacity - atomic_load(&live_bytes)) return NULL;
    size_t real = bytes < ((size_t)1 << 20) ? bytes : (size_t)1 << 20;
    size_t *p = aligned_alloc(64, 64 + ((real + 63) & ~(size_t)63));
    if (!p) return NULL;
    *p = bytes;
    atomic_fetch_add(&allocs, 1);
    atomic_fetch_add(&live_bytes, bytes);
    return (char *)p + 64;
}

static void fake_free(void *p) {
    if (!p) return;
    size_t *b = (size_t *)((char *)p - 64);
    atomic_fetch_add(&frees, 1);
    atomic_fetch_sub(&live_bytes, *b);
    free(b);
}

static const device_ops fake = {.kind = DEVICE_TEST, .alloc = fake_alloc, .free = fake_free};
/* The same memory in the CPU's share (no host tensor of the cache's sizes is made here). */
static const device_ops fake_host = {.kind = DEVICE_CPU, .alloc = fake_alloc, .free = fake_free};

static int reset(void **state) {
    (void)state;
    device_cache_trim(&fake);
    device_cache_trim(&fake_host);
    capacity = SIZE_MAX;
    atomic_store(&allocs, 0);
    atomic_store(&frees, 0);
    return 0;
}

static void test_classes(void **state) {
    (void)state;
    size_t last = 0;
    for (size_t b = 0; b < ((size_t)1 << 22); b += b < 8192 ? 1 : 997) {
        size_t c = device_cache_class(b);
        assert_true(c >= b && c >= last);                     /* big enough, in order */
        assert_true(c <= b + 256 || c - b <= b / 4);          /* at most a quarter over */
        assert_int_equal(device_cache_class(c), c);           /* a class is its own class */
        last = c;
    }
    assert_int_equal(device_cache_class(SIZE_MAX), SIZE_MAX); /* no class above: as asked */
}

static void test_reuse_by_class(void **state) {
    (void)state;
    void *a = device_cache_alloc(&fake, 1000);
    assert_non_null(a);
    device_cache_free(&fake, a, 1000);
    assert_ptr_equal(device_cache_alloc(&fake, 900), a); /* same class (1024): the kept block */
    void *b = device_cache_alloc(&fake, 1000);          /* a kept block goes to one taker */
    assert_ptr_not_equal(b, a);
    device_cache_free(&fake, a, 1000);
    void *c = device_cache_alloc(&fake, 100000); /* another class: a new block */
    assert_ptr_not_equal(c, a);
    assert_int_equal(atomic_load(&allocs), 3);
    assert_int_equal(atomic_load(&frees), 0);
    device_cache_free(&fake, b, 1000);
    device_cache_free(&fake, c, 100000);
    assert_int_equal(device_cache_trim(&fake), 3);
    assert_int_equal(atomic_load(&frees), 3);
    assert_int_equal(atomic_load(&live_bytes), 0);
}

/* Device tensors free into the cache and the next tensor of the class takes the block. */
static void test_tensors(void **state) {
    (void)state;
    device_register(&fake);
    tensor t = {0}, u = {0};
    int64_t dims[2] = {3, 50};
    assert_int_equal(tensor_alloc_on(&t, DEVICE_TEST, ONYX_FLOAT, 2, dims), ONYX_OK);
    void *block = t.data;
    tensor_release(&t);
    assert_int_equal(atomic_load(&frees), 0);
    assert_int_equal(tensor_alloc_on(&u, DEVICE_TEST, ONYX_FLOAT, 2, dims), ONYX_OK);
    assert_ptr_equal(u.data, block);
    assert_int_equal(atomic_load(&allocs), 1);
    tensor_release(&u);
}

/* Past its bounds the cache frees what it is given. */
static void test_bounded(void **state) {
    (void)state;
    enum { N = 400 };
    void *p[N];
    for (int i = 0; i < N; i++) assert_non_null(p[i] = device_cache_alloc(&fake, 4096));
    for (int i = 0; i < N; i++) device_cache_free(&fake, p[i], 4096);
    int kept = device_cache_trim(&fake);
    assert_true(kept > 0 && kept < N);
    assert_int_equal(atomic_load(&frees), N);
    /* a block larger than the cache's byte bound is freed at once */
    void *big = device_cache_alloc(&fake, (size_t)3 << 29);
    assert_non_null(big);
    device_cache_free(&fake, big, (size_t)3 << 29);
    assert_int_equal(atomic_load(&frees), N + 1);
}

/* The host keeps as much as a device: a block larger than a quarter of the bound (a long
 * prompt's logits) comes back to the next run instead of being mapped and faulted again; one past
 * the bound is freed at once. */
static void test_host_keeps_a_large_block(void **state) {
    (void)state;
    const size_t logits = (size_t)512 * 151936 * 4; /* 311 MB */
    void *p = device_cache_alloc(&fake_host, logits);
    assert_non_null(p);
    device_cache_free(&fake_host, p, logits);
    assert_int_equal(atomic_load(&frees), 0);
    device_cache_run_begins();
    assert_ptr_equal(device_cache_alloc(&fake_host, logits), p);
    assert_int_equal(atomic_load(&allocs), 1);
    device_cache_free(&fake_host, p, logits);
    void *big = device_cache_alloc(&fake_host, (size_t)3 << 29);
    assert_non_null(big);
    device_cache_free(&fake_host, big, (size_t)3 << 29);
    assert_int_equal(atomic_load(&frees), 1); /* the run's own logits block stays */
    assert_int_equal(device_cache_trim(&fake_host), 1);
}

/* Kept blocks of other classes are given back when the device has no room for a new one. */
static void test_out_of_memory_trims(void **state) {
    (void)state;
    capacity = 4 * 1024;
    void *p[4];
    for (int i = 0; i < 4; i++) assert_non_null(p[i] = device_cache_alloc(&fake, 1024));
    for (int i = 0; i < 4; i++) device_cache_free(&fake, p[i], 1024);
    assert_int_equal(atomic_load(&frees), 0);
    void *q = device_cache_alloc(&fake, 2048); /* no room until the four are freed */
    assert_non_null(q);
    assert_int_equal(atomic_load(&frees), 4);
    assert_null(device_cache_alloc(&fake, 4096)); /* none kept, no room: out of memory */
    device_cache_free(&fake, q, 2048);
}

/* A host block of a new class first gives back the blocks kept longest, as many bytes as it
 * takes: blocks of other sizes never add to the peak; blocks of the classes in use stay. */
static void test_host_miss_gives_back_stalest(void **state) {
    (void)state;
    const size_t mib = (size_t)1 << 20;
    void *old1 = device_cache_alloc(&fake_host, 2 * mib), *old2 = device_cache_alloc(&fake_host, 3 * mib);
    void *recent = device_cache_alloc(&fake_host, 5 * mib);
    device_cache_free(&fake_host, old1, 2 * mib);
    device_cache_free(&fake_host, old2, 3 * mib);
    device_cache_free(&fake_host, recent, 5 * mib);
    assert_int_equal(atomic_load(&frees), 0);
    size_t kept = atomic_load(&live_bytes);
    device_cache_run_begins();                           /* a run of another shape */
    void *big = device_cache_alloc(&fake_host, 4 * mib); /* a class none of them has */
    assert_non_null(big);
    assert_int_equal(atomic_load(&frees), 2);        /* the two stalest: 5 MiB >= 4 MiB */
    assert_true(atomic_load(&live_bytes) <= kept);   /* no more host memory than before */
    assert_ptr_equal(device_cache_alloc(&fake_host, 5 * mib), recent); /* still kept */
    assert_int_equal(atomic_load(&allocs), 4);
    device_cache_free(&fake_host, big, 4 * mib);
    device_cache_free(&fake_host, recent, 5 * mib);
    assert_int_equal(device_cache_trim(&fake_host), 2);
    /* a block taken again leaves the others in the order they were kept */
    void *w = device_cache_alloc(&fake_host, 2 * mib), *x = device_cache_alloc(&fake_host, 3 * mib);
    void *y = device_cache_alloc(&fake_host, 5 * mib), *z = device_cache_alloc(&fake_host, 7 * mib);
    device_cache_free(&fake_host, w, 2 * mib);
    device_cache_free(&fake_host, x, 3 * mib);
    device_cache_free(&fake_host, y, 5 * mib);
    device_cache_free(&fake_host, z, 7 * mib);           /* kept: w, x, y, z */
    device_cache_run_begins();
    assert_ptr_equal(device_cache_alloc(&fake_host, 2 * mib), w); /* kept: x, y, z */
    int frees_before = atomic_load(&frees);
    void *v = device_cache_alloc(&fake_host, 3 * mib + mib / 2); /* gives back x (3), then y */
    assert_int_equal(atomic_load(&frees), frees_before + 2);
    assert_ptr_equal(device_cache_alloc(&fake_host, 7 * mib), z);
    device_cache_free(&fake_host, v, 3 * mib + mib / 2);
    device_cache_free(&fake_host, w, 2 * mib);
    device_cache_free(&fake_host, z, 7 * mib);
    assert_int_equal(device_cache_trim(&fake_host), 3);
    assert_int_equal(atomic_load(&live_bytes), 0);
}

/* Within one run, a new class gives back only what earlier runs left: the blocks the run freed
 * stay for its next values of their classes (else every class of a run of a new shape would be
 * mapped, and its pages faulted in, again and again). */
static void test_host_miss_keeps_the_runs_own(void **state) {
    (void)state;
    const size_t mib = (size_t)1 << 20;
    void *before = device_cache_alloc(&fake_host, 2 * mib);
    device_cache_free(&fake_host, before, 2 * mib);        /* an earlier run's */
    device_cache_run_begins();
    void *a = device_cache_alloc(&fake_host, 5 * mib), *b = device_cache_alloc(&fake_host, 7 * mib);
    assert_int_equal(atomic_load(&frees), 1);              /* the earlier run's block went */
    device_cache_free(&fake_host, a, 5 * mib);             /* this run's: a, b */
    device_cache_free(&fake_host, b, 7 * mib);
    void *c = device_cache_alloc(&fake_host, 3 * mib);     /* a class none has */
    assert_non_null(c);
    assert_int_equal(atomic_load(&frees), 1);              /* a and b stay */
    assert_ptr_equal(device_cache_alloc(&fake_host, 5 * mib), a);
    assert_ptr_equal(device_cache_alloc(&fake_host, 7 * mib), b);
    assert_int_equal(atomic_load(&allocs), 4);
    device_cache_free(&fake_host, a, 5 * mib);
    device_cache_free(&fake_host, b, 7 * mib);
    device_cache_free(&fake_host, c, 3 * mib);
    device_cache_run_begins();                             /* the next run may give them back */
    void *d = device_cache_alloc(&fake_host, 14 * mib); /* a, b and c go */
    assert_int_equal(atomic_load(&frees), 4);
    device_cache_free(&fake_host, d, 14 * mib);
    assert_int_equal(device_cache_trim(&fake_host), 1);
    assert_int_equal(atomic_load(&live_bytes), 0);
}

/* Device blocks stay kept when a block of a new class is made. */
static void test_device_miss_keeps(void **state) {
    (void)state;
    void *a = device_cache_alloc(&fake, 2 << 20);
    device_cache_free(&fake, a, 2 << 20);
    void *b = device_cache_alloc(&fake, 4 << 20);
    assert_int_equal(atomic_load(&frees), 0);
    assert_ptr_equal(device_cache_alloc(&fake, 2 << 20), a);
    device_cache_free(&fake, a, 2 << 20);
    device_cache_free(&fake, b, 4 << 20);
}

/* Threads taking and giving blocks: each block has one holder at a time. */
static void *churn(void *arg) {
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int r = 0; r < 2000; r++) {
        seed = seed * 1664525u + 1013904223u;
        size_t bytes = 256u << (seed >> 29); /* eight classes, so blocks are shared */
        unsigned char *p = device_cache_alloc(&fake, bytes);
        if (!p) return "out of memory";
        memset(p, (int)(uintptr_t)arg, bytes);
        for (size_t i = 0; i < bytes; i += 61)
            if (p[i] != (unsigned char)(uintptr_t)arg) return "a block held twice";
        device_cache_free(&fake, p, bytes);
    }
    return NULL;
}

static void test_threads(void **state) {
    (void)state;
    pthread_t t[4];
    for (uintptr_t i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn, (void *)(i + 1)), 0);
    for (int i = 0; i < 4; i++) {
        void *why = NULL;
        pthread_join(t[i], &why);
        if (why) fail_msg("%s", (const char *)why);
    }
    device_cache_trim(&fake);
    assert_int_equal(atomic_load(&live_bytes), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_classes, reset),
        cmocka_unit_test_setup(test_reuse_by_class, reset),
        cmocka_unit_test_setup(test_tensors, reset),
        cmocka_unit_test_setup(test_bounded, reset),
        cmocka_unit_test_setup(test_host_keeps_a_large_block, reset),
        cmocka_unit_test_setup(test_out_of_memory_trims, reset),
        cmocka_unit_test_setup(test_host_miss_gives_back_stalest, reset),
        cmocka_unit_test_setup(test_host_miss_keeps_the_runs_own, reset),
        cmocka_unit_test_setup(test_device_miss_keeps, reset),
        cmocka_unit_test_setup(test_threads, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

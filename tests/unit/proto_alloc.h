/* Allocation for models the unit tests build with protobuf-c structs: everything a test makes is
 * tracked and freed by the `free_all` teardown, so a failing assertion leaks nothing. */
#ifndef ONYX_TESTS_PROTO_ALLOC_H
#define ONYX_TESTS_PROTO_ALLOC_H

#include <stdlib.h>
#include <string.h>

static void *allocs[4096];
static size_t n_allocs;

static inline void *track(void *p) {
    assert_non_null(p);
    assert_true(n_allocs < sizeof allocs / sizeof allocs[0]);
    allocs[n_allocs++] = p;
    return p;
}

static inline void *zalloc(size_t n) { return track(calloc(1, n ? n : 1)); }

static inline int free_all(void **state) {
    (void)state;
    for (size_t i = 0; i < n_allocs; i++) free(allocs[i]);
    n_allocs = 0;
    return 0;
}

/* Appends `item` to a protobuf-c repeated field (`*arr` of `*n` pointers). */
static inline void push(void ***arr, size_t *n, void *item) {
    void **grown = zalloc((*n + 1) * sizeof *grown);
    if (*n) memcpy(grown, *arr, *n * sizeof *grown);
    grown[(*n)++] = item;
    *arr = grown;
}
#define PUSH(arr, n, item) push((void ***)&(arr), &(n), (item))

#endif

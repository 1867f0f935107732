/* A bump allocator: everything a model owns comes from its pool and is freed at once, so the
 * loader's error paths cannot leak. */
#ifndef ONYX_CORE_POOL_H
#define ONYX_CORE_POOL_H

#include <stddef.h>

typedef struct pool_block pool_block;

typedef struct pool {
    pool_block *head;
    size_t used, cap; /* of head */
} pool;

void pool_init(pool *p);
void pool_destroy(pool *p);
/* Zeroed, 64-byte aligned memory; NULL on OOM or when n*size overflows. */
void *pool_alloc(pool *p, size_t n, size_t size);
char *pool_strdup(pool *p, const char *s);
char *pool_strndup(pool *p, const char *s, size_t len);

#endif

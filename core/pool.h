/* A bump allocator: everything a model owns comes from its pool and is freed at once, so the
 * loader's error paths cannot leak. */
#ifndef ONYX_CORE_POOL_H
#define ONYX_CORE_POOL_H

#include <stddef.h>

#include <stdint.h>

typedef struct pool_block pool_block;
typedef struct pool_mapping pool_mapping;

typedef struct pool {
    pool_block *head;
    size_t used, cap; /* of head */
    pool_mapping *maps; /* file mappings, unmapped with the pool */
} pool;

void pool_init(pool *p);
void pool_destroy(pool *p);
/* Zeroed, 64-byte aligned memory; NULL on OOM or when n*size overflows. */
void *pool_alloc(pool *p, size_t n, size_t size);
char *pool_strdup(pool *p, const char *s);
/* Bytes [offset, offset + n) of the open file fd, mapped copy-on-write (writes stay in this
 * process) until the pool is destroyed: pages are read from the file when first touched, so
 * what is never read takes no memory. NULL where the file cannot be mapped. */
void *pool_map(pool *p, int fd, uint64_t offset, size_t n);
char *pool_strndup(pool *p, const char *s, size_t len);

#endif

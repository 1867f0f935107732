/* Bump allocator with 64-byte alignment; large requests get a block of their own. */
#include "core/pool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define POOL_ALIGN 64
#define POOL_BLOCK (64 * 1024)

struct pool_block {
    pool_block *next;
    size_t size;
    _Alignas(POOL_ALIGN) unsigned char data[];
};

struct pool_mapping {
    pool_mapping *next;
    void *addr;
    size_t len;
};

void pool_init(pool *p) { memset(p, 0, sizeof *p); }

void pool_destroy(pool *p) {
    for (pool_mapping *m = p->maps; m; m = m->next) munmap(m->addr, m->len); /* records in blocks */
    pool_block *b = p->head;
    while (b) {
        pool_block *next = b->next;
        free(b);
        b = next;
    }
    pool_init(p);
}

static pool_block *new_block(size_t size) {
    if (size > SIZE_MAX - sizeof(pool_block) - POOL_ALIGN) return NULL;
    pool_block *b = aligned_alloc(POOL_ALIGN, (sizeof(pool_block) + size + POOL_ALIGN - 1) / POOL_ALIGN * POOL_ALIGN);
    if (b) b->size = size;
    return b;
}

void *pool_alloc(pool *p, size_t n, size_t size) {
    if (size != 0 && n > SIZE_MAX / size) return NULL;
    size_t bytes = n * size;
    if (bytes == 0) bytes = 1;
    size_t rounded = (bytes + POOL_ALIGN - 1) & ~(size_t)(POOL_ALIGN - 1);
    if (rounded < bytes) return NULL;
    if (rounded > POOL_BLOCK / 4) {
        /* big: its own block, linked behind the head so the head keeps filling */
        pool_block *b = new_block(rounded);
        if (!b) return NULL;
        if (p->head) {
            b->next = p->head->next;
            p->head->next = b;
        } else {
            b->next = NULL;
            p->head = b;
            p->used = p->cap = rounded;
        }
        memset(b->data, 0, bytes);
        return b->data;
    }
    if (!p->head || p->cap - p->used < rounded) {
        pool_block *b = new_block(POOL_BLOCK);
        if (!b) return NULL;
        b->next = p->head;
        p->head = b;
        p->used = 0;
        p->cap = POOL_BLOCK;
    }
    void *r = p->head->data + p->used;
    p->used += rounded;
    memset(r, 0, bytes);
    return r;
}

void *pool_map(pool *p, int fd, uint64_t offset, size_t n) {
    long page = sysconf(_SC_PAGESIZE);
    pool_mapping *rec = pool_alloc(p, 1, sizeof *rec);
    if (page <= 0 || !rec || n == 0) return NULL;
    uint64_t start = offset / (uint64_t)page * (uint64_t)page;
    size_t lead = (size_t)(offset - start);
    if (n > SIZE_MAX - lead) return NULL;
    void *addr = mmap(NULL, n + lead, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, (off_t)start);
    if (addr == MAP_FAILED) return NULL;
    *rec = (pool_mapping){.next = p->maps, .addr = addr, .len = n + lead};
    p->maps = rec;
    return (char *)addr + lead;
}

char *pool_strndup(pool *p, const char *s, size_t len) {
    char *r = pool_alloc(p, len + 1, 1);
    if (r) {
        if (len) memcpy(r, s, len);
        r[len] = '\0';
    }
    return r;
}

char *pool_strdup(pool *p, const char *s) { return pool_strndup(p, s, strlen(s)); }

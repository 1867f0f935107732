/* Bump allocator with 64-byte alignment; large requests get a block of their own. */
#include "core/pool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define POOL_ALIGN 64
#define POOL_BLOCK (64 * 1024)

struct pool_block {
    pool_block *next;
    size_t size;
    _Alignas(POOL_ALIGN) unsigned char data[];
};

void pool_init(pool *p) { memset(p, 0, sizeof *p); }

void pool_destroy(pool *p) {
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

char *pool_strndup(pool *p, const char *s, size_t len) {
    char *r = pool_alloc(p, len + 1, 1);
    if (r) {
        if (len) memcpy(r, s, len);
        r[len] = '\0';
    }
    return r;
}

char *pool_strdup(pool *p, const char *s) { return pool_strndup(p, s, strlen(s)); }

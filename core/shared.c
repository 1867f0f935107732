/* The shared cache behind core/shared.h: a locked list of (key bytes, object). Entries are few
 * (one per constant weight a kernel repacks), so a list is enough. */
#include "core/shared.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    struct entry *next;
    void *obj;
    void (*release)(void *obj);
    size_t key_size;
    unsigned char key[]; /* key_size bytes */
} entry;

struct shared_cache {
    pthread_mutex_t lock;
    entry *entries;
    size_t count;
};

onyx_status shared_cache_create(shared_cache **out) {
    shared_cache *c = calloc(1, sizeof *c);
    if (!c || pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return onyx_oom("shared cache");
    }
    *out = c;
    return ONYX_OK;
}

void shared_cache_free(shared_cache *c) {
    if (!c) return;
    while (c->entries) {
        entry *next = c->entries->next;
        if (c->entries->release) c->entries->release(c->entries->obj);
        free(c->entries);
        c->entries = next;
    }
    pthread_mutex_destroy(&c->lock);
    free(c);
}

onyx_status shared_cache_get(shared_cache *c, const void *key, size_t key_size,
                             onyx_status (*make)(void *ctx, void **obj),
                             void (*release)(void *obj), void *ctx, void **out, bool *made) {
    onyx_status st = ONYX_OK;
    *made = false;
    pthread_mutex_lock(&c->lock);
    for (entry *e = c->entries; e; e = e->next)
        if (e->key_size == key_size && memcmp(e->key, key, key_size) == 0) {
            *out = e->obj;
            goto done;
        }
    entry *e = malloc(sizeof *e + key_size);
    if (!e) {
        st = onyx_oom("shared cache");
        goto done;
    }
    e->obj = NULL;
    if ((st = make(ctx, &e->obj)) != ONYX_OK) {
        free(e);
        goto done;
    }
    e->release = release;
    e->key_size = key_size;
    memcpy(e->key, key, key_size);
    e->next = c->entries;
    c->entries = e;
    c->count++;
    *out = e->obj;
    *made = true;
done:
    pthread_mutex_unlock(&c->lock);
    return st;
}

size_t shared_cache_count(const shared_cache *c) {
    pthread_mutex_lock((pthread_mutex_t *)&c->lock);
    size_t n = c->count;
    pthread_mutex_unlock((pthread_mutex_t *)&c->lock);
    return n;
}

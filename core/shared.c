/* The shared cache behind core/shared.h: a locked list of (key bytes, object), and the weights
 * those objects can rebuild. Entries are few (one per constant weight a kernel repacks), so
 * lists are enough. */
#include "core/shared.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct entry {
    struct entry *next;
    void *obj;
    void (*release)(void *obj);
    size_t key_size;
    unsigned char key[]; /* key_size bytes */
} entry;

/* A weight an object can rebuild: the first such object (NULL until one is cached: a weight
 * pinned before), and whether the weight is evicted now or pinned in memory. */
typedef struct weight {
    struct weight *next;
    const tensor *t;
    const void *obj;
    onyx_status (*unpack)(const void *obj, void *dst);
    bool evicted, pinned;
} weight;

struct shared_cache {
    pthread_mutex_t lock;
    entry *entries;
    size_t count;
    weight *weights;
};

/* The whole pages inside t's bytes: what eviction hands back (the partial pages at the ends
 * stay, shared with whatever else lives there). False when there are none. */
static bool inner_pages(const tensor *t, char **from, size_t *len) {
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || !t->data) return false;
    uintptr_t a = (uintptr_t)t->data, b = a + t->nbytes;
    uintptr_t f = (a + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
    uintptr_t e = b / (uintptr_t)page * (uintptr_t)page;
    if (e <= f) return false;
    *from = (char *)f;
    *len = e - f;
    return true;
}

static weight *find_weight(shared_cache *c, const tensor *t) {
    for (weight *w = c->weights; w; w = w->next)
        if (w->t == t) return w;
    return NULL;
}

/* t's record, added (with no object yet) when missing; NULL when out of memory. */
static weight *weight_of(shared_cache *c, const tensor *t) {
    weight *w = find_weight(c, t);
    if (w || !(w = calloc(1, sizeof *w))) return w;
    w->next = c->weights;
    w->t = t;
    c->weights = w;
    return w;
}

/* Makes w's pages readable again and rebuilds its bytes. */
static onyx_status restore_locked(weight *w) {
    if (!w->evicted) return ONYX_OK;
    char *from;
    size_t len;
    bool pages = inner_pages(w->t, &from, &len);
    if (pages && mprotect(from, len, PROT_READ | PROT_WRITE) != 0)
        return onyx_error(ONYX_ERR_RUNTIME, "restoring a weight: its pages cannot be mapped");
    onyx_status st = w->unpack(w->obj, w->t->data);
    if (st != ONYX_OK) { /* still evicted: a read faults rather than finding zeros */
        if (pages) (void)mprotect(from, len, PROT_NONE);
        return st;
    }
    w->evicted = false;
    return ONYX_OK;
}

onyx_status shared_cache_create(shared_cache **out) {
    shared_cache *c = calloc(1, sizeof *c);
    if (!c || pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return onyx_oom("shared cache");
    }
    *out = c;
    return ONYX_OK;
}

void shared_cache_forget_weights(shared_cache *c) {
    pthread_mutex_lock(&c->lock);
    while (c->weights) {
        weight *next = c->weights->next;
        char *from;
        size_t len;
        if (c->weights->evicted && inner_pages(c->weights->t, &from, &len))
            (void)mprotect(from, len, PROT_READ | PROT_WRITE);
        free(c->weights);
        c->weights = next;
    }
    pthread_mutex_unlock(&c->lock);
}

void shared_cache_free(shared_cache *c) {
    if (!c) return;
    shared_cache_forget_weights(c);
    while (c->entries) {
        entry *next = c->entries->next;
        if (c->entries->release) c->entries->release(c->entries->obj);
        free(c->entries);
        c->entries = next;
    }
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* The object under key, made (after restoring `source` if it is evicted) when missing. */
static onyx_status get_locked(shared_cache *c, const void *key, size_t key_size,
                              onyx_status (*make)(void *ctx, void **obj),
                              void (*release)(void *obj), void *ctx, const tensor *source,
                              void **out, bool *made) {
    *made = false;
    for (entry *e = c->entries; e; e = e->next)
        if (e->key_size == key_size && memcmp(e->key, key, key_size) == 0) {
            *out = e->obj;
            return ONYX_OK;
        }
    weight *w = source ? find_weight(c, source) : NULL;
    if (w) TRY(restore_locked(w));
    entry *e = malloc(sizeof *e + key_size);
    if (!e) return onyx_oom("shared cache");
    e->obj = NULL;
    onyx_status st = make(ctx, &e->obj);
    if (st != ONYX_OK) {
        free(e);
        return st;
    }
    e->release = release;
    e->key_size = key_size;
    memcpy(e->key, key, key_size);
    e->next = c->entries;
    c->entries = e;
    c->count++;
    *out = e->obj;
    *made = true;
    return ONYX_OK;
}

onyx_status shared_cache_get(shared_cache *c, const void *key, size_t key_size,
                             onyx_status (*make)(void *ctx, void **obj),
                             void (*release)(void *obj), void *ctx, void **out, bool *made) {
    pthread_mutex_lock(&c->lock);
    onyx_status st = get_locked(c, key, key_size, make, release, ctx, NULL, out, made);
    pthread_mutex_unlock(&c->lock);
    return st;
}

onyx_status shared_cache_get_weight(shared_cache *c, const void *key, size_t key_size,
                                    onyx_status (*make)(void *ctx, void **obj),
                                    void (*release)(void *obj), void *ctx, const tensor *weight_,
                                    onyx_status (*unpack)(const void *obj, void *dst), void **out,
                                    bool *made) {
    pthread_mutex_lock(&c->lock);
    onyx_status st = get_locked(c, key, key_size, make, release, ctx, weight_, out, made);
    weight *w = st == ONYX_OK && unpack ? weight_of(c, weight_) : NULL;
    if (st == ONYX_OK && unpack && !w) st = onyx_oom("shared cache");
    if (w && !w->unpack) {
        w->obj = *out;
        w->unpack = unpack;
    }
    pthread_mutex_unlock(&c->lock);
    return st;
}

bool shared_cache_evict(shared_cache *c, const tensor *t) {
    pthread_mutex_lock(&c->lock);
    weight *w = find_weight(c, t);
    char *from;
    size_t len;
    /* unreadable first: where the pages cannot be dropped after, they stay, unread */
    if (w && w->unpack && !w->evicted && !w->pinned && inner_pages(t, &from, &len) &&
        mprotect(from, len, PROT_NONE) == 0) {
        (void)madvise(from, len, MADV_DONTNEED);
        w->evicted = true;
    }
    bool evicted = w && w->evicted;
    pthread_mutex_unlock(&c->lock);
    return evicted;
}

onyx_status shared_cache_restore(shared_cache *c, const tensor *t, bool pin) {
    pthread_mutex_lock(&c->lock);
    /* pinned before any object holds it: never evicted later either */
    weight *w = pin ? weight_of(c, t) : find_weight(c, t);
    onyx_status st = pin && !w ? onyx_oom("shared cache") : ONYX_OK;
    if (w) st = restore_locked(w);
    if (w && pin) w->pinned = true;
    pthread_mutex_unlock(&c->lock);
    return st;
}

bool shared_cache_evicted(shared_cache *c, const tensor *t) {
    pthread_mutex_lock(&c->lock);
    weight *w = find_weight(c, t);
    bool evicted = w && w->evicted;
    pthread_mutex_unlock(&c->lock);
    return evicted;
}

size_t shared_cache_count(const shared_cache *c) {
    pthread_mutex_lock((pthread_mutex_t *)&c->lock);
    size_t n = c->count;
    pthread_mutex_unlock((pthread_mutex_t *)&c->lock);
    return n;
}

/* Device blocks kept for reuse, per device kind (core/device_cache.h). A handful of blocks per
 * output at most, so a short array searched from its end (the block freed last first) does; it
 * stays in the order the blocks were kept, so that its front holds the stalest. */
#include "core/device_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* What one kind keeps at most: enough for the outputs of several runs in flight, small enough
 * that kept blocks never crowd out a model's arenas (and they are given back when memory runs
 * out). The host keeps as much: a new host block first gives back the stalest kept ones, so
 * what is kept does not add to a peak, while a lower bound than one run's largest value (a
 * 512-token prompt's logits over a 152k vocabulary: 311 MB) had every such run map and fault
 * it again (13 % of a Qwen2-0.5B prefill's time, in the kernel clearing pages). */
#define KEEP_BLOCKS 256
#define KEEP_BYTES ((size_t)1 << 30)

typedef struct kept {
    void *p;
    size_t bytes;   /* its class */
    uint64_t run;   /* the run count when it was kept (device_cache_run_begins) */
} kept;

/* Runs begun so far: a block kept since the newest began is that run's own (its values'
 * storage, freed at their last use and taken again by the values after them) and is not given
 * back to make room for a block of a new class in it, which would make every class of that run
 * map and fault its memory again. */
static _Atomic uint64_t runs_begun;

void device_cache_run_begins(void) {
    atomic_fetch_add_explicit(&runs_begun, 1, memory_order_relaxed);
}

typedef struct kind_cache {
    pthread_mutex_t lock;
    kept blocks[KEEP_BLOCKS];
    int n;
    size_t bytes;
} kind_cache;

_Static_assert(DEVICE_KINDS == 3, "one cache per device kind");
static kind_cache caches[DEVICE_KINDS] = {
    {.lock = PTHREAD_MUTEX_INITIALIZER},
    {.lock = PTHREAD_MUTEX_INITIALIZER},
    {.lock = PTHREAD_MUTEX_INITIALIZER},
};

size_t device_cache_class(size_t bytes) {
    if (bytes <= 4096) return bytes <= 256 ? 256 : (bytes + 255) & ~(size_t)255;
    int log2 = 63 - __builtin_clzll((unsigned long long)bytes);
    size_t step = (size_t)1 << (log2 - 2);
    if (bytes > SIZE_MAX - step) return bytes; /* no class above: exactly what was asked */
    return (bytes + step - 1) & ~(step - 1);
}

static kind_cache *cache_of(const device_ops *d) {
    return (unsigned)d->kind < DEVICE_KINDS ? &caches[d->kind] : NULL;
}

/* Under c's lock: takes out the blocks kept longest, before the newest run began, until `bytes`
 * of them are out or none is left, into `gone`; how many. */
static int take_stalest(kind_cache *c, size_t bytes, kept *gone) {
    uint64_t now = atomic_load_explicit(&runs_begun, memory_order_relaxed);
    int n = 0;
    size_t out = 0;
    while (n < c->n && out < bytes && c->blocks[n].run != now) out += c->blocks[n++].bytes;
    memcpy(gone, c->blocks, sizeof *gone * (size_t)n);
    memmove(c->blocks, c->blocks + n, sizeof *gone * (size_t)(c->n - n));
    c->n -= n;
    c->bytes -= out;
    return n;
}

void *device_cache_alloc(const device_ops *d, size_t bytes) {
    size_t cls = device_cache_class(bytes);
    kind_cache *c = cache_of(d);
    kept gone[KEEP_BLOCKS];
    int n_gone = 0;
    if (c) {
        pthread_mutex_lock(&c->lock);
        for (int i = c->n - 1; i >= 0; i--)
            if (c->blocks[i].bytes == cls) {
                void *p = c->blocks[i].p;
                memmove(c->blocks + i, c->blocks + i + 1, sizeof *c->blocks * (size_t)(c->n - i - 1));
                c->n--;
                c->bytes -= cls;
                pthread_mutex_unlock(&c->lock);
                return p;
            }
        /* Host memory is the process's resident size: a new host block first gives back as many
         * bytes of the stalest kept ones, which runs of other shapes left (a prompt of another
         * length) and which would otherwise add to the peak of this one. Runs of one shape never
         * get here once their blocks are kept. Device blocks stay: freeing one waits for the
         * whole device. */
        if (d->kind == DEVICE_CPU) n_gone = take_stalest(c, cls, gone);
        pthread_mutex_unlock(&c->lock);
    }
    for (int i = 0; i < n_gone; i++) d->free(gone[i].p);
    void *p = d->alloc(cls);
    if (!p && device_cache_trim(d) > 0) p = d->alloc(cls);
    return p;
}

void device_cache_free(const device_ops *d, void *p, size_t bytes) {
    if (!p) return;
    size_t cls = device_cache_class(bytes);
    kind_cache *c = cache_of(d);
    if (c) {
        pthread_mutex_lock(&c->lock);
        if (c->n < KEEP_BLOCKS && cls <= KEEP_BYTES - c->bytes) {
            c->blocks[c->n++] =
                (kept){p, cls, atomic_load_explicit(&runs_begun, memory_order_relaxed)};
            c->bytes += cls;
            pthread_mutex_unlock(&c->lock);
            return;
        }
        pthread_mutex_unlock(&c->lock);
    }
    d->free(p);
}

int device_cache_trim(const device_ops *d) {
    kind_cache *c = cache_of(d);
    if (!c) return 0;
    kept gone[KEEP_BLOCKS];
    pthread_mutex_lock(&c->lock);
    int n = c->n;
    for (int i = 0; i < n; i++) gone[i] = c->blocks[i];
    c->n = 0;
    c->bytes = 0;
    pthread_mutex_unlock(&c->lock);
    for (int i = 0; i < n; i++) d->free(gone[i].p);
    return n;
}

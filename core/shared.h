/* Data made once per rep from constants only (reordered or packed weights) and shared by every
 * plan that asks for it under the same key, so that a new input shape costs no weight repacking.
 * Kernels reach it through kernel_shared (core/kernel.h). */
#ifndef ONYX_CORE_SHARED_H
#define ONYX_CORE_SHARED_H

#include <stdbool.h>

#include "core/status.h"
#include "core/value.h"

typedef struct shared_cache shared_cache;

onyx_status shared_cache_create(shared_cache **out);
/* Releases every object (the rep is going away: no plan uses them any more). */
void shared_cache_free(shared_cache *c);

/* The object cached under `key`, made by make(ctx, &obj) on first use (under the cache's lock,
 * so it is made once; *made says whether this call made it). `release` frees it with the
 * cache. */
onyx_status shared_cache_get(shared_cache *c, const void *key, size_t key_size,
                             onyx_status (*make)(void *ctx, void **obj),
                             void (*release)(void *obj), void *ctx, void **out, bool *made);

/* Weights handed back. A constant that a kernel reads only through a cached object made from it
 * alone, from which `unpack(obj, dst)` rebuilds its bytes exactly, need not stay in memory: the
 * executor evicts it (its pages go back to the system and are made unreadable, so that a stray
 * read faults instead of reading zeros) and restores it, in place, before anything else reads
 * it. Objects made from an evicted weight restore it first. All under the cache's lock, so that
 * concurrent prepares see a weight either whole or evicted. */

/* shared_cache_get for an object made from `weight` alone; `unpack` NULL when the object does
 * not hold the weight's bytes exactly (converted, scaled). */
onyx_status shared_cache_get_weight(shared_cache *c, const void *key, size_t key_size,
                                    onyx_status (*make)(void *ctx, void **obj),
                                    void (*release)(void *obj), void *ctx, const tensor *weight,
                                    onyx_status (*unpack)(const void *obj, void *dst), void **out,
                                    bool *made);

/* Evicts `weight` when an object that unpacks it is cached and it is not pinned; true when it is
 * evicted after the call. */
bool shared_cache_evict(shared_cache *c, const tensor *weight);

/* Restores `weight` if evicted; `pin` keeps it in memory from then on (something reads it per
 * run), also when no object holds it yet. */
onyx_status shared_cache_restore(shared_cache *c, const tensor *weight, bool pin);

/* Makes every evicted weight plain memory again (zeroed, not restored) and forgets them all: for
 * the rep going away, before its weights are freed. */
void shared_cache_forget_weights(shared_cache *c);

/* Whether `weight` is evicted now. */
bool shared_cache_evicted(shared_cache *c, const tensor *weight);

/* Objects and bytes of keys held (for tests and logs). */
size_t shared_cache_count(const shared_cache *c);

#endif

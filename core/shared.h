/* Data made once per rep from constants only (reordered or packed weights) and shared by every
 * plan that asks for it under the same key, so that a new input shape costs no weight repacking.
 * Kernels reach it through kernel_shared (core/kernel.h). */
#ifndef ONYX_CORE_SHARED_H
#define ONYX_CORE_SHARED_H

#include "core/status.h"

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

/* Objects and bytes of keys held (for tests and logs). */
size_t shared_cache_count(const shared_cache *c);

#endif

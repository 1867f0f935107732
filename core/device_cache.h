/* Device memory kept for reuse. A device tensor's block, when the tensor is freed, waits here for
 * the next device tensor of its size class, so that runs whose outputs stay on the device (io
 * binding) ask the device for memory only while their first outputs are alive: cudaMalloc costs
 * tens of microseconds and cudaFree waits for the whole device.
 *
 * Freeing a block does not wait for work queued on it: onyx's own work on a value has finished
 * when a run returns, and work a caller queues on a device value must end before the caller frees
 * the value (as with host memory).
 *
 * The CPU's share keeps the large host blocks of core/value.c (its own mapping functions free
 * them): only those ever enter it. A host block that has to be made new first gives back as many
 * bytes of the blocks kept longest before the newest run began, so that blocks of sizes that do
 * not come back (runs of other shapes) never add to the process's peak, while the blocks a run
 * frees and takes again stay. */
#ifndef ONYX_CORE_DEVICE_CACHE_H
#define ONYX_CORE_DEVICE_CACHE_H

#include <stddef.h>

#include "core/device.h"

/* Size classes are at most a quarter apart: the cache hands out blocks of the class's size. */
size_t device_cache_class(size_t bytes);

/* A block of at least `bytes` of d's memory: a kept one of the class, else a new one (after the
 * kept blocks of the kind are given back, where the device has no memory left; for the CPU, after
 * the stalest kept blocks of as many bytes, kept before the newest run began, are); NULL on OOM. */
void *device_cache_alloc(const device_ops *d, size_t bytes);

/* Keeps the block (of a tensor of `bytes`) for reuse, or frees it where the cache is full. */
void device_cache_free(const device_ops *d, void *p, size_t bytes);

/* A run begins (core/exec_run.c, once per run of a session): the blocks kept until now are the
 * ones a new host block may give back. */
void device_cache_run_begins(void);

/* Frees every kept block of d's kind; returns how many. */
int device_cache_trim(const device_ops *d);

#endif

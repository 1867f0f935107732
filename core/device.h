/* Devices as the core below the registry sees them (core/device.c): a kind (the device's slot in
 * the registry, core/device_registry.h, which holds everything else about it), its name, and the
 * memory operations that values, the planner and the copy steps need. Kernels of a device compute on memory of that device only; where a value is made on
 * one device and read on another, prepare inserts a copy step (core/exec_place.c). */
#ifndef ONYX_CORE_DEVICE_H
#define ONYX_CORE_DEVICE_H

#include <stddef.h>

#include "core/status.h"

/* The slots of the registry's entries. The CPU is the host: the memory that graph inputs, outputs
 * and constants live in unless bound elsewhere, and every session's last fallback. The CUDA
 * plugin's kernels carry DEVICE_CUDA (its ABI). */
typedef enum device_kind {
    DEVICE_CPU = 0,
    DEVICE_CUDA = 1,
    /* A device for testing placement on machines without an accelerator: host memory kept apart
     * and stored scrambled, with a subset of the CPU kernels (backend/test_device.c). */
    DEVICE_TEST = 2,
} device_kind;

#define DEVICE_KINDS 3

/* The registered entry's name ("CPU", "CUDA", "TEST"); "?" for a kind not registered. The
 * registry gives each entry's name (device_registry_add), so values can name a device without
 * calling up into it. */
const char *device_name(device_kind kind);
void device_name_register(device_kind kind, const char *name);

typedef struct device_ops {
    device_kind kind;
    /* Device memory of at least `bytes`, 64-byte aligned; NULL when out of memory. */
    void *(*alloc)(size_t bytes);
    void (*free)(void *p);
    /* Copies between host memory and device memory, ordered after the work already queued on
     * `queue` (a run context's queue, below) or, with queue NULL, after all of the device's work.
     * to_host returns once the host buffer holds the data; from_host once the host buffer may be
     * reused. */
    onyx_status (*to_host)(void *queue, void *host_dst, const void *device_src, size_t bytes);
    onyx_status (*from_host)(void *queue, void *device_dst, const void *host_src, size_t bytes);
    /* A copy within the device's memory, ordered like the two above. */
    onyx_status (*copy)(void *queue, void *dst, const void *src, size_t bytes);
    /* A device's work queue: each run context holds one per device its plan uses (a CUDA stream
     * with its library handles), and the device's kernels get it in kernel_call.queue, so that
     * concurrent runs do not share one. finish waits for the queued work and reports its first
     * error. All three are NULL on devices whose kernels run synchronously on the host. */
    onyx_status (*queue_create)(void **out);
    void (*queue_destroy)(void *queue);
    onyx_status (*queue_finish)(void *queue);
    /* Device graphs (CUDA graphs): the work queued between capture_begin and capture_end is
     * recorded instead of run, into a graph that graph_launch replays on the queue, each launch
     * redoing the same kernels on the same addresses. capture_end always ends the capture; with
     * `graph` NULL it discards what was recorded. NULL where the device has no graphs (a device
     * whose capture_begin fails plans as a graph device and runs its steps one by one). */
    onyx_status (*capture_begin)(void *queue);
    onyx_status (*capture_end)(void *queue, void **graph);
    onyx_status (*graph_launch)(void *queue, void *graph);
    void (*graph_free)(void *graph);
} device_ops;

/* The operations of each device kind in use, for what holds device memory outside a plan (tensors
 * that own device memory free it through them). Registered (backend/device.c) once per kind,
 * before any tensor of the kind exists; NULL for a kind not (yet) registered. */
void device_register(const device_ops *ops);
const device_ops *device_ops_of(device_kind kind);

#endif

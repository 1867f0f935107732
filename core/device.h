/* Devices as the core sees them: a kind, and the memory operations that the planner and the copy
 * steps need. Kernels of a device compute on memory of that device only; where a value is made on
 * one device and read on another, prepare inserts a copy step (core/exec.c). */
#ifndef ONYX_CORE_DEVICE_H
#define ONYX_CORE_DEVICE_H

#include <stddef.h>

typedef enum device_kind {
    DEVICE_CPU = 0,
    DEVICE_CUDA = 1,
    /* A device for testing placement on machines without an accelerator: host memory kept apart
     * and stored scrambled, with a subset of the CPU kernels (backend/test_device.c). */
    DEVICE_TEST = 2,
} device_kind;

#define DEVICE_KINDS 3

/* "CPU", "CUDA", "TEST". */
const char *device_name(device_kind kind);

typedef struct device_ops {
    device_kind kind;
    /* Device memory of at least `bytes`, 64-byte aligned; NULL when out of memory. */
    void *(*alloc)(size_t bytes);
    void (*free)(void *p);
    /* Copies between host memory and device memory. */
    void (*to_host)(void *host_dst, const void *device_src, size_t bytes);
    void (*from_host)(void *device_dst, const void *host_src, size_t bytes);
} device_ops;

#endif

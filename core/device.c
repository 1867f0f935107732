/* What the core below the device registry knows of each device kind (core/device.h): its name,
 * which the registry hands down as entries are added, and the memory operations of the kinds in
 * use, which tensors that own device memory free through. */
#include "core/device.h"

#include <stdatomic.h>

static _Atomic(const char *) names[DEVICE_KINDS];
static _Atomic(const device_ops *) registered[DEVICE_KINDS];

void device_name_register(device_kind kind, const char *name) {
    if ((unsigned)kind < DEVICE_KINDS) atomic_store(&names[kind], name);
}

const char *device_name(device_kind kind) {
    const char *name = (unsigned)kind < DEVICE_KINDS ? atomic_load(&names[kind]) : NULL;
    return name ? name : "?";
}

void device_register(const device_ops *ops) {
    if (ops && (unsigned)ops->kind < DEVICE_KINDS) atomic_store(&registered[ops->kind], ops);
}

const device_ops *device_ops_of(device_kind kind) {
    return (unsigned)kind < DEVICE_KINDS ? atomic_load(&registered[kind]) : NULL;
}

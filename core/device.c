/* Device names for messages, logs and profiles, and the registry of each kind's operations. */
#include "core/device.h"

#include <stdatomic.h>

static _Atomic(const device_ops *) registered[DEVICE_KINDS];

void device_register(const device_ops *ops) {
    if (ops && (unsigned)ops->kind < DEVICE_KINDS) atomic_store(&registered[ops->kind], ops);
}

const device_ops *device_ops_of(device_kind kind) {
    return (unsigned)kind < DEVICE_KINDS ? atomic_load(&registered[kind]) : NULL;
}

const char *device_name(device_kind kind) {
    switch (kind) {
    case DEVICE_CPU: return "CPU";
    case DEVICE_CUDA: return "CUDA";
    case DEVICE_TEST: return "TEST";
    }
    return "?";
}

/* The CPU's device entry and its memory, the registry's entries added once
 * (core/device_registry.h), device lists as priority orders, and the session's devices. */
#include "backend/backend.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_cpu/cpu_kernels.h"

static void *cpu_alloc(size_t bytes) { return aligned_alloc(64, (bytes + 63) & ~(size_t)63); }

static onyx_status host_copy(void *queue, void *dst, const void *src, size_t bytes) {
    (void)queue;
    memcpy(dst, src, bytes);
    return ONYX_OK;
}

static const device_ops cpu_device_ops = {
    .kind = DEVICE_CPU,
    .alloc = cpu_alloc,
    .free = free,
    .to_host = host_copy,
    .from_host = host_copy,
    .copy = host_copy,
};

static bool cpu_usable(int index) { return index == 0; }

static const device_ops *cpu_memory(int index) {
    return cpu_usable(index) ? &cpu_device_ops : NULL;
}

/* The CPU keeps tensors between convolutions channels last (oneDNN's nwc / nhwc / ndhwc, which its
 * brgemm convolutions take), float and 8-bit (core/fuse.h). */
static const device_entry cpu_entry = {
    .kind = DEVICE_CPU,
    .name = "CPU",
    .float16_as_float = true,
    .usable = cpu_usable,
    .memory = cpu_memory,
    .kernels = cpu_kernel_table,
    .layouts = {.opaque_min_rank = 3, .opaque_max_rank = 5, .opaque_8bit = true},
};

static pthread_once_t registered_once = PTHREAD_ONCE_INIT;

static void add_entries(void) {
    device_registry_add(&cpu_entry);
    device_registry_add(&cuda_device_entry);
    device_registry_add(&test_device_entry);
}

void backend_register_devices(void) { pthread_once(&registered_once, add_entries); }

onyx_status backend_device_parse(const char *text, device_kind *kind, int *index) {
    backend_register_devices();
    return device_parse(text, kind, index);
}

const device_ops *backend_device_ops(device_kind kind, int index) {
    backend_register_devices();
    const device_entry *e = device_entry_of(kind);
    const device_ops *ops = e && e->usable(index) ? e->memory(index) : NULL;
    device_register(ops); /* for tensors that own memory of the device */
    return ops;
}

onyx_status backend_devices(exec_env *env, device_kind device, int index, bool cpu_first) {
    backend_register_devices();
    if (!device_usable(device, index))
        return onyx_error(ONYX_ERR_DEVICE, "device %s:%d is not usable on this machine",
                          device_name(device), index);
    memset(env->devices, 0, sizeof env->devices);
    for (int k = 0; k < DEVICE_KINDS; k++) {
        const device_entry *e = device_entry_of((device_kind)k);
        if (e && (k == (int)device || !e->on_demand))
            env->devices[k] = backend_device_ops((device_kind)k, k == (int)device ? index : 0);
    }
    env->n_priority = 0;
    bool other = device != DEVICE_CPU && env->devices[device];
    if (cpu_first || !other) env->priority[env->n_priority++] = DEVICE_CPU;
    if (other) env->priority[env->n_priority++] = device;
    if (!cpu_first && other) env->priority[env->n_priority++] = DEVICE_CPU;
    env->device_index = index;
    return ONYX_OK;
}

bool onyx_supports_device(const char *device) {
    device_kind kind;
    int index;
    backend_register_devices();
    return device_lookup(device, &kind, &index) && device_usable(kind, index);
}

bool backend_has_kernel(const graph_node *node, const exec_env *env) {
    for (int i = 0; i < env->n_priority; i++)
        if (device_has_kernel(env->priority[i], node)) return true;
    return false;
}

onyx_status device_parse_list(const char *text, device_kind *kind, int *index, bool *cpu_first) {
    *kind = DEVICE_CPU;
    *index = 0;
    *cpu_first = false;
    if (!text) return ONYX_OK;
    bool chosen = false;
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        while (n && (*p == ' ' || *p == '\t')) p++, n--;
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
        char one[64];
        if (n == 0 || n >= sizeof one)
            return onyx_error(ONYX_ERR_DEVICE, "device list '%s': empty or overlong entry", text);
        memcpy(one, p, n);
        one[n] = '\0';
        device_kind k;
        int i;
        TRY(backend_device_parse(one, &k, &i));
        /* a session runs on one device besides the CPU: a second would be silently unused */
        if (k != DEVICE_CPU && chosen && (k != *kind || i != *index)) {
            char first[32];
            snprintf(first, sizeof first, device_entry_of(*kind)->indexed ? "%s:%d" : "%s",
                     device_name(*kind), *index);
            return onyx_error(ONYX_ERR_DEVICE,
                              "device list '%s': onyx runs on one device besides the CPU, got %s "
                              "and %s",
                              text, first, one);
        }
        if (k != DEVICE_CPU && !chosen) {
            *kind = k;
            *index = i;
            chosen = true;
        }
        if (k == DEVICE_CPU && !chosen) *cpu_first = true;
        if (!end) return ONYX_OK;
        p = end + 1;
    }
}

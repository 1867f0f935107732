/* Device strings and whether a device is usable here. */
#include "backend/backend.h"

#include <ctype.h>
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


onyx_status device_parse(const char *text, device_kind *kind, int *index) {
    if (text && !*text)
        return onyx_error(ONYX_ERR_DEVICE,
                          "the device name is empty (expected CPU, CUDA, CUDA:N or TEST)");
    if (!text || strcasecmp(text, "CPU") == 0) {
        *kind = DEVICE_CPU;
        *index = 0;
        return ONYX_OK;
    }
    if (strcasecmp(text, "TEST") == 0) {
        *kind = DEVICE_TEST;
        *index = 0;
        return ONYX_OK;
    }
    if (strncasecmp(text, "CUDA", 4) == 0) {
        const char *rest = text + 4;
        long n = 0;
        if (*rest == ':') {
            char *end;
            errno = 0;
            if (!isdigit((unsigned char)rest[1])) goto bad;
            n = strtol(rest + 1, &end, 10);
            if (errno || *end || n > 1024) goto bad;
        } else if (*rest) {
            goto bad;
        }
        *kind = DEVICE_CUDA;
        *index = (int)n;
        return ONYX_OK;
    }
bad:
    return onyx_error(ONYX_ERR_DEVICE, "unknown device '%s' (expected CPU, CUDA, CUDA:N or TEST)",
                      text);
}

bool device_usable(device_kind kind, int index) {
    if (kind == DEVICE_CPU || kind == DEVICE_TEST) return index == 0;
    return kind == DEVICE_CUDA && index >= 0 && index < cuda_device_count();
}

static void *cpu_alloc(size_t bytes) { return aligned_alloc(64, (bytes + 63) & ~(size_t)63); }

static onyx_status host_copy(void *queue, void *dst, const void *src, size_t bytes) {
    (void)queue;
    memcpy(dst, src, bytes);
    return ONYX_OK;
}

const device_ops cpu_device_ops = {
    .kind = DEVICE_CPU,
    .alloc = cpu_alloc,
    .free = free,
    .to_host = host_copy,
    .from_host = host_copy,
    .copy = host_copy,
};

static pthread_once_t registered_once = PTHREAD_ONCE_INIT, cuda_once = PTHREAD_ONCE_INIT;

static void register_devices(void) {
    device_register(&cpu_device_ops);
    device_register(&test_device_ops);
}

/* Only when CUDA is asked for: loading the plugin maps the CUDA libraries, about 150 MB of a
 * process's memory and a tenth of a second, which a CPU session has no use for. */
static void register_cuda(void) {
    const device_ops *cuda = cuda_device_count() > 0 ? cuda_device_ops() : NULL;
    if (cuda) device_register(cuda);
}

const device_ops *backend_device_ops(device_kind kind, int index) {
    pthread_once(&registered_once, register_devices);
    if (kind == DEVICE_CUDA) pthread_once(&cuda_once, register_cuda);
    return device_usable(kind, index) ? device_ops_of(kind) : NULL;
}

onyx_status backend_devices(exec_env *env, device_kind device, int index, bool cpu_first) {
    if (!device_usable(device, index))
        return onyx_error(ONYX_ERR_DEVICE, "device %s:%d is not usable on this machine",
                          device_name(device), index);
    memset(env->devices, 0, sizeof env->devices);
    env->devices[DEVICE_CPU] = backend_device_ops(DEVICE_CPU, 0);
    env->devices[DEVICE_TEST] = backend_device_ops(DEVICE_TEST, 0);
    if (device == DEVICE_CUDA) env->devices[DEVICE_CUDA] = backend_device_ops(DEVICE_CUDA, index);
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
    if (device_parse(device, &kind, &index) != ONYX_OK) {
        onyx_error_clear();
        return false;
    }
    return device_usable(kind, index);
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
        TRY(device_parse(one, &k, &i));
        /* a session runs on one device besides the CPU: a second would be silently unused */
        if (k != DEVICE_CPU && chosen && (k != *kind || i != *index)) {
            char first[32];
            snprintf(first, sizeof first, *kind == DEVICE_CUDA ? "%s:%d" : "%s",
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

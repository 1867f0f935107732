/* The device registry (core/device_registry.h): the entries the backend adds, device spellings,
 * and the default kernel lookup in a device's table. Each entry's name goes down to
 * core/device.c, which values name devices by. */
#include "core/device_registry.h"

#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static _Atomic(const device_entry *) entries[DEVICE_KINDS];

void device_registry_add(const device_entry *e) {
    if (!e || (unsigned)e->kind >= DEVICE_KINDS) return;
    device_name_register(e->kind, e->name);
    atomic_store(&entries[e->kind], e);
}

const device_entry *device_entry_of(device_kind kind) {
    return (unsigned)kind < DEVICE_KINDS ? atomic_load(&entries[kind]) : NULL;
}

/* "CPU, CUDA, CUDA:N or TEST": the registered spellings, for messages. */
static const char *spellings(char *buf, size_t cap) {
    const char *all[2 * DEVICE_KINDS];
    char indexed[DEVICE_KINDS][40];
    int n = 0;
    for (int k = 0; k < DEVICE_KINDS; k++) {
        const device_entry *e = device_entry_of((device_kind)k);
        if (!e) continue;
        all[n++] = e->name;
        if (e->indexed) {
            snprintf(indexed[k], sizeof indexed[k], "%s:N", e->name);
            all[n++] = indexed[k];
        }
    }
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && len < cap; i++) {
        const char *sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", sep, all[i]);
    }
    return buf;
}

bool device_lookup(const char *text, device_kind *kind, int *index) {
    if (!text) text = "CPU";
    for (int k = 0; k < DEVICE_KINDS; k++) {
        const device_entry *e = device_entry_of((device_kind)k);
        size_t n = e ? strlen(e->name) : 0;
        if (!e || strncasecmp(text, e->name, n) != 0) continue;
        const char *rest = text + n;
        long i = 0;
        if (*rest == ':' && e->indexed) {
            char *end;
            errno = 0;
            if (!isdigit((unsigned char)rest[1])) break;
            i = strtol(rest + 1, &end, 10);
            if (errno || *end || i > 1024) break;
        } else if (*rest) {
            continue; /* a longer name that starts with this one */
        }
        *kind = e->kind;
        *index = (int)i;
        return true;
    }
    return false;
}

onyx_status device_parse(const char *text, device_kind *kind, int *index) {
    if (device_lookup(text, kind, index)) return ONYX_OK;
    char known[160];
    if (!*text)
        return onyx_error(ONYX_ERR_DEVICE, "the device name is empty (expected %s)",
                          spellings(known, sizeof known));
    return onyx_error(ONYX_ERR_DEVICE, "unknown device '%s' (expected %s)", text,
                      spellings(known, sizeof known));
}

bool device_usable(device_kind kind, int index) {
    const device_entry *e = device_entry_of(kind);
    return e && e->usable(index);
}

static bool same_domain(const char *a, const char *b) {
    if (strcmp(a, "ai.onnx") == 0) a = "";
    if (strcmp(b, "ai.onnx") == 0) b = "";
    return strcmp(a, b) == 0;
}

/* The dtype that picks a kernel: input 0's (omitted or unknown: any). */
static onyx_dtype key_dtype(int n_in, const type_info *const *in_type) {
    if (n_in == 0 || !in_type || !in_type[0]) return ONYX_UNDEFINED;
    const type_info *t = in_type[0];
    return t->kind == ONYX_VALUE_TENSOR ? t->dtype : ONYX_UNDEFINED;
}

static const kernel *find(const device_entry *d, const graph_node *node, onyx_dtype dtype,
                          bool any_dtype) {
    size_t count = 0;
    const kernel *table = d->kernels(&count);
    for (size_t i = 0; i < count; i++) {
        const kernel *k = &table[i];
        if (strcmp(k->op_type, node->op_type) != 0 || !same_domain(k->domain, node->domain))
            continue;
        if (node->version < k->since_min || node->version > k->since_max) continue;
        if (!any_dtype && dtype != ONYX_UNDEFINED && k->dtypes && !dtype_in(dtype, k->dtypes))
            continue;
        return k;
    }
    return NULL;
}

const kernel *device_table_supports(const device_entry *d, const graph_node *node, int n_in,
                                    const type_info *const *in_type) {
    return find(d, node, key_dtype(n_in, in_type), false);
}

const kernel *device_find_kernel(const graph_node *node, int n_in,
                                 const type_info *const *in_type, device_kind kind) {
    const device_entry *d = device_entry_of(kind);
    if (!d) return NULL;
    return (d->supports ? d->supports : device_table_supports)(d, node, n_in, in_type);
}

const kernel *device_supports(const graph_node *node, int n_in, const type_info *const *in_type,
                              device_kind kind) {
    const kernel *k = device_find_kernel(node, n_in, in_type, kind);
    if (k) return k;
    const device_entry *d = device_entry_of(kind);
    if (!d) {
        onyx_error(ONYX_ERR_DEVICE, "no device of kind %d is registered", (int)kind);
        return NULL;
    }
    const char *dot = *node->domain ? "." : "";
    onyx_dtype dtype = key_dtype(n_in, in_type);
    if (!find(d, node, dtype, true))
        onyx_error(ONYX_ERR_UNSUPPORTED, "no %s kernel for op %s%s%s version %d", d->name,
                   node->domain, dot, node->op_type, node->version);
    else if (!find(d, node, dtype, false))
        onyx_error(ONYX_ERR_UNSUPPORTED, "no %s kernel for %s input type %s", d->name,
                   node->op_type, onyx_dtype_name(dtype));
    else /* the table has one, which the device's own query declined */
        onyx_error(ONYX_ERR_UNSUPPORTED, "the %s device does not take %s%s%s version %d with "
                   "input type %s", d->name, node->domain, dot, node->op_type, node->version,
                   onyx_dtype_name(dtype));
    return NULL;
}

bool device_has_kernel(device_kind kind, const graph_node *node) {
    const device_entry *d = device_entry_of(kind);
    return d && find(d, node, ONYX_UNDEFINED, true);
}

const device_layouts *device_layouts_of(device_kind kind) {
    static const device_layouts none = {0};
    const device_entry *d = device_entry_of(kind);
    return d ? &d->layouts : &none;
}

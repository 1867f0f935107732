/* The device registry: one entry per device (CPU, CUDA, TEST) with what the core asks of it, its
 * name and spelling in device lists, whether it is usable here, its memory operations, its kernel
 * table and which kernel takes a node, and the layouts it prefers, so that nothing outside an
 * entry switches over device kinds. The backend adds the entries (backend/device.c); the core
 * reads them. As ggml's registry -> device -> supports_op. A new device takes a slot in
 * device_kind (core/device.h) and an entry added in backend/device.c. */
#ifndef ONYX_CORE_DEVICE_REGISTRY_H
#define ONYX_CORE_DEVICE_REGISTRY_H

#include <stdbool.h>

#include "core/kernel.h"

/* The layouts a device's kernels agree to keep between them (core/fuse.c). */
typedef struct device_layouts {
    /* The opaque layout between convolutions (channels last, core/fuse.h): tensors of rank
     * opaque_min_rank (at least 3: a batch, the channels and a spatial axis) to opaque_max_rank,
     * float, and 8-bit ones where opaque_8bit (quantized convolutions). opaque_max_rank 0: the
     * device keeps every tensor plain. */
    int opaque_min_rank, opaque_max_rank;
    bool opaque_8bit;
} device_layouts;

typedef struct device_entry device_entry;

/* The kernel of the device for a node with these input types, or NULL (input types may be NULL:
 * unknown). A query: it sets no message (device_supports says why none). */
typedef const kernel *(*device_supports_fn)(const device_entry *d, const graph_node *node,
                                            int n_in, const type_info *const *in_type);

struct device_entry {
    device_kind kind; /* the entry's slot, and the device of its kernels (kernel.device) */
    const char *name; /* as device lists spell it, matched ignoring case: "CPU", "CUDA", "TEST" */
    bool indexed;     /* spelled NAME or NAME:N, N choosing one of several (GPUs) */
    /* Made ready only when a session asks for it (CUDA: loading the plugin maps ~150 MB); the
     * others are ready in every session, for values bound in their memory. */
    bool on_demand;
    /* Its float16 kernels compute in float, as the CPU's: the float16-as-float rewrite may apply
     * where only such devices run a graph (a GPU has float16 arithmetic). */
    bool float16_as_float;
    /* Whether device `index` can run kernels on this machine (CUDA: the plugin loaded and a GPU
     * present). */
    bool (*usable)(int index);
    /* The memory operations of device `index`; NULL where not usable. */
    const device_ops *(*memory)(int index);
    /* The kernel table (count 0 for a device without its plugin). */
    const kernel *(*kernels)(size_t *count);
    /* NULL: device_table_supports, the first table entry matching op, domain, version and
     * input 0's dtype. */
    device_supports_fn supports;
    device_layouts layouts;
};

/* Adds an entry in its kind's slot (once per kind; a second add of the same kind replaces it). */
void device_registry_add(const device_entry *e);
/* The entry of a kind, NULL when none was added. */
const device_entry *device_entry_of(device_kind kind);

/* Parses a device's spelling: a registered name (ignoring case), with ":N" where the device is
 * indexed; NULL is the CPU. False for an empty or unknown name, without a message. */
bool device_lookup(const char *text, device_kind *kind, int *index);
/* device_lookup, where an empty or unknown name is an error naming it and listing the known
 * spellings. */
onyx_status device_parse(const char *text, device_kind *kind, int *index);
/* Whether the device can run kernels here (false for a kind not registered). */
bool device_usable(device_kind kind, int index);

/* The device's kernel for a node (its supports query, or the table lookup), or NULL without a
 * message: the question "has the device a kernel for it" (kernel_selector). */
const kernel *device_find_kernel(const graph_node *node, int n_in,
                                 const type_info *const *in_type, device_kind kind);
/* device_find_kernel's answer, or NULL with a message naming the device, op, version and dtype:
 * the selector whose failure is the caller's error (kernel_selector). */
const kernel *device_supports(const graph_node *node, int n_in, const type_info *const *in_type,
                              device_kind kind);
/* The default supports query: the first table entry that fits (no message). */
const kernel *device_table_supports(const device_entry *d, const graph_node *node, int n_in,
                                    const type_info *const *in_type);
/* Whether some kernel of the device serves the node's op and version, whatever the dtype. */
bool device_has_kernel(device_kind kind, const graph_node *node);

/* The layouts of a device (none for a kind not registered). */
const device_layouts *device_layouts_of(device_kind kind);

#endif

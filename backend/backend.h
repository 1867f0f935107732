/* Backend internals: device strings, kernel selection with CPU fallback. */
#ifndef ONYX_BACKEND_H
#define ONYX_BACKEND_H

#include "core/exec.h"

/* Parses "CPU", "CUDA", "CUDA:N" (case-insensitive); NULL or "" is CPU. */
onyx_status device_parse(const char *text, device_kind *kind, int *index);
/* True when the device can run kernels on this machine. */
bool device_usable(device_kind kind, int index);

/* The kernel for a node: the requested device's table first, then the CPU's. NULL with a
 * message naming op, version and dtype when none fits. */
const kernel *backend_select(const graph_node *node, int n_in, const type_info *const *in_type,
                             device_kind device);

/* True when some kernel serves the node's op and version on `device` or the CPU, whatever the
 * dtype (used by is_compatible before types are known). */
bool backend_has_kernel(const graph_node *node, device_kind device);

#endif

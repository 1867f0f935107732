/* The opaque layout between convolutions (core/fuse_blocked.c, a step of the CPU's fusion pass):
 * what kernels that read an opaque tensor ask of it. */
#ifndef ONYX_CORE_FUSE_BLOCKED_H
#define ONYX_CORE_FUSE_BLOCKED_H

#include "core/value.h"

struct graph_node;

/* Whether a node's output, opaque (channels last), is stored as the plain tensor is: a global
 * pooling ([N, C, 1, ...]), which has no spatial extent. Such a step may read an opaque X and
 * still hand a plain Y to any reader. */
bool fuse_opaque_is_plain(const struct graph_node *n, const type_info *y);

#endif

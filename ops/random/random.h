/* What the random ops' schemas and CPU kernels share: reading the seed attribute the way the
 * ONNX reference does (numpy.random.RandomState(int(seed))). */
#ifndef ONYX_OPS_RANDOM_H
#define ONYX_OPS_RANDOM_H

#include <stdbool.h>

#include "core/rng.h"
#include "ops/schema.h"

/* Seeds `r` from the node's float `seed` attribute (truncated to an integer, taken modulo 2^32,
 * since numpy only accepts [0, 2^32)), or from the clock when the node has none. Fails on a
 * non-finite seed. */
onyx_status ops_random_init(const graph_node *n, rng *r);

/* Fails on a non-finite seed attribute (for inference). */
onyx_status ops_random_check_seed(const graph_node *n);

/* Output dtype of the random ops: the `dtype` attribute when present (it must be in `allowed`),
 * else `dflt`. */
onyx_status ops_random_dtype(const graph_node *n, onyx_dtype dflt, dtype_mask allowed,
                             onyx_dtype *out);

#endif

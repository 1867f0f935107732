/* What the Reduce* schemas and their kernels share: which axes a node reduces, whether its axes
 * come from an attribute or from input 1, and the element types each version allows. */
#ifndef ONYX_OPS_REDUCE_H
#define ONYX_OPS_REDUCE_H

#include "ops/schema.h"

/* True when this node's version takes `axes` as input 1 (ReduceSum 13+, the others 18+). */
bool reduce_axes_from_input(const graph_node *n);

/* Sets mask[0..rank) to the axes `n` reduces. `axes` is input 1 (NULL when omitted) for the
 * versions that take it; the attribute is read otherwise. Empty axes reduce everything, or
 * nothing with noop_with_empty_axes. Out-of-range axes fail. */
onyx_status reduce_axes_mask(const graph_node *n, const tensor *axes, int rank, bool *mask);

#endif

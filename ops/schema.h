/* Operator schemas: one entry per (domain, op, since_version) with arity, attribute types and
 * type+shape inference. A node's version is the greatest since_version <= the model's opset. */
#ifndef ONYX_OPS_SCHEMA_H
#define ONYX_OPS_SCHEMA_H

#include "core/op_schema.h"

/* Schema a node resolves to: the greatest since_version <= opset. NULL with a message when the
 * op is unknown or no version is <= opset. */
const op_schema *schema_lookup(const char *domain, const char *op_type, int64_t opset);

/* Newest opset onyx knows for a domain (for run_node without an explicit version). */
int64_t schema_max_opset(const char *domain);

/* The registry of every schema above, for the loader (core/op_schema.h). */
extern const op_registry ops_registry;

/* Visits every schema (coverage dumps). */
void schema_foreach(void (*fn)(const op_schema *s, void *arg), void *arg);

/* ---- inference helpers shared by op files */

/* Fails with "input i: expected …" when input i is absent or not a tensor. */
onyx_status infer_need_tensor(infer_ctx *c, int i);
/* Output i = input j's type (same dtype and shape). */
onyx_status infer_same_as_input(infer_ctx *c, int out, int in);
/* Multidirectional (numpy) broadcast of inputs' shapes into *rank/dims. Unknown dims stay -1;
 * an unknown rank gives rank -1. Fails on incompatible known dims. */
onyx_status infer_broadcast(infer_ctx *c, int first, int count, int *rank, int64_t *dims);
/* Normalizes a possibly negative axis against rank; error names the node. */
onyx_status infer_axis(infer_ctx *c, int64_t axis, int rank, int *out);
/* Requires every present input in [first, first+count) to have the dtype of input `first`. */
onyx_status infer_same_dtypes(infer_ctx *c, int first, int count);
/* Requires input i's dtype to be in mask. */
onyx_status infer_dtype_in(infer_ctx *c, int i, dtype_mask mask);

#endif

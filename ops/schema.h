/* Operator schemas: one entry per (domain, op, since_version) with arity, attributes and
 * type+shape inference. A node's version is the one its domain's opset gives it in ONNX's version
 * history (ops/onnx_versions.h); onyx runs it only when it implements exactly that version. */
#ifndef ONYX_OPS_SCHEMA_H
#define ONYX_OPS_SCHEMA_H

#include "core/op_schema.h"

/* The schema a node of `op_type` resolves to under `opset` of its domain (op_registry.resolve). */
onyx_status schema_resolve(const char *domain, const char *op_type, int64_t opset,
                           const op_schema **out);
/* The same schema, or NULL without a message (op_registry.find). */
const op_schema *schema_find(const char *domain, const char *op_type, int64_t opset);
/* schema_resolve and schema_find over given tables (unit tests): spec_versions is ONNX's
 * 0-terminated version list of the op (NULL outside the standard domains), versions onyx's
 * (OP_END-terminated, or NULL). */
onyx_status schema_resolve_in(const int *spec_versions, const op_schema *versions,
                              const char *domain, const char *op_type, int64_t opset,
                              const op_schema **out);
const op_schema *schema_find_in(const int *spec_versions, const op_schema *versions,
                                int64_t opset);
/* schema_resolve's schema, or NULL with its message. */
const op_schema *schema_lookup(const char *domain, const char *op_type, int64_t opset);

/* Newest opset onyx knows for a domain, 0 for a domain it knows nothing of. */
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
/* Hands the window the node's inference resolved to its kernels (infer_ctx.params, when asked):
 * the one place a convolution's or pool's geometry comes from (core/op_params.h). */
void infer_set_window(infer_ctx *c, const geom_window *w);
/* Hands a product's geometry (A of rank ra and dims a @ B of rank rb and dims b, as the kernels
 * read them) to its kernels (infer_ctx.params, when asked) once every dim is known; a refusal of
 * geometry/matmul.h's rule is the error. Unknown dims leave it to each run (OP_GEOMETRY). */
onyx_status infer_set_matmul(infer_ctx *c, int ra, const int64_t *a, int rb, const int64_t *b);
/* Normalizes one axis as infer_axis does and hands it to the node's kernels (infer_ctx.params,
 * when asked): the one place the axis of an op along one axis comes from. */
onyx_status infer_kernel_axis(infer_ctx *c, int64_t axis, int rank, int *out);
/* Hands the set mask[0..rank) of axes to the node's kernels (infer_ctx.params, when asked). */
void infer_set_axes(infer_ctx *c, int rank, const bool *mask);
/* Hands an attention's geometry to its kernels (infer_ctx.params, when asked); unknown sizes
 * leave it to each run (OP_GEOMETRY). */
void infer_set_attention(infer_ctx *c, const geom_attention *d);

#endif

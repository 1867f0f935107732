/* Operator schemas: one entry per (domain, op, since_version) with arity, attribute types and
 * type+shape inference. A node's version is the greatest since_version <= the model's opset. */
#ifndef ONYX_OPS_SCHEMA_H
#define ONYX_OPS_SCHEMA_H

#include "../core/graph.h"

#define ONYX_VARIADIC 127

typedef struct attr_spec {
    const char *name;
    attr_type type;
} attr_spec;

/* What inference sees of one node. in[i] is NULL for an omitted input; in_value[i] is the
 * input's value when it is known (initializer, folded constant, or at run time the real input),
 * else NULL. out[i] starts unknown (kind NONE); infer fills what it can. Unknown dims are -1.
 * A value that inference leaves partly unknown is sized at run time. */
typedef struct infer_ctx {
    const graph_node *node;
    int n_in, n_out;
    const type_info *const *in;
    const tensor *const *in_value;
    type_info *out;
} infer_ctx;

enum {
    OP_NONDETERMINISTIC = 1u << 0, /* never folded at prepare (random ops) */
};

typedef struct op_schema {
    const char *domain;         /* "" for ai.onnx */
    const char *op_type;
    int since_version;
    int min_inputs, max_inputs;  /* max ONYX_VARIADIC for variadic */
    int min_outputs, max_outputs;
    const attr_spec *attrs;      /* checked attribute types; {NULL} terminated; may be NULL */
    onyx_status (*infer)(infer_ctx *ctx); /* NULL: outputs unknown until run time */
    unsigned flags;
} op_schema;

/* Each op file defines `const op_schema op_<Name>[]`: its versions in increasing order, ended by
 * an entry with op_type NULL. The ops/list_*.h files name them for the registry. */
#define OP_END {0}

/* Schema a node resolves to: the greatest since_version <= opset. NULL with a message when the
 * op is unknown or no version is <= opset. */
const op_schema *schema_lookup(const char *domain, const char *op_type, int64_t opset);

/* Newest opset onyx knows for a domain (for run_node without an explicit version). */
int64_t schema_max_opset(const char *domain);

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

/* The operator-schema types the core works with: graph nodes point at schemas, prepare runs their
 * inference. The schemas themselves live in ops/ and reach the core through an op_registry that the
 * caller of the loader passes in, so that the core needs no ops/ table. The rule is that core/
 * includes nothing from ops/; today core/fuse.c and core/exec_view.c still include
 * ops/shape_common.h for shape helpers (to move into shared geometry, issue 33). */
#ifndef ONYX_CORE_OP_SCHEMA_H
#define ONYX_CORE_OP_SCHEMA_H

#include "core/graph.h"
#include "core/op_params.h"

/* The max_inputs / max_outputs of a variadic op, and the most inputs or outputs a node may have
 * (real graphs Concat hundreds of tensors). Nothing sizes an array by it: per-node arrays are
 * allocated for the node's own count. */
#define ONYX_VARIADIC 65535

typedef struct attr_spec {
    const char *name;
    attr_type type;
} attr_spec;

/* What inference sees of one node. in[i] is NULL for an omitted input; in_value[i] is the
 * input's value when it is known (initializer, folded constant, or at run time the real input),
 * else NULL. out[i] starts unknown (kind NONE); infer fills what it can. Unknown dims are -1.
 * A value that inference leaves partly unknown is sized at run time. params, when not NULL,
 * starts OP_PARAMS_NONE: a schema whose kernels compute from a resolved geometry writes it there
 * (core/op_params.h), as it resolved it for the output shapes. */
typedef struct infer_ctx {
    const graph_node *node;
    int n_in, n_out;
    const type_info *const *in;
    const tensor *const *in_value;
    type_info *out;
    op_params *params;
} infer_ctx;

enum {
    OP_NONDETERMINISTIC = 1u << 0, /* never folded at prepare (random ops) */
    OP_SHAPE_ONLY = 1u << 1,       /* outputs depend on input shapes only, not their data (Shape,
                                      Size): folded whenever the shapes are known */
    OP_GEOMETRY = 1u << 2,         /* infer resolves the geometry the kernels compute with
                                      (infer_ctx.params): where it resolves none at plan time
                                      (inputs of unknown type or rank), each run does */
};

typedef struct op_schema {
    const char *domain;         /* "" for ai.onnx */
    const char *op_type;
    int since_version;
    int min_inputs, max_inputs;  /* max ONYX_VARIADIC for variadic */
    int min_outputs, max_outputs;
    const attr_spec *attrs;      /* every attribute this version has, {NULL} terminated; NULL
                                    for none: a node with any other attribute is refused */
    onyx_status (*infer)(infer_ctx *ctx); /* NULL: outputs unknown until run time */
    unsigned flags;
} op_schema;

/* Each op file defines `const op_schema op_<Name>[]`: its versions in increasing order, ended by
 * an entry with op_type NULL. The ops/<family>/list.h files name them for the registry. */
#define OP_END {0}

/* The schema tables as the loader sees them. */
typedef struct op_registry {
    /* The schema of the version of op_type that `opset` of its domain asks for (for the standard
     * domains, as ONNX's version history has it). ONYX_ERR_INVALID_MODEL when the op has no
     * version at or below opset; ONYX_ERR_UNSUPPORTED naming the op and the version when onyx
     * does not implement that version, or the op. */
    onyx_status (*resolve)(const char *domain, const char *op_type, int64_t opset,
                           const op_schema **out);
    /* The same schema, or NULL where resolve would fail, without a message: the question "is
     * there one", for the graph rewrites that make an op only where the registry has it. */
    const op_schema *(*find)(const char *domain, const char *op_type, int64_t opset);
    /* Newest opset onyx knows for a domain; 0 for a domain it knows nothing of. */
    int64_t (*max_opset)(const char *domain);
} op_registry;

#endif

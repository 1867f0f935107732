/* The graph IR: values and nodes referred to by index, attributes parsed once, subgraphs that
 * capture values of their enclosing graph. Everything is allocated from the model's pool. */
#ifndef ONYX_CORE_GRAPH_H
#define ONYX_CORE_GRAPH_H

#include "core/pool.h"
#include "core/value.h"

struct op_schema;
struct graph;

typedef enum attr_type {
    ATTR_UNDEFINED = 0,
    ATTR_FLOAT = 1,
    ATTR_INT = 2,
    ATTR_STRING = 3,
    ATTR_TENSOR = 4,
    ATTR_GRAPH = 5,
    ATTR_FLOATS = 6,
    ATTR_INTS = 7,
    ATTR_STRINGS = 8,
    ATTR_TENSORS = 9,
    ATTR_GRAPHS = 10,
    ATTR_SPARSE_TENSOR = 11,
    ATTR_SPARSE_TENSORS = 12,
    ATTR_TYPE_PROTO = 13,
    ATTR_TYPE_PROTOS = 14,
} attr_type;

/* The type's name as ONNX spells it ("INTS"), "unknown" for a number that is none. */
const char *graph_attr_type_name(int type);

/* Number an AttributeProto.type has; sparse tensors are stored densified as tensors. */
typedef struct graph_attr {
    const char *name;
    attr_type type;
    float f;
    int64_t i;
    const char *s;       /* STRING: NUL-terminated copy */
    size_t s_len;
    tensor *t;           /* TENSOR / SPARSE_TENSOR (densified) */
    struct graph *g;     /* GRAPH */
    type_info *tp;       /* TYPE_PROTO */
    size_t n;            /* element count of the list forms */
    const float *floats;
    const int64_t *ints;
    const char *const *strings;
    tensor *const *tensors;
    struct graph *const *graphs;
    type_info *const *tps;
} graph_attr;

enum {
    GV_INPUT = 1u << 0,       /* a graph input (not an initializer) */
    GV_OUTPUT = 1u << 1,      /* a graph output */
    GV_INITIALIZER = 1u << 2, /* `init` holds its value (initializer or folded Constant) */
    GV_CAPTURED = 1u << 3,    /* defined in an enclosing graph: see `outer` */
};

typedef struct graph_value {
    const char *name;
    type_info type;            /* declared type (input/output/value_info), may be partial */
    const char *const *dim_params; /* declared symbolic dim names (type.rank entries, NULL each
                                      where none); NULL when the shape is not declared */
    tensor *init;              /* GV_INITIALIZER: the constant value */
    int producer;              /* producing node index, -1 for inputs/initializers/captured */
    int outer;                 /* GV_CAPTURED: index of the value in graph->parent */
    unsigned flags;
} graph_value;

typedef struct graph_node {
    const char *name;          /* "" when the model gives none */
    const char *op_type;
    const char *domain;        /* "" for ai.onnx */
    int version;               /* resolved since_version of the schema */
    const struct op_schema *schema;
    const char *unsupported;   /* when schema is NULL: why ("Attention-25 is newer than ...") */
    int n_inputs, n_outputs;
    int *inputs;               /* value indices; -1 = omitted optional input */
    int *outputs;              /* value indices; -1 = omitted optional output */
    int n_attrs;
    graph_attr *attrs;
    int n_captures;            /* values of this graph read by this node's subgraphs */
    int *captures;
} graph_node;

typedef struct graph {
    const char *name;
    struct graph *parent;      /* enclosing graph of a subgraph; NULL for the main graph */
    int n_values, n_nodes, n_inputs, n_outputs;
    graph_value *values;
    graph_node *nodes;         /* in a valid topological order */
    int *inputs;               /* graph inputs in order (initializers excluded) */
    int *outputs;
    const struct model *model; /* owning model (opsets, pool) */
} graph;

typedef struct opset_import {
    const char *domain;        /* "" for ai.onnx */
    int64_t version;
} opset_import;

/* The loaded model (the public onyx_model). Reference counted so that reps keep it alive. */
/* One metadata_props entry of a model. */
typedef struct model_prop {
    const char *key, *value;
} model_prop;

typedef struct model {
    int refs;
    pool pool;
    int64_t ir_version;
    /* ModelProto's descriptive fields ("" when absent), for the metadata API */
    const char *producer_name, *producer_version, *domain, *doc_string, *graph_doc_string;
    int64_t model_version;     /* 0 when absent */
    int n_props;
    model_prop *props;
    int n_opsets;
    opset_import *opsets;
    graph *main;
    const char *base_dir;      /* folder for external data; NULL refuses it */
} model;

/* ---- attributes */

const graph_attr *node_attr(const graph_node *n, const char *name);
int64_t attr_int(const graph_node *n, const char *name, int64_t dflt);
float attr_float(const graph_node *n, const char *name, float dflt);
const char *attr_string(const graph_node *n, const char *name, const char *dflt);
/* Count of an INTS attribute (0 and *out NULL when absent). */
size_t attr_ints(const graph_node *n, const char *name, const int64_t **out);
size_t attr_floats(const graph_node *n, const char *name, const float **out);
const tensor *attr_tensor(const graph_node *n, const char *name);
const graph *attr_graph(const graph_node *n, const char *name);

/* Transpose's perm attribute for an input of `rank`, by geom_transpose_perm (absent: the axes
 * reversed; present: checked to be a permutation of 0..rank-1). Read where the schema, the
 * kernels and the planner's views and fusions need it. */
onyx_status node_transpose_perm(const graph_node *n, int rank, int64_t *perm);
/* node_transpose_perm as a question: false, with no message set, where the attribute is not a
 * permutation for `rank` (the planner's matchers then leave the node alone; its kernel says
 * why when it runs). */
bool node_transpose_perm_ok(const graph_node *n, int rank, int64_t *perm);

/* "node 'conv1' (Conv-11)" into buf, for error messages. */
const char *node_label(const graph_node *n, char *buf, size_t cap);

/* Opset the model imports for `domain` ("" and "ai.onnx" are the same), 0 when not imported. */
int64_t model_opset(const model *m, const char *domain);

/* Looks a value up by name in one graph (not its parents); -1 when absent. */
int graph_find_value(const graph *g, const char *name);

void model_retain(model *m);
void model_release(model *m);

#endif

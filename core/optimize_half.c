/* float16 computed in float32 (optimization level ALL, sessions on the CPU alone). x86 has no
 * float16 arithmetic: a float16 kernel converts its operands to float, computes, and converts
 * back, op by op, and the float kernels' fusions and opaque layouts never apply. onnxruntime's
 * CPU provider runs such models as their float twins, with Casts where float16 enters and
 * leaves; so does this pass:
 *   - dtypes are inferred once over the graph (declared input types, initializers, schemas);
 *   - each node of a type-generic float op (below) that reads float16 reads a float copy
 *     instead and writes float: a Cast makes the copy where a float16 value first meets such a
 *     node (initializers' Casts fold once at prepare), and a Cast back to float16 remakes a
 *     converted value for what else reads it (another op, a subgraph, a graph output);
 *   - a node with an input whose dtype inference cannot tell is left as it is.
 * Results are those of float arithmetic rounded to float16 where float16 is read out: as close
 * to the exact values as the float16 kernels' or closer. */
#include "core/optimize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"

/* Ops whose float16 and float forms compute the same function, outputs float16 exactly where a
 * float16 input makes them so: arithmetic, activations, normalizations, pooling, products, and
 * the data movement between them (so that a converted region needs no Casts inside). */
static const char *const generic_ops[] = {
    "Abs", "Add", "AveragePool", "BatchNormalization", "Clip", "Concat", "Conv", "ConvTranspose",
    "Div", "Einsum", "Elu", "Erf", "Exp", "Expand", "Flatten", "Gather", "GatherElements", "Gelu",
    "Gemm", "GlobalAveragePool", "GlobalMaxPool", "GroupNormalization", "HardSigmoid",
    "HardSwish", "Identity", "InstanceNormalization", "LayerNormalization", "LeakyRelu", "Log",
    "LogSoftmax", "MatMul", "Max", "MaxPool", "Mean", "Min", "Mish", "Mul", "Neg", "Pad", "Pow",
    "PRelu", "Reciprocal", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceSum", "Relu", "Reshape",
    "Resize", "RMSNormalization", "Selu", "Sigmoid", "Slice", "Softmax", "Softplus", "Split",
    "Sqrt", "Squeeze", "Sub", "Sum", "Swish", "Tanh", "Tile", "Transpose", "Unsqueeze", "Where",
};

static bool generic_op(const graph_node *n) {
    if (*n->domain) return false;
    for (size_t i = 0; i < sizeof generic_ops / sizeof *generic_ops; i++)
        if (!strcmp(n->op_type, generic_ops[i])) return true;
    return false;
}

/* Shape and Size: they read their input's shape alone. */
static bool shape_only(const graph_node *n) {
    return !*n->domain && n->n_inputs == 1 && n->inputs[0] >= 0 &&
           (!strcmp(n->op_type, "Shape") || !strcmp(n->op_type, "Size"));
}

/* Whether value v is a float16 output of a node the pass converts (so it has a float copy; a
 * converted node's outputs of other types, as Pow's of a float base, keep theirs). */
static bool made_by_converted(const graph *g, const bool *conv, const onyx_dtype *dt, int v) {
    int p = v >= 0 ? g->values[v].producer : -1;
    return p >= 0 && conv[p] && dt[v] == ONYX_FLOAT16;
}

/* Whether float16 can enter g at all: an input or initializer of that type, or a node asking for
 * it (Cast's "to", a "dtype", a float16 tensor attribute). The type inference runs only then. */
static bool may_hold_half(const graph *g) {
    for (int v = 0; v < g->n_values; v++) {
        const graph_value *gv = &g->values[v];
        if (((gv->flags & GV_INITIALIZER) && gv->init && gv->init->dtype == ONYX_FLOAT16) ||
            ((gv->flags & (GV_INPUT | GV_CAPTURED)) && gv->type.dtype == ONYX_FLOAT16))
            return true;
    }
    for (int n = 0; n < g->n_nodes; n++)
        for (int a = 0; a < g->nodes[n].n_attrs; a++) {
            const graph_attr *at = &g->nodes[n].attrs[a];
            if ((at->type == ATTR_INT && at->i == ONYX_FLOAT16 &&
                 (!strcmp(at->name, "to") || !strcmp(at->name, "dtype"))) ||
                (at->type == ATTR_TENSOR && at->t && at->t->dtype == ONYX_FLOAT16))
                return true;
        }
    return false;
}

/* Every value's dtype as inference tells it (ONYX_UNDEFINED where it cannot). */
static onyx_status infer_dtypes(const graph *g, onyx_dtype *dt) {
    type_info *types;
    TRY(graph_infer_types(g, &types));
    for (int v = 0; v < g->n_values; v++)
        dt[v] = types[v].kind == ONYX_VALUE_TENSOR ? types[v].dtype : ONYX_UNDEFINED;
    graph_types_free(g, types);
    return ONYX_OK;
}

/* The graph being built: values and nodes appended, blocks it owns listed. */
typedef struct builder {
    graph *g;
    int cap_values, cap_nodes;
    void **owned;
    int n_owned, cap_owned;
    const op_schema *cast;
} builder;

static bool own(builder *b, void *p) {
    if (!p) return false;
    if (b->n_owned == b->cap_owned) {
        int cap = b->cap_owned ? 2 * b->cap_owned : 64;
        void **o = realloc(b->owned, (size_t)cap * sizeof *o);
        if (!o) {
            free(p);
            return false;
        }
        b->owned = o;
        b->cap_owned = cap;
    }
    b->owned[b->n_owned++] = p;
    return true;
}

/* A new float value named after value v; its index, or -1 without memory. */
static int new_value(builder *b, int v) {
    graph *g = b->g;
    if (g->n_values == b->cap_values) return -1; /* sized up front */
    const char *base = g->values[v].name ? g->values[v].name : "";
    size_t len = strlen(base) + sizeof "/float32";
    char *name = malloc(len);
    if (!own(b, name)) return -1;
    snprintf(name, len, "%s/float32", base);
    graph_value *nv = &g->values[g->n_values];
    memset(nv, 0, sizeof *nv);
    nv->name = name;
    type_init(&nv->type);
    nv->producer = -1;
    nv->outer = -1;
    return g->n_values++;
}

/* Appends Cast(from) -> to, to dtype `to_dtype`. */
static onyx_status add_cast(builder *b, int from, int to, onyx_dtype to_dtype) {
    graph *g = b->g;
    int *io = calloc(2, sizeof *io);
    graph_attr *attr = calloc(1, sizeof *attr);
    if (!io || !attr) {
        free(io);
        free(attr);
        return onyx_oom("float16 pass");
    }
    if (!own(b, io)) {
        free(attr);
        return onyx_oom("float16 pass");
    }
    if (!own(b, attr) || g->n_nodes == b->cap_nodes) return onyx_oom("float16 pass");
    io[0] = from;
    io[1] = to;
    *attr = (graph_attr){.name = "to", .type = ATTR_INT, .i = to_dtype};
    g->nodes[g->n_nodes] = (graph_node){.name = "", .op_type = "Cast", .domain = "",
                                        .version = b->cast->since_version, .schema = b->cast,
                                        .n_inputs = 1, .n_outputs = 1, .inputs = io,
                                        .outputs = io + 1, .n_attrs = 1, .attrs = attr};
    g->values[to].producer = g->n_nodes++;
    return ONYX_OK;
}

onyx_status graph_half_as_float(const graph *g, const op_registry *ops, graph **out,
                                void ***owned, int *n_owned) {
    *out = NULL;
    const op_schema *cast = NULL;
    if (ops->resolve("", "Cast", 13, &cast) != ONYX_OK) {
        onyx_error_clear();
        return ONYX_OK;
    }
    onyx_status st = ONYX_OK;
    onyx_dtype *dt = calloc((size_t)g->n_values + 1, sizeof *dt);
    bool *conv = calloc((size_t)g->n_nodes + 1, sizeof *conv);      /* node computes in float */
    bool *back = calloc((size_t)g->n_values + 1, sizeof *back);     /* converted, read as half */
    int *fl = malloc(((size_t)g->n_values + 1) * sizeof *fl);       /* float copy of a value */
    builder b = {0};
    if (!may_hold_half(g)) goto done;
    if (!dt || !conv || !back || !fl) {
        st = onyx_oom("float16 pass");
        goto done;
    }
    CHECK(infer_dtypes(g, dt));
    int n_conv = 0;
    for (int n = 0; n < g->n_nodes; n++) {
        const graph_node *nd = &g->nodes[n];
        if (!generic_op(nd)) continue;
        bool half = false, known = true;
        for (int i = 0; i < nd->n_inputs; i++) {
            int v = nd->inputs[i];
            if (v < 0) continue;
            known &= dt[v] != ONYX_UNDEFINED;
            half |= dt[v] == ONYX_FLOAT16;
        }
        conv[n] = half && known;
        n_conv += conv[n];
    }
    if (n_conv == 0) goto done;
    /* converted outputs that something other than a converted node reads (a Shape or Size of
     * one reads its float copy, of the same shape: Shape sits on attention's operands in the
     * TorchScript export, and a Cast there would hold them out of the attention's views) */
    for (int n = 0; n < g->n_nodes; n++) {
        const graph_node *nd = &g->nodes[n];
        if (!conv[n])
            for (int i = 0; i < nd->n_inputs; i++)
                if (nd->inputs[i] >= 0 &&
                    !(shape_only(nd) && made_by_converted(g, conv, dt, nd->inputs[i])))
                    back[nd->inputs[i]] = true;
        for (int c = 0; c < nd->n_captures; c++) back[nd->captures[c]] = true;
    }
    for (int o = 0; o < g->n_outputs; o++)
        if (g->outputs[o] >= 0) back[g->outputs[o]] = true;

    /* at most one float copy and one Cast per value, and the nodes */
    b.cast = cast;
    b.g = calloc(1, sizeof *b.g);
    if (!b.g) {
        st = onyx_oom("float16 pass");
        goto done;
    }
    *b.g = *g;
    b.cap_values = 2 * g->n_values + 1;
    b.cap_nodes = g->n_nodes + 2 * g->n_values + 1;
    b.g->values = malloc((size_t)b.cap_values * sizeof *b.g->values);
    b.g->nodes = calloc((size_t)b.cap_nodes, sizeof *b.g->nodes);
    if (!b.g->values || !b.g->nodes) {
        st = onyx_oom("float16 pass");
        goto done;
    }
    memcpy(b.g->values, g->values, (size_t)g->n_values * sizeof *g->values);
    b.g->n_nodes = 0;
    for (int v = 0; v < g->n_values; v++) fl[v] = -1;
    for (int n = 0; n < g->n_nodes; n++) {
        const graph_node *nd = &g->nodes[n];
        if (!conv[n]) {
            b.g->nodes[b.g->n_nodes] = *nd;
            if (shape_only(nd) && made_by_converted(g, conv, dt, nd->inputs[0])) {
                int *io = malloc(((size_t)nd->n_inputs + (size_t)nd->n_outputs) * sizeof *io);
                if (!own(&b, io)) {
                    st = onyx_oom("float16 pass");
                    goto done;
                }
                memcpy(io, nd->inputs, (size_t)nd->n_inputs * sizeof *io);
                memcpy(io + nd->n_inputs, nd->outputs, (size_t)nd->n_outputs * sizeof *io);
                io[0] = fl[nd->inputs[0]];
                b.g->nodes[b.g->n_nodes].inputs = io;
                b.g->nodes[b.g->n_nodes].outputs = io + nd->n_inputs;
            }
            for (int o = 0; o < nd->n_outputs; o++)
                if (nd->outputs[o] >= 0) b.g->values[nd->outputs[o]].producer = b.g->n_nodes;
            b.g->n_nodes++;
            continue;
        }
        int *io = malloc(((size_t)nd->n_inputs + (size_t)nd->n_outputs + 1) * sizeof *io);
        if (!own(&b, io)) {
            st = onyx_oom("float16 pass");
            goto done;
        }
        for (int i = 0; i < nd->n_inputs; i++) {
            int v = nd->inputs[i];
            io[i] = v;
            if (v < 0 || dt[v] != ONYX_FLOAT16) continue;
            if (fl[v] < 0) {
                int f = new_value(&b, v);
                if (f < 0) {
                    st = onyx_oom("float16 pass");
                    goto done;
                }
                CHECK(add_cast(&b, v, f, ONYX_FLOAT));
                fl[v] = f;
            }
            io[i] = fl[v];
        }
        int *outs = io + nd->n_inputs;
        for (int o = 0; o < nd->n_outputs; o++) {
            int v = nd->outputs[o];
            outs[o] = v;
            if (v < 0 || dt[v] != ONYX_FLOAT16) continue;
            int f = new_value(&b, v);
            if (f < 0) {
                st = onyx_oom("float16 pass");
                goto done;
            }
            fl[v] = outs[o] = f;
        }
        graph_node *cn = &b.g->nodes[b.g->n_nodes];
        *cn = *nd;
        cn->inputs = io;
        cn->outputs = outs;
        for (int o = 0; o < nd->n_outputs; o++)
            if (outs[o] >= 0) b.g->values[outs[o]].producer = b.g->n_nodes;
        b.g->n_nodes++;
        for (int o = 0; o < nd->n_outputs; o++) {
            int v = nd->outputs[o];
            if (v < 0 || outs[o] == v) continue;
            b.g->values[v].producer = -1; /* unless read as float16 */
            if (back[v]) CHECK(add_cast(&b, outs[o], v, ONYX_FLOAT16));
        }
    }
    *out = b.g;
    *owned = b.owned;
    *n_owned = b.n_owned;
    b.g = NULL;
    b.owned = NULL;
    b.n_owned = 0;
done:
    if (b.g) {
        free(b.g->values);
        free(b.g->nodes);
        free(b.g);
    }
    for (int k = 0; k < b.n_owned; k++) free(b.owned[k]);
    free(b.owned);
    free(dt);
    free(conv);
    free(back);
    free(fl);
    return st;
}

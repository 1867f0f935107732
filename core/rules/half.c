/* float16 computed in float32 (sessions on the CPU alone, config optimization.float16_as_float32).
 * x86 has no float16 arithmetic: a float16 kernel converts its operands to float, computes, and
 * converts back, op by op, and the float kernels' fusions and opaque layouts never apply.
 * onnxruntime's CPU provider runs such models as their float twins, with Casts where float16
 * enters and leaves; so does this rule, tried at every node in the last pass:
 *   - dtypes are inferred once over the graph (declared input types, initializers, schemas);
 *   - each node of a type-generic float op (below) that reads float16 reads a float copy
 *     instead and writes float: a Cast makes the copy where a float16 value first meets such a
 *     node (initializers' Casts fold once at prepare), and a Cast back to float16 remakes a
 *     converted value for what else reads it (another op, a subgraph, a graph output);
 *   - a node with an input whose dtype inference cannot tell is left as it is.
 * Results are those of float arithmetic rounded to float16 where float16 is read out: as close
 * to the exact values as the float16 kernels' or closer. */
#include <stdlib.h>
#include <string.h>

#include "core/graph_types.h"
#include "core/rules/rules.h"

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

/* The same for the ops of onnxruntime-genai's CUDA (float16) exports, so that they run on the
 * CPU: onnxruntime's com.microsoft ops, computed in float by both of its providers' float16
 * kernels, and ai.onyx GatherNBits (what core/rules/tied_embedding.c makes of a tied embedding's
 * GatherBlockQuantized before this pass). Their non-float inputs (codes, lengths) stay as they
 * are; outputs of a fixed type (a normalization's float statistics) keep it. */
static const struct {
    const char *domain, *op;
} contrib_ops[] = {
    {"", "SimplifiedLayerNormalization"},
    {"com.microsoft", "GroupQueryAttention"},
    {"com.microsoft", "MatMulNBits"},
    {"com.microsoft", "GatherBlockQuantized"},
    {"com.microsoft", "SkipLayerNormalization"},
    {"com.microsoft", "SkipSimplifiedLayerNormalization"},
    {"com.microsoft", "RotaryEmbedding"},
    {"ai.onyx", "GatherNBits"},
};

static bool generic_op(const graph_node *n) {
    for (size_t i = 0; i < sizeof contrib_ops / sizeof *contrib_ops; i++)
        if (!strcmp(n->domain, contrib_ops[i].domain) && !strcmp(n->op_type, contrib_ops[i].op))
            return true;
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

/* What the sweep decided once, from the whole graph. */
typedef struct half_plan {
    bool off;         /* nothing computes in float16, or no Cast to make */
    onyx_dtype *dt;   /* per value */
    bool *conv;       /* per node: computes in float */
    bool *back;       /* per value: converted, read as float16 */
    int *fl;          /* per value: its float copy, -1 until made */
} half_plan;

static void plan_free(void *p) {
    half_plan *h = p;
    if (!h) return;
    free(h->dt);
    free(h->conv);
    free(h->back);
    free(h->fl);
    free(h);
}

static onyx_status plan_half(const rewriter *r, half_plan *h) {
    const graph *g = r->g;
    h->off = true;
    if (!r->ops->find("", "Cast", 6)) return ONYX_OK;
    if (!may_hold_half(g)) return ONYX_OK;
    h->dt = calloc((size_t)g->n_values + 1, sizeof *h->dt);
    h->conv = calloc((size_t)g->n_nodes + 1, sizeof *h->conv);
    h->back = calloc((size_t)g->n_values + 1, sizeof *h->back);
    h->fl = malloc(((size_t)g->n_values + 1) * sizeof *h->fl);
    if (!h->dt || !h->conv || !h->back || !h->fl) return onyx_oom("float16 pass");
    TRY(infer_dtypes(g, h->dt));
    int n_conv = 0;
    for (int n = 0; n < g->n_nodes; n++) {
        const graph_node *nd = &g->nodes[n];
        if (!generic_op(nd) || !nd->schema) continue; /* no schema: refused at prepare as it is */
        bool half = false, known = true;
        for (int i = 0; i < nd->n_inputs; i++) {
            int v = nd->inputs[i];
            if (v < 0) continue;
            known &= h->dt[v] != ONYX_UNDEFINED;
            half |= h->dt[v] == ONYX_FLOAT16;
        }
        h->conv[n] = half && known;
        n_conv += h->conv[n];
    }
    if (n_conv == 0) return ONYX_OK;
    /* converted outputs that something other than a converted node reads (a Shape or Size of
     * one reads its float copy, of the same shape: Shape sits on attention's operands in the
     * TorchScript export, and a Cast there would hold them out of the attention's views) */
    for (int n = 0; n < g->n_nodes; n++) {
        const graph_node *nd = &g->nodes[n];
        if (!h->conv[n])
            for (int i = 0; i < nd->n_inputs; i++)
                if (nd->inputs[i] >= 0 &&
                    !(shape_only(nd) && made_by_converted(g, h->conv, h->dt, nd->inputs[i])))
                    h->back[nd->inputs[i]] = true;
        for (int c = 0; c < nd->n_captures; c++) h->back[nd->captures[c]] = true;
    }
    for (int o = 0; o < g->n_outputs; o++)
        if (g->outputs[o] >= 0) h->back[g->outputs[o]] = true;
    for (int v = 0; v < g->n_values; v++) h->fl[v] = -1;
    h->off = false;
    return ONYX_OK;
}

/* Places Cast(from) -> to, to dtype `to_dtype`, at or after node `at`. */
static onyx_status place_cast(rewriter *r, const graph_node *at, bool after, int from, int to,
                              onyx_dtype to_dtype) {
    graph_attr attr = {.name = "to", .type = ATTR_INT, .i = to_dtype};
    return rw_place_at(r, at, after, "", NULL, 0, "", "Cast", 6, &from, 1, to, &attr, 1);
}

/* nd as it computes in float (h->conv), or as a Shape or Size of a converted value reading its
 * float copy, into `like` (whose io block has room for nd's inputs and outputs): the Casts to
 * float placed before it where its float16 inputs have no float copy yet. */
static onyx_status convert(rewriter *r, half_plan *h, const graph_node *nd, graph_node *like) {
    if (!h->conv[rw_index(r, nd)]) {
        like->inputs[0] = h->fl[nd->inputs[0]];
        return ONYX_OK;
    }
    for (int i = 0; i < nd->n_inputs; i++) {
        int v = nd->inputs[i];
        if (v < 0 || h->dt[v] != ONYX_FLOAT16) continue;
        if (h->fl[v] < 0) {
            int f = rw_add_value(r, v, "/float32", NULL);
            if (f < 0) return onyx_oom("float16 pass");
            TRY(place_cast(r, nd, false, v, f, ONYX_FLOAT));
            h->fl[v] = f;
        }
        like->inputs[i] = h->fl[v];
    }
    for (int o = 0; o < nd->n_outputs; o++) {
        int v = nd->outputs[o];
        if (v < 0 || h->dt[v] != ONYX_FLOAT16) continue;
        int f = rw_add_value(r, v, "/float32", NULL);
        if (f < 0) return onyx_oom("float16 pass");
        h->fl[v] = like->outputs[o] = f;
    }
    return ONYX_OK;
}

onyx_status rule_float16_as_float(rewriter *r, const graph_node *nd) {
    if (!r->sweep_state) { /* the first node of the sweep: plan them all once */
        half_plan *h = calloc(1, sizeof *h);
        if (!h) return onyx_oom("float16 pass");
        r->sweep_state = h;
        r->sweep_state_free = plan_free;
        TRY(plan_half(r, h));
    }
    half_plan *h = r->sweep_state;
    if (h->off || (!h->conv[rw_index(r, nd)] &&
                   !(shape_only(nd) && made_by_converted(r->g, h->conv, h->dt, nd->inputs[0]))))
        return ONYX_OK;
    int *io = malloc(((size_t)nd->n_inputs + (size_t)nd->n_outputs + 1) * sizeof *io);
    if (!io) return onyx_oom("float16 pass");
    memcpy(io, nd->inputs, (size_t)nd->n_inputs * sizeof *io);
    memcpy(io + nd->n_inputs, nd->outputs, (size_t)nd->n_outputs * sizeof *io);
    graph_node like = *nd;
    like.inputs = io;
    like.outputs = io + nd->n_inputs;
    const graph_node *members[1] = {nd};
    onyx_status st = convert(r, h, nd, &like);
    if (st == ONYX_OK) st = rw_place_node(r, nd, false, &like, members, 1);
    /* a Cast back to float16 where something else reads a converted output as it was */
    for (int o = 0; o < nd->n_outputs && st == ONYX_OK; o++) {
        int v = nd->outputs[o];
        if (v >= 0 && like.outputs[o] != v && h->back[v])
            st = place_cast(r, nd, true, like.outputs[o], v, ONYX_FLOAT16);
    }
    free(io);
    return st;
}

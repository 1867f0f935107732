/* Graph rewrites when a subgraph is created (optimization level ALL): exporters spell some
 * activations out in elementwise ops, which run as several passes over memory with a scalar
 * transcendental each; the op they spell is one vectorized pass. And they move data between
 * layouts (Transposes around projections, a patch conv) that one product can take as it is.
 *   GELU, erf form (torch's default):   x * 0.5 * (1 + Erf(x / sqrt 2))          -> Gelu
 *   GELU, tanh form (GPT-2's gelu_new): x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
 *                                                                              -> Gelu(tanh)
 *   SiLU:                               x * Sigmoid(x)                           -> Swish
 *   LayerNormalization over the last axis, spelled out (exporters before opset 17):
 *     d = x - ReduceMean(x); d / Sqrt(ReduceMean(d^2) + eps) * gamma (+ beta) -> LayerNormalization
 *   a Transpose that keeps the last axis, into a projection whose result only selects q, k and v
 *   (torch's nn.MultiheadAttention: the sequence-first input, one packed projection, Gathers
 *   of one index through Reshapes and Transposes):
 *                          MatMul(Transpose(x), W) [+ b] -> Transpose(MatMul(x, W) [+ b])
 *                          (the attention fusion then reads q, k and v through the Transpose
 *                          too, core/fuse.c: no copy of x or of the projection)
 *   rows transposed after a row-wise product (the same module's output: the heads' [B, H, S, D]
 *   to [S, B, H, D], [S*B, E] rows for the out-projection, [S, B, E], then [B, S, E]):
 *                          Transpose(Reshape(Gemm(Reshape(Transpose(x, p)))), q)
 *                          -> MatMul(Reshape(Transpose(x, p'), [rows, K]), B^T) [+ C]
 *                          (p' is p with its row dims permuted by q; a Gemm of alpha other
 *                          than 1, or a MatMul, keeps its 2-D form with a Reshape after; the
 *                          attention fusion writes through Transpose(x, p') as it did through
 *                          the other, and a residual Add may follow the product as it comes)
 *   a patch embedding (ViT's: a Conv whose stride is its kernel, its output flattened and
 *   transposed to [N, patches, M]):
 *                          Transpose(Reshape(Conv(x, W, b), [N, M, P]), (0, 2, 1))
 *                          -> Reshape(Gemm(Reshape(Transpose(Reshape(x, patches)), rows),
 *                                          Reshape(W, [M, C*kh*kw]), b, transB), [N, P, M])
 *                          (one product of all patches, where the Conv has few input
 *                          channels to reduce over at a time)
 *   global average pooling (torch.onnx's dynamo exporter: aten.mean over H, W):
 *                                       ReduceMean(x, all axes after 1, keepdims) -> GlobalAveragePool
 *                                       (x float, of a rank inference knows; the pooling then
 *                                       stays in the convolutions' opaque layout, core/fuse.c)
 *   the units of a QDQ graph (DequantizeLinear -> op -> QuantizeLinear): the 8-bit op
 *                          (core/optimize_qdq.c)
 *   a dynamically quantized product (onnxruntime's quantize_dynamic):
 *                          Cast(MatMulInteger(q, W, z, wz)) * Mul(s, ws) [+ bias]
 *                          -> com.microsoft MatMulIntegerToFloat (core/optimize_dynq.c)
 * A pattern is replaced only when its inner values are read by the pattern alone (or by Shapes,
 * which fold) and are no graph outputs; the replacement takes the place of the pattern's nodes,
 * so the order stays topological. A second pass then makes each node that repeats an earlier
 * node's computation (core/graph_cse.c) an Identity of that node's output, and a third
 * (optional) computes float16 as float (core/optimize_half.c). */
#include "core/optimize.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/graph_cse.h"
#include "core/op_schema.h"
#include "core/rewriter.h"


bool rw_is_op(const graph_node *n, const char *op) {
    return n && !*n->domain && !strcmp(n->op_type, op);
}

const graph_node *rw_producer(const rewriter *r, int v) {
    if (v < 0 || r->producer[v] < 0 || r->gone[r->producer[v]]) return NULL;
    return &r->g->nodes[r->producer[v]];
}

const graph_node *rw_sole_reader(const rewriter *r, int v) {
    if (v < 0 || r->uses[v] != 1) return NULL;
    for (int n = 0; n < r->g->n_nodes; n++) {
        const graph_node *nd = &r->g->nodes[n];
        if (r->gone[n]) continue;
        for (int i = 0; i < nd->n_inputs; i++)
            if (nd->inputs[i] == v) return nd;
    }
    return NULL;
}

/* The float value of a one-element constant (initializer or Constant node), or NAN. */
static double scalar_of(const rewriter *r, int v) {
    if (v < 0) return NAN;
    const tensor *t = NULL;
    const graph_value *gv = &r->g->values[v];
    if (gv->flags & GV_INITIALIZER) t = gv->init;
    const graph_node *p = rw_producer(r, v);
    if (!t && rw_is_op(p, "Constant")) t = attr_tensor(p, "value");
    if (!t || t->numel != 1 || !dtype_is_float(t->dtype)) return NAN;
    return tensor_get_f64(t, 0);
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-3 * fabs(b); }

int rw_other_input(const graph_node *n, int v) {
    if (!n || n->n_inputs != 2) return -1;
    if (n->inputs[0] == v) return n->inputs[1];
    if (n->inputs[1] == v) return n->inputs[0];
    return -1;
}

int rw_index(const rewriter *r, const graph_node *n) { return (int)(n - r->g->nodes); }

/* After `a` = 1 + activation: the product with x and 0.5 (in any association). On a match,
 * *last is the node writing the result and members[] gets the product's nodes. */
static bool match_half_product(const rewriter *r, int a, int x, const graph_node **last,
                               const graph_node **members, int *n_members) {
    const graph_node *m1 = rw_sole_reader(r, a);
    if (!rw_is_op(m1, "Mul")) return false;
    int other = rw_other_input(m1, a);
    members[(*n_members)++] = m1;
    if (other == x) { /* (x * a) * 0.5 */
        const graph_node *m2 = rw_sole_reader(r, m1->outputs[0]);
        if (!rw_is_op(m2, "Mul") || !near(scalar_of(r, rw_other_input(m2, m1->outputs[0])), 0.5))
            return false;
        members[(*n_members)++] = m2;
        *last = m2;
        return true;
    }
    if (near(scalar_of(r, other), 0.5)) { /* (a * 0.5) * x */
        const graph_node *m2 = rw_sole_reader(r, m1->outputs[0]);
        if (!rw_is_op(m2, "Mul") || rw_other_input(m2, m1->outputs[0]) != x) return false;
        members[(*n_members)++] = m2;
        *last = m2;
        return true;
    }
    const graph_node *h = rw_producer(r, other); /* (x * 0.5) * a */
    if (!rw_is_op(h, "Mul") || r->uses[other] != 1 || rw_other_input(h, x) < 0 ||
        !near(scalar_of(r, rw_other_input(h, x)), 0.5))
        return false;
    members[(*n_members)++] = h;
    *last = m1;
    return true;
}

/* 1 + act: the Add reading act's output with a constant 1. */
static const graph_node *plus_one(const rewriter *r, const graph_node *act) {
    const graph_node *add = rw_sole_reader(r, act->outputs[0]);
    if (!rw_is_op(add, "Add") || !near(scalar_of(r, rw_other_input(add, act->outputs[0])), 1.0))
        return NULL;
    return add;
}

/* Erf(x / sqrt 2) or Erf(x * (1/sqrt 2)): x, or -1. */
static int erf_argument(const rewriter *r, const graph_node *erf) {
    const graph_node *d = rw_producer(r, erf->inputs[0]);
    if (!d || r->uses[erf->inputs[0]] != 1 || d->n_inputs != 2) return -1;
    if (rw_is_op(d, "Div") && near(scalar_of(r, d->inputs[1]), sqrt(2.0))) return d->inputs[0];
    if (rw_is_op(d, "Mul")) {
        for (int k = 0; k < 2; k++)
            if (near(scalar_of(r, d->inputs[k]), sqrt(0.5))) return d->inputs[1 - k];
    }
    return -1;
}

/* Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)): x, or -1; members get the inner nodes. */
static int tanh_argument(const rewriter *r, const graph_node *tanh_node, const graph_node **members,
                         int *n_members) {
    const graph_node *scale = rw_producer(r, tanh_node->inputs[0]);
    if (!rw_is_op(scale, "Mul") || r->uses[tanh_node->inputs[0]] != 1) return -1;
    int sum = -1;
    for (int k = 0; k < 2; k++)
        if (near(scalar_of(r, scale->inputs[k]), sqrt(2.0 / M_PI))) sum = scale->inputs[1 - k];
    const graph_node *add = rw_producer(r, sum);
    if (!rw_is_op(add, "Add") || r->uses[sum] != 1) return -1;
    for (int k = 0; k < 2; k++) {
        int x = add->inputs[k], cubic = add->inputs[1 - k];
        const graph_node *mul = rw_producer(r, cubic);
        if (!rw_is_op(mul, "Mul") || r->uses[cubic] != 1) continue;
        for (int j = 0; j < 2; j++) {
            if (!near(scalar_of(r, mul->inputs[j]), 0.044715)) continue;
            int cube = mul->inputs[1 - j];
            const graph_node *pow = rw_producer(r, cube);
            if (!rw_is_op(pow, "Pow") || r->uses[cube] != 1 || pow->inputs[0] != x ||
                !near(scalar_of(r, pow->inputs[1]), 3.0))
                continue;
            members[(*n_members)++] = scale;
            members[(*n_members)++] = add;
            members[(*n_members)++] = mul;
            members[(*n_members)++] = pow;
            return x;
        }
    }
    return -1;
}

onyx_status rw_place_at(rewriter *r, const graph_node *last, bool after, const char *name,
                        const graph_node **members, int n_members, const char *domain,
                        const char *op_type, int64_t version, const int *ins, int n_in, int y,
                        const graph_attr *attrs, int n_attrs) {
    const op_schema *schema = NULL;
    if (r->ops->resolve(domain, op_type, version, &schema) != ONYX_OK) {
        onyx_error_clear();
        return ONYX_OK; /* the registry lacks the op: keep the pattern as it is */
    }
    int *io = calloc((size_t)n_in + 1, sizeof *io);
    graph_attr *attr = n_attrs ? calloc((size_t)n_attrs, sizeof *attr) : NULL;
    if (!io || (n_attrs && !attr)) {
        free(io);
        free(attr);
        return onyx_oom("graph rewrite");
    }
    for (int k = 0; k < n_members; k++) r->gone[rw_index(r, members[k])] = true;
    memcpy(io, ins, (size_t)n_in * sizeof *io);
    io[n_in] = y;
    if (n_attrs) memcpy(attr, attrs, (size_t)n_attrs * sizeof *attr);
    graph_node *n = &r->made[2 * rw_index(r, last) + after];
    *n = (graph_node){.name = name, .op_type = op_type, .domain = domain,
                      .version = schema->since_version, .schema = schema, .n_inputs = n_in,
                      .n_outputs = 1, .inputs = io, .outputs = io + n_in, .attrs = attr,
                      .n_attrs = n_attrs};
    r->n_made++;
    return ONYX_OK;
}

static onyx_status place(rewriter *r, const graph_node *last, const graph_node **members,
                         int n_members, const char *op_type, int64_t version, const int *ins,
                         int n_in, int y, const graph_attr *attrs, int n_attrs) {
    return rw_place_at(r, last, false, last->name, members, n_members, "", op_type, version, ins, n_in,
                    y, attrs, n_attrs);
}

bool rw_keep(rewriter *r, void *p) {
    void **grown = p ? realloc(r->blocks, ((size_t)r->n_blocks + 1) * sizeof *grown) : NULL;
    if (!grown) {
        free(p);
        return false;
    }
    r->blocks = grown;
    r->blocks[r->n_blocks++] = p;
    return true;
}

int rw_add_value(rewriter *r, int like, const char *suffix, tensor *init) {
    const char *base = r->g->values[like].name ? r->g->values[like].name : "";
    size_t len = strlen(base) + strlen(suffix) + 1;
    char *name = malloc(len);
    if (!rw_keep(r, name)) return -1;
    graph_value *grown = realloc(r->added, ((size_t)r->n_added + 1) * sizeof *grown);
    if (!grown) return -1;
    r->added = grown;
    snprintf(name, len, "%s%s", base, suffix);
    graph_value *v = &r->added[r->n_added];
    *v = (graph_value){.name = name, .producer = -1, .outer = -1, .init = init,
                       .flags = init ? GV_INITIALIZER : 0};
    type_init(&v->type);
    if (init) type_set_tensor(&v->type, init->dtype, init->rank, init->dims);
    return r->g->n_values + r->n_added++;
}

/* add_value of an int64 vector (a shape), kept with the graph; -1 without memory. */
static int add_shape(rewriter *r, int like, const int64_t *dims, int n) {
    tensor *t = malloc(sizeof *t + (size_t)n * sizeof *dims);
    if (!rw_keep(r, t)) return -1;
    *t = (tensor){.dtype = ONYX_INT64, .rank = 1, .dims = {n}, .numel = n, .data = t + 1,
                  .nbytes = (size_t)n * sizeof *dims, .device = DEVICE_CPU};
    memcpy(t->data, dims, t->nbytes);
    return rw_add_value(r, like, "/shape", t);
}

/* The one-input form of place(), with an optional `approximate` attribute. */
static onyx_status replace(rewriter *r, const graph_node *last, const graph_node **members,
                           int n_members, const char *op_type, int64_t version, int x, int y,
                           const char *approximate) {
    graph_attr a = {.name = "approximate", .type = ATTR_STRING, .s = approximate,
                    .s_len = approximate ? strlen(approximate) : 0};
    return place(r, last, members, n_members, op_type, version, &x, 1, y, &a, approximate ? 1 : 0);
}

/* The axes of ReduceMean node n (attribute, or constant input from opset 18): their count, or
 * -1 when not constant. */
static int64_t mean_axes(const rewriter *r, const graph_node *n, const int64_t **axes) {
    *axes = NULL;
    if (n->version < 18) return (int64_t)attr_ints(n, "axes", axes);
    if (n->n_inputs < 2 || n->inputs[1] < 0) return 0;
    const graph_value *gv = &r->g->values[n->inputs[1]];
    const tensor *a = (gv->flags & GV_INITIALIZER) ? gv->init : NULL;
    if (!a || a->dtype != ONYX_INT64 || a->rank != 1) return -1;
    *axes = a->data;
    return a->numel;
}

/* Whether n is a ReduceMean of `x` (when x >= 0) over its last axis alone, keeping it; *c gets
 * the length of that axis where inference knows it (else -1). */
static bool last_axis_mean(const rewriter *r, const graph_node *n, int x, int64_t *c) {
    if (!rw_is_op(n, "ReduceMean") || n->n_outputs != 1 || n->n_inputs < 1 || n->inputs[0] < 0 ||
        (x >= 0 && n->inputs[0] != x) || attr_int(n, "keepdims", 1) != 1)
        return false;
    const type_info *t = r->types ? &r->types[n->inputs[0]] : NULL;
    bool ranked = t && t->kind == ONYX_VALUE_TENSOR && t->rank >= 1 && t->rank <= ONYX_MAX_RANK;
    const int64_t *axes;
    if (mean_axes(r, n, &axes) != 1) return false;
    if (axes[0] != -1 && !(ranked && axes[0] == t->rank - 1)) return false;
    *c = ranked && t->dims[t->rank - 1] > 0 ? t->dims[t->rank - 1] : -1;
    return true;
}

const tensor *rw_constant(const rewriter *r, int v) {
    for (int hops = 0; v >= 0 && hops < 8; hops++) {
        const graph_value *gv = &r->g->values[v];
        const graph_node *p = rw_producer(r, v);
        if (rw_is_op(p, "Identity") && p->n_inputs == 1) {
            v = p->inputs[0];
            continue;
        }
        return (gv->flags & GV_INITIALIZER) ? gv->init
               : rw_is_op(p, "Constant")      ? attr_tensor(p, "value")
                                           : NULL;
    }
    return NULL;
}

/* any_constant_of, of a float type. */
static const tensor *constant_of(const rewriter *r, int v) {
    const tensor *t = rw_constant(r, v);
    return t && dtype_is_float(t->dtype) ? t : NULL;
}

/* Whether every reader of v (and v is no graph output) relabels it (Reshape, Squeeze, Unsqueeze,
 * Flatten, Identity) or transposes it into values read so in turn, gathers one constant index
 * of it or takes its Shape: what attention's q, k and v take from a packed projection. */
static bool selects_only(const rewriter *r, int v, int depth) {
    static const char *const moves[] = {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity",
                                        "Transpose"};
    if (depth > 12 || r->uses[v] < 1) return false;
    int readers = 0;
    for (int n = 0; n < r->g->n_nodes; n++) {
        const graph_node *nd = &r->g->nodes[n];
        bool reads = false;
        for (int i = 0; i < nd->n_inputs; i++) reads |= nd->inputs[i] == v;
        for (int c = 0; c < nd->n_captures; c++) reads |= nd->captures[c] == v;
        if (!reads) continue;
        if (r->gone[n] || nd->n_outputs != 1 || nd->inputs[0] != v) return false;
        readers++;
        if (rw_is_op(nd, "Shape")) continue; /* the exporter's dims, folded once shapes are known */
        if (rw_is_op(nd, "Gather")) {
            const tensor *index = nd->n_inputs == 2 ? rw_constant(r, nd->inputs[1]) : NULL;
            if (!index || index->numel != 1) return false;
            continue;
        }
        bool move = false;
        for (size_t k = 0; k < sizeof moves / sizeof moves[0]; k++) move |= rw_is_op(nd, moves[k]);
        if (!move || !selects_only(r, nd->outputs[0], depth + 1)) return false;
    }
    return readers == r->uses[v]; /* a graph output counts more */
}

/* Whether every reader of v other than `node` takes its Shape (an exporter's dims, folded once
 * shapes are known), and v is no graph output; *shapes: there are such readers. */
static bool read_for_shape(const rewriter *r, int v, const graph_node *node, bool *shapes) {
    int readers = 0;
    *shapes = false;
    for (int n = 0; n < r->g->n_nodes; n++) {
        const graph_node *nd = &r->g->nodes[n];
        for (int i = 0; i < nd->n_inputs; i++) {
            if (nd->inputs[i] != v) continue;
            readers++;
            if (nd == node) continue;
            if (r->gone[n] || !rw_is_op(nd, "Shape")) return false;
            *shapes = true;
        }
    }
    return readers == r->uses[v];
}

/* The sequence-first projection of torch's MultiheadAttention (see the top): t a Transpose whose
 * perm keeps the last axis, read by MatMul(t, W) of a constant matrix W (and Shapes, where the
 * batch is dynamic: t then stays for them, and leaves the plan once they fold), then optionally
 * by the Add of a constant that varies along the last axis alone, whose result only selects.
 * The Transpose moves after the product; values that now hold other shapes lose their declared
 * types. */
static onyx_status sink_transpose(rewriter *r, const graph_node *t) {
    const int64_t *perm;
    size_t rank = attr_ints(t, "perm", &perm);
    if (t->n_inputs != 1 || t->n_outputs != 1 || rank < 3 || (size_t)perm[rank - 1] != rank - 1)
        return ONYX_OK;
    const graph_node *mm = NULL;
    for (int n = 0; n < r->g->n_nodes && !mm; n++) {
        const graph_node *nd = &r->g->nodes[n];
        if (!r->gone[n] && rw_is_op(nd, "MatMul") && nd->inputs[0] == t->outputs[0]) mm = nd;
    }
    bool keep_t;
    const tensor *w = mm && mm->inputs[1] != t->outputs[0] &&
                              read_for_shape(r, t->outputs[0], mm, &keep_t)
                          ? constant_of(r, mm->inputs[1])
                          : NULL;
    if (!w || w->rank != 2) return ONYX_OK;
    const graph_node *add = rw_sole_reader(r, mm->outputs[0]), *last = mm;
    int bias = rw_other_input(rw_is_op(add, "Add") ? add : NULL, mm->outputs[0]);
    const tensor *b = constant_of(r, bias);
    if (b) {
        if ((size_t)b->rank > rank) return ONYX_OK; /* it would add dims before the Transpose's */
        for (int i = 0; i + 1 < b->rank; i++)
            if (b->dims[i] != 1) return ONYX_OK;
        last = add;
    }
    if (!selects_only(r, last->outputs[0], 0)) return ONYX_OK;
    /* MatMul(x, W) -> t's value (a new one where t stays); [Add -> the product's value];
     * Transpose -> last's value, placed right after the last */
    int x = t->inputs[0], product[2] = {x, mm->inputs[1]};
    int moved = keep_t ? rw_add_value(r, t->outputs[0], "/sunk", NULL) : t->outputs[0];
    if (moved < 0) return onyx_oom("graph rewrite");
    const graph_node *only_mm[] = {mm}, *only_add[] = {add};
    TRY(place(r, mm, only_mm, 1, "MatMul", mm->version, product, 2, moved, NULL, 0));
    if (!r->made[2 * rw_index(r, mm)].op_type) return ONYX_OK;
    if (!keep_t) {
        r->gone[rw_index(r, t)] = true;
        r->retyped[moved] = true;
    }
    if (b) {
        int sum[2] = {add->inputs[0], add->inputs[1]};
        sum[add->inputs[0] == bias ? 1 : 0] = moved;
        TRY(place(r, add, only_add, 1, "Add", add->version, sum, 2, mm->outputs[0], NULL, 0));
        moved = mm->outputs[0];
        r->retyped[moved] = true;
    }
    return rw_place_at(r, last, true, t->name, NULL, 0, "", "Transpose", t->version, &moved, 1,
                    last->outputs[0], t->attrs, t->n_attrs);
}

/* The dims of value v as inference found them before any plan (-1 where not known): its rank,
 * or -1. */
static int known_dims(rewriter *r, int v, const int64_t **dims) {
    if (!r->types && graph_infer_types(r->g, &r->types) != ONYX_OK) {
        onyx_error_clear();
        r->types = NULL;
        return -1;
    }
    const type_info *t = r->types ? &r->types[v] : NULL;
    if (!t || t->kind != ONYX_VALUE_TENSOR || t->rank < 0) return -1;
    *dims = t->dims;
    return t->rank;
}

/* known_dims, where every dim is known; else -1. */
static int static_dims(rewriter *r, int v, const int64_t **dims) {
    int rank = known_dims(r, v, dims);
    for (int i = 0; i < rank; i++)
        if ((*dims)[i] < 0) return -1;
    return rank;
}

/* Gemm(a, B [, C]) or MatMul(a, B) of a constant matrix B, without transposing a, and a C (if
 * any) constant per column: each row of the result depends on that row of a alone. */
static bool row_wise_product(const rewriter *r, const graph_node *n) {
    if (rw_is_op(n, "MatMul")) {
        const tensor *b = constant_of(r, n->inputs[1]);
        return b && b->rank == 2;
    }
    if (!rw_is_op(n, "Gemm") || attr_int(n, "transA", 0) || !constant_of(r, n->inputs[1]))
        return false;
    if (n->n_inputs < 3 || n->inputs[2] < 0) return true;
    const tensor *c = constant_of(r, n->inputs[2]);
    return c && (c->rank <= 1 || (c->rank == 2 && c->dims[0] == 1));
}

/* The rest of rows_before_product for a Gemm of alpha 1 (and beta 1): the rows as they come,
 * [rows (the output's leading dims), K], times B (transposed where transB), plus C: the product
 * then makes the output itself, so a device epilogue can take the Add of a residual after it
 * (the out-projection's). r1 becomes that Reshape; shape holds the output's dims. */
static onyx_status rows_as_matmul(rewriter *r, const graph_node *r1, const graph_node *gemm,
                                  const graph_node *r2, const graph_node *t2,
                                  const int64_t *shape, int a, int64_t k) {
    int64_t rows[ONYX_MAX_RANK];
    memcpy(rows, shape, (size_t)a * sizeof *rows);
    rows[a] = k;
    bool trans_b = attr_int(gemm, "transB", 0) != 0;
    bool has_c = gemm->n_inputs > 2 && gemm->inputs[2] >= 0;
    int s_rows = add_shape(r, r1->outputs[0], rows, a + 1);
    int wt = trans_b ? rw_add_value(r, gemm->inputs[1], "/transposed", NULL) : gemm->inputs[1];
    if (s_rows < 0 || wt < 0) return onyx_oom("graph rewrite");
    const graph_node *only_r1[] = {r1}, *only_gemm[] = {gemm}, *tail[] = {r2, t2};
    int in_rows[] = {r1->inputs[0], s_rows}, w = gemm->inputs[1];
    int product = has_c ? gemm->outputs[0] : t2->outputs[0];
    int in_mm[] = {r1->outputs[0], wt}, in_add[] = {gemm->outputs[0], has_c ? gemm->inputs[2] : -1};
    static const int64_t swap[] = {1, 0};
    graph_attr swap_attr = {.name = "perm", .type = ATTR_INTS, .n = 2, .ints = swap};
    TRY(place(r, r1, only_r1, 1, "Reshape", 14, in_rows, 2, r1->outputs[0], NULL, 0));
    r->retyped[r1->outputs[0]] = true;
    if (trans_b)
        TRY(place(r, gemm, only_gemm, 1, "Transpose", 13, &w, 1, wt, &swap_attr, 1));
    TRY(rw_place_at(r, gemm, trans_b, gemm->name, only_gemm, 1, "", "MatMul", 13, in_mm, 2, product,
                 NULL, 0));
    if (!has_c) {
        r->gone[rw_index(r, r2)] = r->gone[rw_index(r, t2)] = true;
        return ONYX_OK;
    }
    r->retyped[product] = true;
    return rw_place_at(r, t2, false, gemm->name, tail, 2, "", "Add", 14, in_add, 2, t2->outputs[0],
                    NULL, 0);
}

/* The rows' Transpose before a row-wise product (see the top), from the Transpose t2 after it. */
static onyx_status rows_before_product(rewriter *r, const graph_node *t2) {
    const int64_t *q, *p;
    size_t nq = attr_ints(t2, "perm", &q);
    if (t2->n_inputs != 1 || t2->n_outputs != 1 || nq < 2 || nq > ONYX_MAX_RANK ||
        (size_t)q[nq - 1] != nq - 1)
        return ONYX_OK;
    int a = (int)nq - 1; /* row dims, which q permutes */
    bool seen[ONYX_MAX_RANK] = {false};
    for (int i = 0; i < a; i++) {
        if (q[i] < 0 || q[i] >= a || seen[q[i]]) return ONYX_OK;
        seen[q[i]] = true;
    }
    const graph_node *r2 = rw_producer(r, t2->inputs[0]);
    const graph_node *prod = r2 && rw_is_op(r2, "Reshape") && r2->n_inputs == 2 &&
                                     r->uses[t2->inputs[0]] == 1
                                 ? rw_producer(r, r2->inputs[0])
                                 : NULL;
    if (!prod || r->uses[r2->inputs[0]] != 1 || !row_wise_product(r, prod)) return ONYX_OK;
    const graph_node *r1 = rw_producer(r, prod->inputs[0]);
    const graph_node *t1 = r1 && rw_is_op(r1, "Reshape") && r->uses[prod->inputs[0]] == 1
                               ? rw_producer(r, r1->inputs[0])
                               : NULL;
    size_t np = t1 && rw_is_op(t1, "Transpose") && r->uses[r1->inputs[0]] == 1
                    ? attr_ints(t1, "perm", &p)
                    : 0;
    if (np < (size_t)a + 1 || np > ONYX_MAX_RANK || t1->n_outputs != 1) return ONYX_OK;
    /* Transpose(x, p)'s leading a dims are the rows: the product's M and the dims of r2 */
    const int64_t *d1, *m, *d2;
    if (static_dims(r, t1->outputs[0], &d1) != (int)np ||
        static_dims(r, r1->outputs[0], &m) != 2 || static_dims(r, r2->outputs[0], &d2) != a + 1)
        return ONYX_OK;
    int64_t rows = 1;
    for (int i = 0; i < a; i++) {
        if (d1[i] != d2[i] || d1[i] < 1) return ONYX_OK; /* a 0 in a shape copies a dim */
        rows *= d1[i];
    }
    if (d2[a] < 1) return ONYX_OK;
    if (rows != m[0]) return ONYX_OK;
    int64_t *perm = malloc(np * sizeof *perm), shape[ONYX_MAX_RANK];
    if (!rw_keep(r, perm)) return onyx_oom("graph rewrite");
    for (size_t i = 0; i < np; i++) perm[i] = (int)i < a ? p[q[i]] : p[i];
    for (int i = 0; i <= a; i++) shape[i] = d2[q[i]];
    graph_attr perm_attr = {.name = "perm", .type = ATTR_INTS, .n = np, .ints = perm};
    const graph_node *only_t1[] = {t1}, *tail[] = {r2, t2};
    int x = t1->inputs[0];
    TRY(place(r, t1, only_t1, 1, "Transpose", t1->version, &x, 1, t1->outputs[0], &perm_attr, 1));
    r->retyped[t1->outputs[0]] = true;
    if (rw_is_op(prod, "Gemm") && attr_float(prod, "alpha", 1.0f) == 1.0f &&
        (prod->n_inputs < 3 || prod->inputs[2] < 0 || attr_float(prod, "beta", 1.0f) == 1.0f))
        return rows_as_matmul(r, r1, prod, r2, t2, shape, a, m[1]);
    int c = add_shape(r, t2->outputs[0], shape, a + 1), reshape[2] = {r2->inputs[0], c};
    if (c < 0) return onyx_oom("graph rewrite");
    return place(r, t2, tail, 2, "Reshape", r2->version, reshape, 2, t2->outputs[0], NULL, 0);
}

/* Whether 2-D Conv node n takes non-overlapping patches: kernel == strides (not 1x1), no
 * padding, dilation 1, one group, constant W [M, C, kh, kw] (*w) and bias (if any). */
static bool patch_conv(const rewriter *r, const graph_node *n, const tensor **w) {
    const int64_t *k, *st, *pads, *dil;
    size_t nk = attr_ints(n, "kernel_shape", &k), ns = attr_ints(n, "strides", &st);
    size_t np = attr_ints(n, "pads", &pads), nd = attr_ints(n, "dilations", &dil);
    const char *auto_pad = attr_string(n, "auto_pad", "NOTSET");
    *w = n->n_inputs >= 2 ? constant_of(r, n->inputs[1]) : NULL;
    if (!*w || (*w)->rank != 4 || attr_int(n, "group", 1) != 1 || ns != 2 ||
        (nk != 0 && nk != 2) || (nd != 0 && nd != 2) ||
        (strcmp(auto_pad, "NOTSET") && strcmp(auto_pad, "VALID")) ||
        (n->n_inputs > 2 && n->inputs[2] >= 0 && !constant_of(r, n->inputs[2])))
        return false;
    for (int i = 0; i < 2; i++)
        if (st[i] != (*w)->dims[2 + i] || (nk && k[i] != st[i]) || (nd && dil[i] != 1))
            return false;
    for (size_t i = 0; i < np; i++)
        if (pads[i] != 0) return false;
    return st[0] > 1 || st[1] > 1;
}

/* The patch embedding (see the top), from its Conv. */
static onyx_status patch_embedding(rewriter *r, const graph_node *conv) {
    const tensor *w;
    if (conv->n_outputs != 1 || !patch_conv(r, conv, &w)) return ONYX_OK;
    const graph_node *flat = rw_sole_reader(r, conv->outputs[0]);
    const graph_node *t = flat && rw_is_op(flat, "Reshape") && flat->inputs[0] == conv->outputs[0]
                              ? rw_sole_reader(r, flat->outputs[0])
                              : NULL;
    const int64_t *perm, *xd, *fd;
    if (!t || !rw_is_op(t, "Transpose") || attr_ints(t, "perm", &perm) != 3 || perm[0] != 0 ||
        perm[1] != 2 || perm[2] != 1)
        return ONYX_OK;
    /* x [N, C, H, W] with H and W multiples of the patch; flat [N, M, P] */
    int64_t m = w->dims[0], c = w->dims[1], kh = w->dims[2], kw = w->dims[3];
    if (known_dims(r, conv->inputs[0], &xd) != 4 || known_dims(r, flat->outputs[0], &fd) != 3 ||
        xd[1] != c || xd[2] < kh || xd[3] < kw || xd[2] % kh || xd[3] % kw || fd[1] != m ||
        fd[2] != (xd[2] / kh) * (xd[3] / kw) || m < 1 || c < 1)
        return ONYX_OK;
    int64_t gh = xd[2] / kh, gw = xd[3] / kw, ck = c * kh * kw;
    const int64_t patches[] = {0, c, gh, kh, gw, kw}, rows[] = {-1, ck}, wm[] = {m, ck},
                  out[] = {-1, gh * gw, m};
    int like = t->outputs[0];
    int s_patches = add_shape(r, like, patches, 6), s_rows = add_shape(r, like, rows, 2);
    int s_w = add_shape(r, like, wm, 2), s_out = add_shape(r, like, out, 3);
    int v_grid = rw_add_value(r, like, "/patches", NULL), v_moved = rw_add_value(r, like, "/moved", NULL);
    int v_rows = rw_add_value(r, like, "/rows", NULL), v_w = rw_add_value(r, like, "/weight", NULL);
    int v_prod = rw_add_value(r, like, "/product", NULL);
    int64_t *order = malloc(6 * sizeof *order);
    if (s_patches < 0 || s_rows < 0 || s_w < 0 || s_out < 0 || v_grid < 0 || v_moved < 0 ||
        v_rows < 0 || v_w < 0 || v_prod < 0 || !rw_keep(r, order))
        return onyx_oom("graph rewrite");
    const int64_t o6[] = {0, 2, 4, 1, 3, 5}; /* [N, gh, gw, C, kh, kw] */
    memcpy(order, o6, sizeof o6);
    graph_attr order_attr = {.name = "perm", .type = ATTR_INTS, .n = 6, .ints = order};
    graph_attr trans_b = {.name = "transB", .type = ATTR_INT, .i = 1};
    const graph_node *only_conv[] = {conv}, *only_flat[] = {flat}, *only_t[] = {t};
    int in_grid[] = {conv->inputs[0], s_patches}, in_rows[] = {v_moved, s_rows},
        in_w[] = {conv->inputs[1], s_w}, in_out[] = {v_prod, s_out};
    int in_gemm[] = {v_rows, v_w, conv->n_inputs > 2 ? conv->inputs[2] : -1};
    int n_gemm = in_gemm[2] >= 0 ? 3 : 2;
    const char *name = conv->name; /* the profile's name for all six */
    TRY(rw_place_at(r, conv, false, name, only_conv, 1, "", "Reshape", 14, in_grid, 2, v_grid, NULL, 0));
    if (!r->made[2 * rw_index(r, conv)].op_type) return ONYX_OK;
    TRY(rw_place_at(r, conv, true, name, NULL, 0, "", "Transpose", 13, &v_grid, 1, v_moved, &order_attr,
                 1));
    TRY(rw_place_at(r, flat, false, name, only_flat, 1, "", "Reshape", 14, in_rows, 2, v_rows, NULL, 0));
    TRY(rw_place_at(r, flat, true, name, NULL, 0, "", "Reshape", 14, in_w, 2, v_w, NULL, 0));
    TRY(rw_place_at(r, t, false, name, only_t, 1, "", "Gemm", 13, in_gemm, n_gemm, v_prod, &trans_b, 1));
    return rw_place_at(r, t, true, name, NULL, 0, "", "Reshape", 14, in_out, 2, t->outputs[0], NULL, 0);
}

/* LayerNormalization spelled out (the exporters' form before opset 17), from its first mean:
 *   d = x - ReduceMean(x); y = d / Sqrt(ReduceMean(d^2) + eps) * gamma (+ beta)
 * over the last axis, d^2 as Pow(d, 2) or d * d, gamma and beta constant vectors of that
 * axis's length. */
static onyx_status layer_norm(rewriter *r, const graph_node *mean1) {
    const graph_node *m[10];
    int nm = 0;
    int64_t c;
    if (!last_axis_mean(r, mean1, -1, &c)) return ONYX_OK;
    int x = mean1->inputs[0];
    m[nm++] = mean1;
    const graph_node *sub = rw_sole_reader(r, mean1->outputs[0]);
    if (!rw_is_op(sub, "Sub") || sub->n_inputs != 2 || sub->inputs[0] != x ||
        sub->inputs[1] != mean1->outputs[0])
        return ONYX_OK;
    m[nm++] = sub;
    int d = sub->outputs[0];
    /* d's readers: the square and the Div */
    const graph_node *sq = NULL, *div = NULL;
    for (int n = 0; n < r->g->n_nodes; n++) {
        const graph_node *nd = &r->g->nodes[n];
        bool reads = false;
        for (int i = 0; i < nd->n_inputs; i++) reads |= nd->inputs[i] == d;
        if (!reads || r->gone[n]) continue;
        if (nd->n_inputs != 2) return ONYX_OK;
        if (rw_is_op(nd, "Div") && nd->inputs[0] == d && !div) div = nd;
        else if (!sq && ((rw_is_op(nd, "Pow") && nd->inputs[0] == d && scalar_of(r, nd->inputs[1]) == 2.0) ||
                          (rw_is_op(nd, "Mul") && nd->inputs[0] == d && nd->inputs[1] == d)))
            sq = nd;
        else return ONYX_OK;
    }
    if (!sq || !div || r->uses[d] != (rw_is_op(sq, "Mul") ? 3 : 2)) return ONYX_OK;
    m[nm++] = sq;
    int64_t c2;
    const graph_node *mean2 = rw_sole_reader(r, sq->outputs[0]);
    if (!mean2 || !last_axis_mean(r, mean2, sq->outputs[0], &c2)) return ONYX_OK;
    m[nm++] = mean2;
    const graph_node *add = rw_sole_reader(r, mean2->outputs[0]);
    double eps = scalar_of(r, rw_other_input(add, mean2->outputs[0]));
    if (!rw_is_op(add, "Add") || !(eps >= 0) || !isfinite(eps)) return ONYX_OK;
    m[nm++] = add;
    const graph_node *root = rw_sole_reader(r, add->outputs[0]);
    if (!rw_is_op(root, "Sqrt") || rw_sole_reader(r, root->outputs[0]) != div ||
        div->inputs[1] != root->outputs[0])
        return ONYX_OK;
    m[nm++] = root;
    m[nm++] = div;
    const graph_node *scale = rw_sole_reader(r, div->outputs[0]);
    int g_in = rw_other_input(scale, div->outputs[0]);
    const tensor *gamma = constant_of(r, g_in);
    /* gamma spans the axis (where inference lost its length, the Mul says it: only an axis
     * of one element, where the pattern normalizes nothing, could broadcast to gamma) */
    if (!rw_is_op(scale, "Mul") || !gamma || gamma->rank != 1 || gamma->numel != (c >= 0 ? c : gamma->numel) ||
        gamma->numel < (c >= 0 ? 1 : 2))
        return ONYX_OK;
    m[nm++] = scale;
    const graph_node *last = scale, *shift = rw_sole_reader(r, scale->outputs[0]);
    int b_in = rw_other_input(shift, scale->outputs[0]);
    const tensor *beta = rw_is_op(shift, "Add") ? constant_of(r, b_in) : NULL;
    if (beta && beta->rank == 1 && beta->numel == gamma->numel && beta->dtype == gamma->dtype) {
        m[nm++] = shift;
        last = shift;
    } else {
        b_in = -1;
    }
    const type_info *t = &r->types[x];
    if (t->kind != ONYX_VALUE_TENSOR || t->dtype != gamma->dtype) return ONYX_OK;
    int ins[3] = {x, g_in, b_in};
    graph_attr attrs[2] = {{.name = "axis", .type = ATTR_INT, .i = -1},
                           {.name = "epsilon", .type = ATTR_FLOAT, .f = (float)eps}};
    return place(r, last, m, nm, "LayerNormalization", 17, ins, b_in >= 0 ? 3 : 2,
                 last->outputs[0], attrs, 2);
}

/* Whether ReduceMean node n averages its float input over every axis after 1, keeping them. */
static bool spatial_mean(const rewriter *r, const graph_node *n) {
    if (!r->types || n->n_inputs < 1 || n->inputs[0] < 0 || n->n_outputs != 1 ||
        attr_int(n, "keepdims", 1) != 1)
        return false;
    const type_info *t = &r->types[n->inputs[0]];
    if (t->kind != ONYX_VALUE_TENSOR || !dtype_is_float(t->dtype) || t->rank < 3 ||
        t->rank > ONYX_MAX_RANK)
        return false;
    const int64_t *axes = NULL;
    int64_t n_axes = 0;
    if (n->version < 18) {
        n_axes = (int64_t)attr_ints(n, "axes", &axes);
    } else if (n->n_inputs >= 2 && n->inputs[1] >= 0) {
        const graph_value *gv = &r->g->values[n->inputs[1]];
        const tensor *a = (gv->flags & GV_INITIALIZER) ? gv->init : NULL;
        if (!a || a->dtype != ONYX_INT64 || a->rank != 1) return false;
        axes = a->data;
        n_axes = a->numel;
    }
    if (n_axes != t->rank - 2) return false;
    bool seen[ONYX_MAX_RANK] = {false};
    for (int64_t i = 0; i < n_axes; i++) {
        int64_t ax = axes[i] < 0 ? axes[i] + t->rank : axes[i];
        if (ax < 2 || ax >= t->rank || seen[ax]) return false;
        seen[ax] = true;
    }
    return true;
}

/* Node n computes what the earlier node o computes (core/graph_cse.c): an Identity of o's output
 * takes its place, which costs nothing (Identity aliases its input). */
static onyx_status same_as(rewriter *r, int n, int o) {
    const graph_node *nd = &r->g->nodes[n], *members[1] = {nd};
    int x = r->g->nodes[o].outputs[0];
    TRY(replace(r, nd, members, 1, "Identity", 25, x, nd->outputs[0], NULL));
    if (r->gone[n]) r->uses[x]++; /* o's output now has this reader too */
    return ONYX_OK;
}

static onyx_status rewrite_node(rewriter *r, int idx) {
    const graph_node *n = &r->g->nodes[idx];
    const graph_node *members[12], *last = NULL;
    int n_members = 0;
    if (rw_is_op(n, "ReduceMean")) {
        TRY(layer_norm(r, n));
        if (r->gone[idx] || !spatial_mean(r, n)) return ONYX_OK;
        members[n_members++] = n;
        return replace(r, n, members, n_members, "GlobalAveragePool", 1, n->inputs[0],
                       n->outputs[0], NULL);
    }
    if (rw_is_op(n, "Erf") || rw_is_op(n, "Tanh")) {
        bool erf = rw_is_op(n, "Erf");
        int x = erf ? erf_argument(r, n) : tanh_argument(r, n, members, &n_members);
        if (x < 0) return ONYX_OK;
        if (erf) members[n_members++] = rw_producer(r, n->inputs[0]);
        members[n_members++] = n;
        const graph_node *add = plus_one(r, n);
        if (!add) return ONYX_OK;
        members[n_members++] = add;
        if (!match_half_product(r, add->outputs[0], x, &last, members, &n_members)) return ONYX_OK;
        return replace(r, last, members, n_members, "Gelu", 20, x, last->outputs[0],
                       erf ? NULL : "tanh");
    }
    if (rw_is_op(n, "Conv")) return patch_embedding(r, n);
    if (rw_is_op(n, "QuantizeLinear")) return qdq_rewrite(r, n);
    if (rw_is_op(n, "Gemm")) return qdq_rewrite_float_gemm(r, n);
    if (rw_is_op(n, "MatMulInteger")) return dynq_rewrite(r, n);
    if (rw_is_op(n, "Transpose")) {
        TRY(sink_transpose(r, n));
        return r->gone[idx] ? ONYX_OK : rows_before_product(r, n);
    }
    if (rw_is_op(n, "Sigmoid") && n->n_outputs == 1) {
        int x = n->inputs[0];
        const graph_node *mul = rw_sole_reader(r, n->outputs[0]);
        if (!rw_is_op(mul, "Mul") || rw_other_input(mul, n->outputs[0]) != x) return ONYX_OK;
        members[n_members++] = n;
        members[n_members++] = mul;
        return replace(r, mul, members, n_members, "Swish", 24, x, mul->outputs[0], NULL);
    }
    return ONYX_OK;
}

/* A rewritten graph and the nodes' io blocks and attributes it owns. */
typedef struct rewritten {
    graph g; /* first: the graph handed out is this member */
    void **owned;
    int n_owned;
} rewritten;

void graph_optimized_free(graph *g) {
    if (!g) return;
    rewritten *rw = (rewritten *)g;
    for (int k = 0; k < rw->n_owned; k++) free(rw->owned[k]);
    free(rw->owned);
    free(g->nodes);
    free(g->values);
    free(rw);
}

/* `later`, made from the graph of `earlier`, takes over the blocks earlier owned; earlier's node
 * and value arrays go. */
static onyx_status adopt(rewritten *later, rewritten *earlier) {
    if (!earlier) return ONYX_OK;
    void **all = realloc(later->owned,
                         ((size_t)later->n_owned + (size_t)earlier->n_owned + 1) * sizeof *all);
    if (!all) return onyx_oom("graph rewrite");
    memcpy(all + later->n_owned, earlier->owned, (size_t)earlier->n_owned * sizeof *all);
    later->owned = all;
    later->n_owned += earlier->n_owned;
    free(earlier->owned);
    free(earlier->g.nodes);
    free(earlier->g.values);
    free(earlier);
    return ONYX_OK;
}

/* The float16 pass (core/optimize_half.c) on the graph of *rw (or on g, with *rw NULL): *rw
 * becomes its result where it changed anything. */
static onyx_status half_pass(const graph *g, const op_registry *ops, rewritten **rw) {
    graph *half = NULL;
    void **owned = NULL;
    int n_owned = 0;
    TRY(graph_half_as_float(*rw ? &(*rw)->g : g, ops, &half, &owned, &n_owned));
    if (!half) return ONYX_OK;
    rewritten *rw2 = calloc(1, sizeof *rw2);
    if (!rw2) {
        for (int k = 0; k < n_owned; k++) free(owned[k]);
        free(owned);
        free(half->nodes);
        free(half->values);
        free(half);
        return onyx_oom("graph rewrite");
    }
    rw2->g = *half;
    free(half);
    rw2->owned = owned;
    rw2->n_owned = n_owned;
    onyx_status st = adopt(rw2, *rw);
    if (st != ONYX_OK) {
        graph_optimized_free(&rw2->g);
        return st;
    }
    *rw = rw2;
    return ONYX_OK;
}

typedef onyx_status (*rewrite_fn)(rewriter *r);

/* The pattern rewrites, each node once, in order, after the QDQ tables (which take the units of
 * one 8-bit tensor first, from the graph's end; the nodes they place, copies of a unit's that
 * compute its table, are no pattern's). */
static onyx_status patterns(rewriter *r) {
    const graph *g = r->g;
    TRY(qdq_tables(r));
    for (int n = 0; n < g->n_nodes && !r->types; n++)
        if (rw_is_op(&g->nodes[n], "ReduceMean")) TRY(graph_infer_types(g, &r->types));
    for (int n = 0; n < g->n_nodes; n++)
        if (!r->gone[n]) TRY(rewrite_node(r, n));
    return ONYX_OK;
}

/* Duplicates after the patterns (which find their own inner values single-use): each becomes an
 * Identity of the node it repeats. */
static onyx_status duplicates(rewriter *r) {
    int *dup_of = NULL;
    TRY(graph_find_duplicates(r->g, &dup_of));
    onyx_status st = ONYX_OK;
    for (int n = 0; n < r->g->n_nodes && st == ONYX_OK; n++)
        if (dup_of[n] >= 0) st = same_as(r, n, dup_of[n]);
    free(dup_of);
    return st;
}

/* One pass of rewrites over g (the graph of *rw, or the original with *rw NULL): *rw becomes its
 * result where it changed anything. */
static onyx_status rewrite_pass(const graph *g, const op_registry *ops, rewrite_fn pass,
                                rewritten **rw) {
    if (*rw) g = &(*rw)->g;
    onyx_status st = ONYX_OK;
    rewritten *next = NULL;
    rewriter r = {.g = g, .ops = ops};
    r.uses = calloc((size_t)g->n_values + 1, sizeof *r.uses);
    r.producer = malloc(((size_t)g->n_values + 1) * sizeof *r.producer);
    r.gone = calloc((size_t)g->n_nodes + 1, sizeof *r.gone);
    r.made = calloc(2 * (size_t)g->n_nodes + 1, sizeof *r.made);
    r.retyped = calloc((size_t)g->n_values + 1, sizeof *r.retyped);
    if (!r.uses || !r.producer || !r.gone || !r.made || !r.retyped) {
        st = onyx_oom("graph rewrite");
        goto done;
    }
    for (int v = 0; v < g->n_values; v++) r.producer[v] = -1;
    for (int n = 0; n < g->n_nodes; n++) {
        const graph_node *nd = &g->nodes[n];
        for (int i = 0; i < nd->n_inputs; i++)
            if (nd->inputs[i] >= 0) r.uses[nd->inputs[i]]++;
        for (int c = 0; c < nd->n_captures; c++) r.uses[nd->captures[c]] += 2; /* never inner */
        for (int o = 0; o < nd->n_outputs; o++)
            if (nd->outputs[o] >= 0) r.producer[nd->outputs[o]] = n;
    }
    for (int o = 0; o < g->n_outputs; o++)
        if (g->outputs[o] >= 0) r.uses[g->outputs[o]] += 2; /* graph outputs stay */
    CHECK(pass(&r));
    if (r.n_made == 0) goto done;

    /* the rewritten graph: the same values (producers renumbered), the surviving nodes */
    next = calloc(1, sizeof *next);
    if (!next) {
        st = onyx_oom("graph rewrite");
        goto done;
    }
    graph *copy = &next->g;
    *copy = *g;
    copy->nodes = calloc((size_t)g->n_nodes + (size_t)r.n_made + 1, sizeof *copy->nodes);
    copy->values = malloc(((size_t)g->n_values + (size_t)r.n_added + 1) * sizeof *copy->values);
    next->owned = calloc(2 * (size_t)r.n_made + (size_t)r.n_blocks + 1, sizeof *next->owned);
    if (!copy->nodes || !copy->values || !next->owned) {
        st = onyx_oom("graph rewrite");
        goto done;
    }
    memcpy(copy->values, g->values, (size_t)g->n_values * sizeof *g->values);
    for (int v = 0; v < g->n_values; v++)
        if (r.retyped[v]) {
            type_init(&copy->values[v].type);
            copy->values[v].dim_params = NULL;
        }
    if (r.n_added) /* r.added is NULL without */
        memcpy(copy->values + g->n_values, r.added, (size_t)r.n_added * sizeof *r.added);
    copy->n_values += r.n_added;
    for (int k = 0; k < r.n_blocks; k++) next->owned[next->n_owned++] = r.blocks[k];
    r.n_blocks = 0; /* owned by the copy now */
    int kept = 0;
    for (int slot = 0; slot < 2 * g->n_nodes; slot++) {
        const graph_node *made = r.made[slot].op_type ? &r.made[slot] : NULL;
        const graph_node *nd = made                          ? made
                               : slot % 2 || r.gone[slot / 2] ? NULL
                                                             : &g->nodes[slot / 2];
        if (!nd) continue;
        if (made) { /* the copy owns the replacement's blocks from now on */
            next->owned[next->n_owned++] = made->inputs;
            if (made->attrs) next->owned[next->n_owned++] = made->attrs;
        }
        copy->nodes[kept] = *nd;
        for (int o = 0; o < nd->n_outputs; o++)
            if (nd->outputs[o] >= 0) copy->values[nd->outputs[o]].producer = kept;
        kept++;
    }
    copy->n_nodes = kept;
    memset(r.made, 0, sizeof *r.made * 2 * (size_t)g->n_nodes); /* owned by the copy now */
done:
    if (r.made)
        for (int slot = 0; slot < 2 * g->n_nodes; slot++) {
            free(r.made[slot].inputs);
            free(r.made[slot].attrs);
        }
    for (int k = 0; k < r.n_blocks; k++) free(r.blocks[k]);
    free(r.blocks);
    free(r.added);
    graph_types_free(g, r.types);
    free(r.uses);
    free(r.producer);
    free(r.gone);
    free(r.made);
    free(r.retyped);
    /* last, since g may be the graph of *rw, which the new graph takes over here */
    if (st == ONYX_OK && next) st = adopt(next, *rw);
    if (st != ONYX_OK) {
        if (next) graph_optimized_free(&next->g);
        return st;
    }
    if (next) *rw = next;
    return ONYX_OK;
}

onyx_status graph_optimize(const graph *g, const op_registry *ops, bool half_as_float,
                           graph **out) {
    *out = NULL;
    rewritten *rw = NULL;
    onyx_status st = rewrite_pass(g, ops, patterns, &rw);
    if (st == ONYX_OK) st = rewrite_pass(g, ops, duplicates, &rw);
    if (st == ONYX_OK && half_as_float) st = half_pass(g, ops, &rw);
    if (st != ONYX_OK) {
        if (rw) graph_optimized_free(&rw->g);
        return st;
    }
    *out = rw ? &rw->g : NULL;
    return ONYX_OK;
}

/* QDQ graphs in 8 bits (optimization level ALL). onnxruntime's quantizer in its QDQ format writes
 * each quantized op as the float op between DequantizeLinear (DQ) and QuantizeLinear (Q) nodes:
 * run as written, that computes in float and holds the weights in float too. These rules make of
 * each such unit the 8-bit op onnxruntime's QDQ transformers make of it, which the int8 kernels
 * run (kernels_cpu/conv/qconv_dnnl.c and the 8-bit chains of core/fuse.c):
 *   Q(Conv(DQ(x), DQ(W) [, DQ(B)]))            -> QLinearConv(x, W [, B])
 *        W a constant; B a constant int32 whose scale is x_scale * w_scale, its zero point 0
 *        (what the quantizer writes), so that it adds to the int32 sums as it is
 *   Q(Add(DQ(a), DQ(b))), Q(Mul(DQ(a), DQ(b))) -> com.microsoft QLinearAdd(a, b), QLinearMul(a, b)
 *   Q(Sigmoid(DQ(x)))                          -> com.microsoft QLinearSigmoid(x)
 *   Q(MatMul(DQ(a), DQ(B)))                    -> QLinearMatMul(a, B)
 *        B a constant 2-D, per tensor or per column
 *   [Q](Gemm(DQ(a), DQ(B) [, DQ(C)]))          -> com.microsoft QGemm(a, B [, C]), 8-bit or float
 *        result (a classifier's), alpha and beta 1, C a constant int32 as B above
 *   Q(MaxPool(DQ(x))), Q's scale and zero point DQ's -> MaxPool(x) on the 8-bit x
 *   Q(Transpose | Reshape | Flatten | Squeeze | Unsqueeze(DQ(x), ...)), the same parameters
 *                                              -> that op on the 8-bit x (it moves values only)
 *   Q(GlobalAveragePool(DQ(x)))                -> com.microsoft QLinearGlobalAveragePool(x)
 *   Q(AveragePool(DQ(x)))                      -> com.microsoft QLinearAveragePool(x)
 *   Q(Softmax(DQ(x)))                          -> com.microsoft QLinearSoftmax(x)
 *   Q(Concat(DQ(x1), DQ(x2), ...))             -> Concat(x1, x2, ...) on 8 bits where all have
 *        Q's scale and zero point, else com.microsoft QLinearConcat
 *   Q(Gather(DQ(x), i)), Q(Resize(DQ(x), ...)), Q's parameters DQ's -> that op on the 8-bit x
 *   Q(f(DQ(x))), f elementwise float ops of x and one-element constants, inner Q -> DQ pairs
 *   included (GELU spelled out, x * Sigmoid(x), an Add of a quantized constant)
 *                                              -> ai.onyx LookupTable(x, f's 256 results), the
 *        table computed by the unit's own nodes at plan time: exactly what the unit computes
 * The 8-bit op rounds once where the unit rounds twice (its float op, then Q): a result may move
 * by one quantization step, as with onnxruntime's rewrites. Only 8-bit types, float scales and
 * zero points that are constants, per-tensor activations (weights per tensor or per output
 * channel) and no block quantization; any other unit stays as written. A DQ goes once nothing
 * reads it any more. */
#include <stdlib.h>
#include <string.h>

#include "core/optimize.h"
#include "core/rewriter.h"

static bool eight_bit(onyx_dtype t) { return t == ONYX_UINT8 || t == ONYX_INT8; }

/* The parameters of a DQ or Q node the rules take. */
typedef struct qparams {
    int x;                /* DQ: its 8-bit input; Q: its float input */
    int scale, zero;      /* the values of its scale and zero point */
    const tensor *s, *z;  /* their constants: float32 scale, 8-bit zero point, of one size */
} qparams;

/* Whether n is a DQ (dq) or Q node of constant float32 scales and 8-bit zero points, count
 * values of them (0: any count, along axis `axis` of a rank-`rank` input when more than one),
 * without block quantization or another output type. */
static bool qdq_params(const rewriter *r, const graph_node *n, bool dq, int64_t count, int rank,
                       int axis_want, qparams *out) {
    if (!rw_is_op(n, dq ? "DequantizeLinear" : "QuantizeLinear") || n->n_inputs < 3 ||
        n->n_outputs != 1 || n->inputs[0] < 0 || n->inputs[1] < 0 || n->inputs[2] < 0 ||
        attr_int(n, "block_size", 0) != 0)
        return false;
    int64_t out_type = attr_int(n, "output_dtype", 0); /* 0: the default (DQ float, Q zp's) */
    if (out_type != 0 && !(dq && out_type == 1 /* FLOAT */)) return false;
    const tensor *s = rw_constant(r, n->inputs[1]), *z = rw_constant(r, n->inputs[2]);
    if (!s || !z || s->dtype != ONYX_FLOAT || !eight_bit(z->dtype) || s->numel != z->numel ||
        (count && s->numel != count))
        return false;
    if (s->numel > 1) { /* per channel: along axis_want of the quantized tensor */
        int64_t axis = attr_int(n, "axis", 1);
        if (axis < 0) axis += rank;
        if (axis != axis_want || s->rank != 1) return false;
    }
    *out = (qparams){.x = n->inputs[0], .scale = n->inputs[1], .zero = n->inputs[2], .s = s, .z = z};
    return true;
}

/* The DQ of an activation feeding v: per tensor. */
static bool activation_dq(const rewriter *r, int v, qparams *out) {
    return qdq_params(r, rw_producer(r, v), true, 1, 0, 0, out);
}

/* One reader of v fewer; a DQ left unread goes, releasing its own inputs. */
static void release(rewriter *r, int v) {
    if (v < 0 || --r->uses[v] > 0) return;
    const graph_node *p = rw_producer(r, v);
    if (!rw_is_op(p, "DequantizeLinear")) return;
    r->gone[rw_index(r, p)] = true;
    for (int i = 0; i < p->n_inputs; i++) release(r, p->inputs[i]);
}

/* Puts domain:op_type(ins) -> q's output at q in place of the unit's float op and q. */
/* Puts domain:op_type(ins) -> q's output at q in place of the unit's float op and q (q NULL: a
 * unit with a float result, op's output at op). */
static onyx_status place_unit(rewriter *r, const graph_node *q, const graph_node *op,
                              const char *domain, const char *op_type, int version, const int *ins,
                              int n_in, const graph_attr *attrs, int n_attrs) {
    const graph_node *members[2] = {op, q}, *last = q ? q : op;
    int made = r->n_made;
    TRY(rw_place_at(r, last, false, op->name, members, q ? 2 : 1, domain, op_type, version, ins,
                    n_in, last->outputs[0], attrs, n_attrs));
    if (r->n_made == made) return ONYX_OK; /* the registry lacks the op: kept as written */
    for (int i = 0; i < n_in; i++)
        if (ins[i] >= 0) r->uses[ins[i]]++;
    for (int i = 0; i < op->n_inputs; i++) release(r, op->inputs[i]);
    for (int i = 0; q && i < q->n_inputs; i++) release(r, q->inputs[i]);
    return ONYX_OK;
}

static bool same_scalar(const tensor *a, const tensor *b) {
    return a->numel == 1 && b->numel == 1 && a->dtype == b->dtype &&
           !memcmp(a->data, b->data, dtype_size(a->dtype));
}

/* Whether B (int32, its DQ's scale bs and zero point bz) adds to the int32 sums of x by W as it
 * is: bs[m] == x_scale * w_scale[m] exactly, in float as the quantizer computes it, bz all 0. */
static bool bias_fits(const rewriter *r, const graph_node *dq, const qparams *x,
                      const qparams *w, int64_t m) {
    if (!rw_is_op(dq, "DequantizeLinear") || dq->n_inputs < 2 || dq->n_outputs != 1 ||
        attr_int(dq, "block_size", 0) != 0)
        return false;
    const tensor *b = rw_constant(r, dq->inputs[0]), *bs = rw_constant(r, dq->inputs[1]);
    const tensor *bz = dq->n_inputs > 2 && dq->inputs[2] >= 0 ? rw_constant(r, dq->inputs[2]) : NULL;
    if (!b || b->dtype != ONYX_INT32 || b->numel != m || !bs || bs->dtype != ONYX_FLOAT ||
        (bs->numel != 1 && bs->numel != m) || (dq->n_inputs > 2 && dq->inputs[2] >= 0 && !bz))
        return false;
    if (bz) {
        if (bz->dtype != ONYX_INT32 || bz->numel != bs->numel) return false;
        for (int64_t i = 0; i < bz->numel; i++)
            if (((const int32_t *)bz->data)[i] != 0) return false;
    }
    float xs = ((const float *)x->s->data)[0];
    for (int64_t i = 0; i < m; i++) {
        float ws = ((const float *)w->s->data)[w->s->numel == 1 ? 0 : i];
        float want = xs * ws, got = ((const float *)bs->data)[bs->numel == 1 ? 0 : i];
        if (memcmp(&want, &got, sizeof want) != 0) return false;
    }
    return true;
}

static onyx_status conv_unit(rewriter *r, const graph_node *q, const qparams *y,
                             const graph_node *conv) {
    qparams x, w;
    if (conv->n_inputs < 2 || conv->n_inputs > 3 || conv->n_outputs != 1 ||
        !activation_dq(r, conv->inputs[0], &x))
        return ONYX_OK;
    const graph_node *wdq = rw_producer(r, conv->inputs[1]);
    const tensor *wt = wdq ? rw_constant(r, wdq->inputs[0]) : NULL;
    if (!wt || !eight_bit(wt->dtype) || wt->rank < 3 ||
        !qdq_params(r, wdq, true, 0, wt->rank, 0, &w) || (w.s->numel != 1 && w.s->numel != wt->dims[0]))
        return ONYX_OK;
    int bias = conv->n_inputs > 2 ? conv->inputs[2] : -1, b_q = -1;
    if (bias >= 0) {
        const graph_node *bdq = rw_producer(r, bias);
        if (!bias_fits(r, bdq, &x, &w, wt->dims[0])) return ONYX_OK;
        b_q = bdq->inputs[0];
    }
    int ins[9] = {x.x, x.scale, x.zero, w.x, w.scale, w.zero, y->scale, y->zero, b_q};
    return place_unit(r, q, conv, "", "QLinearConv", 10, ins, b_q >= 0 ? 9 : 8, conv->attrs,
                      conv->n_attrs);
}

/* Add or Mul (broadcasting, from version 7) of two 8-bit tensors of y's type. */
static onyx_status binary_unit(rewriter *r, const graph_node *q, const qparams *y,
                               const graph_node *op, const char *qop) {
    qparams a, b;
    if (op->version < 7 || op->n_inputs != 2 || op->n_outputs != 1 ||
        !activation_dq(r, op->inputs[0], &a) || !activation_dq(r, op->inputs[1], &b) ||
        a.z->dtype != y->z->dtype || b.z->dtype != y->z->dtype)
        return ONYX_OK;
    int ins[8] = {a.x, a.scale, a.zero, b.x, b.scale, b.zero, y->scale, y->zero};
    return place_unit(r, q, op, "com.microsoft", qop, 1, ins, 8, NULL, 0);
}

/* An elementwise function of one 8-bit tensor of y's type (its com.microsoft op takes no
 * attributes: only ops that have none). */
static onyx_status unary_unit(rewriter *r, const graph_node *q, const qparams *y,
                              const graph_node *op, const char *qop) {
    qparams x;
    if (op->n_inputs != 1 || op->n_outputs != 1 || op->n_attrs != 0 ||
        !activation_dq(r, op->inputs[0], &x) || x.z->dtype != y->z->dtype)
        return ONYX_OK;
    int ins[5] = {x.x, x.scale, x.zero, y->scale, y->zero};
    return place_unit(r, q, op, "com.microsoft", qop, 1, ins, 5, NULL, 0);
}

static onyx_status matmul_unit(rewriter *r, const graph_node *q, const qparams *y,
                               const graph_node *mm) {
    qparams a, b;
    if (mm->n_inputs != 2 || mm->n_outputs != 1 || !activation_dq(r, mm->inputs[0], &a))
        return ONYX_OK;
    const graph_node *bdq = rw_producer(r, mm->inputs[1]);
    const tensor *bt = bdq ? rw_constant(r, bdq->inputs[0]) : NULL;
    if (!bt || !eight_bit(bt->dtype) || bt->rank != 2 ||
        !qdq_params(r, bdq, true, 0, 2, 1, &b) || (b.s->numel != 1 && b.s->numel != bt->dims[1]))
        return ONYX_OK;
    int ins[8] = {a.x, a.scale, a.zero, b.x, b.scale, b.zero, y->scale, y->zero};
    return place_unit(r, q, mm, "", "QLinearMatMul", 10, ins, 8, NULL, 0);
}

/* Max pooling commutes with a monotonic requantization only when it is the identity: the same
 * scale and zero point on both sides. */
static onyx_status maxpool_unit(rewriter *r, const graph_node *q, const qparams *y,
                                const graph_node *pool) {
    qparams x;
    if (pool->n_inputs != 1 || pool->n_outputs != 1 || !activation_dq(r, pool->inputs[0], &x) ||
        !same_scalar(x.s, y->s) || !same_scalar(x.z, y->z))
        return ONYX_OK;
    int ins[1] = {x.x};
    /* MaxPool takes 8-bit tensors from version 12 on; its attributes are those of 8 and 10 */
    return place_unit(r, q, pool, "", "MaxPool", pool->version < 12 ? 12 : pool->version, ins, 1,
                      pool->attrs, pool->n_attrs);
}

/* Gemm(DQ(a), DQ(B) [, DQ(C)]) with alpha and beta 1: B a constant 2-D, per tensor or per output
 * column, C a constant int32 of scale a_scale * b_scale[j] and zero point 0; q the Q that reads
 * its result (an 8-bit QGemm), or NULL (a float result: a network's classifier). */
static onyx_status gemm_unit(rewriter *r, const graph_node *q, const qparams *y,
                             const graph_node *gemm) {
    qparams a, b;
    if (gemm->n_inputs < 2 || gemm->n_inputs > 3 || gemm->n_outputs != 1 ||
        attr_float(gemm, "alpha", 1.0f) != 1.0f || attr_float(gemm, "beta", 1.0f) != 1.0f ||
        !activation_dq(r, gemm->inputs[0], &a))
        return ONYX_OK;
    bool tb = attr_int(gemm, "transB", 0) != 0;
    const graph_node *bdq = rw_producer(r, gemm->inputs[1]);
    const tensor *bt = bdq ? rw_constant(r, bdq->inputs[0]) : NULL;
    if (!bt || !eight_bit(bt->dtype) || bt->rank != 2 ||
        !qdq_params(r, bdq, true, 0, 2, tb ? 0 : 1, &b) ||
        (b.s->numel != 1 && b.s->numel != bt->dims[tb ? 0 : 1]))
        return ONYX_OK;
    int c = gemm->n_inputs > 2 ? gemm->inputs[2] : -1, c_q = -1;
    if (c >= 0) {
        const graph_node *cdq = rw_producer(r, c);
        if (!bias_fits(r, cdq, &a, &b, bt->dims[tb ? 0 : 1])) return ONYX_OK;
        c_q = cdq->inputs[0];
    }
    /* QGemm's attributes are Gemm's but beta (1 here) */
    graph_attr attrs[4];
    int n_attrs = 0;
    for (int i = 0; i < gemm->n_attrs && n_attrs < 4; i++)
        if (strcmp(gemm->attrs[i].name, "beta") != 0) attrs[n_attrs++] = gemm->attrs[i];
    int ins[9] = {a.x, a.scale, a.zero, b.x, b.scale, b.zero, c_q,
                  q ? y->scale : -1, q ? y->zero : -1};
    return place_unit(r, q, gemm, "com.microsoft", "QGemm", 1, ins, q ? 9 : 7, attrs, n_attrs);
}

onyx_status qdq_rewrite_float_gemm(rewriter *r, const graph_node *gemm) {
    /* a Gemm whose result a Q reads is that Q's unit (qdq_rewrite) */
    const graph_node *reader = gemm->n_outputs == 1 ? rw_sole_reader(r, gemm->outputs[0]) : NULL;
    if (rw_is_op(reader, "QuantizeLinear")) return ONYX_OK;
    return gemm_unit(r, NULL, NULL, gemm);
}

/* An op that only moves values (its other inputs shapes or axes) commutes with a quantization
 * of the same parameters on both sides. */
static onyx_status moving_unit(rewriter *r, const graph_node *q, const qparams *y,
                               const graph_node *op) {
    qparams x;
    if (op->n_inputs < 1 || op->n_outputs != 1 || !activation_dq(r, op->inputs[0], &x) ||
        !same_scalar(x.s, y->s) || !same_scalar(x.z, y->z))
        return ONYX_OK;
    int ins[4];
    if (op->n_inputs > 4) return ONYX_OK;
    for (int i = 0; i < op->n_inputs; i++) ins[i] = i == 0 ? x.x : op->inputs[i];
    /* Flatten takes 8-bit tensors from version 9 on, with the same attribute */
    int version = rw_is_op(op, "Flatten") && op->version < 9 ? 9 : op->version;
    return place_unit(r, q, op, "", op->op_type, version, ins, op->n_inputs, op->attrs,
                      op->n_attrs);
}

static onyx_status global_average_unit(rewriter *r, const graph_node *q, const qparams *y,
                                       const graph_node *pool) {
    qparams x;
    if (pool->n_inputs != 1 || pool->n_outputs != 1 || !activation_dq(r, pool->inputs[0], &x) ||
        x.z->dtype != y->z->dtype)
        return ONYX_OK;
    int ins[5] = {x.x, x.scale, x.zero, y->scale, y->zero};
    return place_unit(r, q, pool, "com.microsoft", "QLinearGlobalAveragePool", 1, ins, 5, NULL, 0);
}

/* Concat of 8-bit tensors of y's type: of y's scale and zero point all, the values move only
 * (Concat on the 8-bit tensors); else each is requantized to y's (com.microsoft QLinearConcat,
 * onnxruntime's). */
static onyx_status concat_unit(rewriter *r, const graph_node *q, const qparams *y,
                               const graph_node *cat) {
    enum { MAX_PARTS = 32 };
    if (cat->n_inputs < 1 || cat->n_inputs > MAX_PARTS || cat->n_outputs != 1) return ONYX_OK;
    int ins[2 + 3 * MAX_PARTS], moved[MAX_PARTS];
    bool same = true;
    ins[0] = y->scale;
    ins[1] = y->zero;
    for (int i = 0; i < cat->n_inputs; i++) {
        qparams x;
        if (!activation_dq(r, cat->inputs[i], &x) || x.z->dtype != y->z->dtype) return ONYX_OK;
        same = same && same_scalar(x.s, y->s) && same_scalar(x.z, y->z);
        moved[i] = x.x;
        ins[2 + 3 * i] = x.x;
        ins[3 + 3 * i] = x.scale;
        ins[4 + 3 * i] = x.zero;
    }
    if (same)
        return place_unit(r, q, cat, "", "Concat", cat->version, moved, cat->n_inputs, cat->attrs,
                          cat->n_attrs);
    if (!node_attr(cat, "axis")) return ONYX_OK; /* Concat-1's default axis: QLinearConcat has none */
    return place_unit(r, q, cat, "com.microsoft", "QLinearConcat", 1, ins, 2 + 3 * cat->n_inputs,
                      cat->attrs, cat->n_attrs);
}

/* AveragePool of an 8-bit tensor of y's type -> com.microsoft QLinearAveragePool, which has
 * AveragePool's attributes but dilations (all 1, or the unit stays). */
static onyx_status average_unit(rewriter *r, const graph_node *q, const qparams *y,
                                const graph_node *pool) {
    qparams x;
    if (pool->n_inputs != 1 || pool->n_outputs != 1 || !activation_dq(r, pool->inputs[0], &x) ||
        x.z->dtype != y->z->dtype || pool->n_attrs > 8)
        return ONYX_OK;
    graph_attr attrs[8];
    int n_attrs = 0;
    for (int i = 0; i < pool->n_attrs; i++) {
        const graph_attr *a = &pool->attrs[i];
        if (strcmp(a->name, "dilations") != 0) {
            attrs[n_attrs++] = *a;
            continue;
        }
        for (size_t k = 0; k < a->n; k++)
            if (a->ints[k] != 1) return ONYX_OK;
    }
    int ins[5] = {x.x, x.scale, x.zero, y->scale, y->zero};
    return place_unit(r, q, pool, "com.microsoft", "QLinearAveragePool", 1, ins, 5, attrs, n_attrs);
}

/* Softmax of an 8-bit tensor of y's type -> com.microsoft QLinearSoftmax (onnxruntime's table
 * scheme), told the Softmax version whose axis semantics it keeps. */
static onyx_status softmax_unit(rewriter *r, const graph_node *q, const qparams *y,
                                const graph_node *sm) {
    qparams x;
    if (sm->n_inputs != 1 || sm->n_outputs != 1 || !activation_dq(r, sm->inputs[0], &x) ||
        x.z->dtype != y->z->dtype || sm->n_attrs > 1)
        return ONYX_OK;
    graph_attr attrs[2] = {{.name = "opset", .type = ATTR_INT, .i = sm->version}};
    int n_attrs = 1;
    if (sm->n_attrs) attrs[n_attrs++] = sm->attrs[0]; /* axis */
    int ins[5] = {x.x, x.scale, x.zero, y->scale, y->zero};
    return place_unit(r, q, sm, "com.microsoft", "QLinearSoftmax", 1, ins, 5, attrs, n_attrs);
}

onyx_status qdq_rewrite(rewriter *r, const graph_node *q) {
    qparams y;
    if (!qdq_params(r, q, false, 1, 0, 0, &y)) return ONYX_OK;
    const graph_node *op = rw_producer(r, y.x);
    if (!op || r->uses[y.x] != 1) return ONYX_OK; /* the float result is read elsewhere too */
    if (rw_is_op(op, "Conv")) return conv_unit(r, q, &y, op);
    if (rw_is_op(op, "MatMul")) return matmul_unit(r, q, &y, op);
    if (rw_is_op(op, "Gemm")) return gemm_unit(r, q, &y, op);
    if (rw_is_op(op, "Add")) return binary_unit(r, q, &y, op, "QLinearAdd");
    if (rw_is_op(op, "Mul")) return binary_unit(r, q, &y, op, "QLinearMul");
    if (rw_is_op(op, "Sigmoid")) return unary_unit(r, q, &y, op, "QLinearSigmoid");
    if (rw_is_op(op, "MaxPool")) return maxpool_unit(r, q, &y, op);
    if (rw_is_op(op, "GlobalAveragePool")) return global_average_unit(r, q, &y, op);
    if (rw_is_op(op, "Concat")) return concat_unit(r, q, &y, op);
    if (rw_is_op(op, "AveragePool")) return average_unit(r, q, &y, op);
    if (rw_is_op(op, "Softmax")) return softmax_unit(r, q, &y, op);
    if (rw_is_op(op, "Transpose") || rw_is_op(op, "Reshape") || rw_is_op(op, "Flatten") ||
        rw_is_op(op, "Squeeze") || rw_is_op(op, "Unsqueeze") || rw_is_op(op, "Gather"))
        return moving_unit(r, q, &y, op);
    /* Resize interpolates, but of an affine map: with y's parameters, resizing the 8-bit x
     * (in double, rounded half to even) is the unit within a rounding, as onnxruntime drops
     * its DQ and Q */
    if (rw_is_op(op, "Resize")) return moving_unit(r, q, &y, op);
    return ONYX_OK;
}

/* ---- Tables: a unit that is a function of one 8-bit tensor
 *
 * Q(f(DQ(x))) with f elementwise float ops over x and one-element constants (GELU spelled out,
 * x * Sigmoid(x), an Add or Mul of a quantized constant, ...), Q -> DQ pairs inside f included,
 * takes 256 values: it becomes ai.onyx LookupTable(x, T). T is f computed on the 256 codes by
 * copies of the unit's own nodes that read a constant of them instead of x: plan time folds the
 * copies (core/exec.c) with the very kernels the unit runs with, so the table holds what the
 * unit computes, exactly. Tried before the other rules, from the graph's end, so a unit takes in
 * the Q -> DQ pairs of smaller units inside it. */

enum { TABLE_MEMBERS = 48, TABLE_ROOTS = 4, TABLE_DEPTH = 32, TABLE_INPUTS = 8 };

typedef struct table_unit {
    const graph_node *members[TABLE_MEMBERS]; /* the float ops and inner Q and DQ nodes */
    int n_members;
    const graph_node *roots[TABLE_ROOTS]; /* the DQ nodes of x */
    int n_roots;
    const graph_node *stops[TABLE_ROOTS]; /* inner Qs not to look through */
    int n_stops;
    int x;              /* the 8-bit tensor, -1 until found */
    int const_rank;     /* the largest rank of the constants */
} table_unit;

/* The elementwise float ops a table takes: each output element a function of the same element of
 * its inputs (the others one-element constants). */
static bool table_op(const graph_node *n) {
    static const char *const ops[] = {
        "Abs", "Neg", "Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Reciprocal",
        "Softplus", "Softsign", "Elu", "Selu", "Celu", "LeakyRelu", "HardSigmoid", "HardSwish",
        "Gelu", "Mish", "ThresholdedRelu", "PRelu", "Clip", "Floor", "Ceil", "Round", "Sin", "Cos",
        "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Identity"};
    if (*n->domain || n->n_outputs != 1 || n->outputs[0] < 0 || n->n_inputs > TABLE_INPUTS)
        return false;
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
        if (!strcmp(n->op_type, ops[k])) return true;
    return false;
}

static bool table_has(const graph_node *const *list, int n, const graph_node *nd) {
    for (int k = 0; k < n; k++)
        if (list[k] == nd) return true;
    return false;
}

static bool table_add(table_unit *u, const graph_node *nd) {
    if (table_has(u->members, u->n_members, nd)) return true;
    if (u->n_members == TABLE_MEMBERS) return false;
    u->members[u->n_members++] = nd;
    return true;
}

/* What value v of a unit is. */
enum { T_FAIL, T_CONST, T_X };

static int table_value(const rewriter *r, table_unit *u, int v, int depth);

static int table_const(table_unit *u, const tensor *c) {
    if (c->numel != 1) return T_FAIL;
    if (c->rank > u->const_rank) u->const_rank = c->rank;
    return T_CONST;
}

/* A DQ in the unit: of a constant, of x, or of an inner Q (whose float input is again a function
 * of x, taken when it is). */
static int table_dq(const rewriter *r, table_unit *u, const graph_node *dq, int depth) {
    qparams px;
    if (!activation_dq(r, dq->outputs[0], &px)) return T_FAIL;
    const tensor *c = rw_constant(r, px.x);
    if (c) return table_const(u, c);
    const graph_node *q = rw_producer(r, px.x);
    qparams pq;
    if (q && r->uses[px.x] == 1 && !table_has(u->stops, u->n_stops, q) &&
        qdq_params(r, q, false, 1, 0, 0, &pq) &&
        pq.z->dtype == px.z->dtype && depth < TABLE_DEPTH) {
        table_unit before = *u;
        if (table_value(r, u, pq.x, depth + 1) == T_X && table_add(u, q) && table_add(u, dq))
            return T_X;
        *u = before;
    }
    if (u->x >= 0 && u->x != px.x) return T_FAIL; /* a function of two tensors */
    if (!table_has(u->roots, u->n_roots, dq)) {
        if (u->n_roots == TABLE_ROOTS) return T_FAIL;
        u->roots[u->n_roots++] = dq;
    }
    u->x = px.x;
    return T_X;
}

static int table_value(const rewriter *r, table_unit *u, int v, int depth) {
    if (v < 0 || depth > TABLE_DEPTH) return T_FAIL;
    const tensor *c = rw_constant(r, v);
    if (c) return table_const(u, c);
    const graph_node *p = rw_producer(r, v);
    if (!p || p->n_outputs != 1) return T_FAIL;
    if (table_has(u->members, u->n_members, p) || table_has(u->roots, u->n_roots, p)) return T_X;
    if (rw_is_op(p, "DequantizeLinear")) return table_dq(r, u, p, depth);
    if (!table_op(p)) return T_FAIL;
    bool of_x = false;
    for (int i = 0; i < p->n_inputs; i++) {
        if (p->inputs[i] < 0) continue;
        int kind = table_value(r, u, p->inputs[i], depth + 1);
        if (kind == T_FAIL) return T_FAIL;
        of_x |= kind == T_X;
    }
    /* a constant expression is constant folding's */
    return of_x && table_add(u, p) ? T_X : T_FAIL;
}

/* The member of the unit ending at q whose output something else reads too (or a graph output:
 * the unit cannot go), or NULL. */
static const graph_node *table_leak(const rewriter *r, const table_unit *u, const graph_node *q) {
    for (int m = 0; m < u->n_members; m++) {
        if (u->members[m] == q) continue;
        int v = u->members[m]->outputs[0], readers = 0;
        for (int k = 0; k < u->n_members; k++)
            for (int i = 0; i < u->members[k]->n_inputs; i++) readers += u->members[k]->inputs[i] == v;
        if (readers != r->uses[v]) return u->members[m];
    }
    return NULL;
}

/* Whether the unit's constants broadcast to x's shape without growing it. */
static onyx_status table_keeps_shape(rewriter *r, const table_unit *u, bool *keeps) {
    *keeps = u->const_rank == 0;
    if (*keeps) return ONYX_OK;
    if (!r->types) TRY(graph_infer_types(r->g, &r->types));
    const type_info *t = &r->types[u->x];
    *keeps = t->kind == ONYX_VALUE_TENSOR && t->rank >= u->const_rank;
    return ONYX_OK;
}

static int table_by_index(const void *a, const void *b) {
    const graph_node *x = *(const graph_node *const *)a, *y = *(const graph_node *const *)b;
    return (x > y) - (x < y);
}

/* The copy of value v for the table: a member's output's copy, a root DQ's copy, or v. */
static int table_copy_of(const table_unit *u, const int *copies, const int *root_copies, int v) {
    for (int m = 0; m < u->n_members; m++)
        if (u->members[m]->outputs[0] == v) return copies[m];
    for (int k = 0; k < u->n_roots; k++)
        if (u->roots[k]->outputs[0] == v) return root_copies[k];
    return v;
}

/* Places the unit as LookupTable(x, T) -> q's output at q, T made by copies of the members
 * (q last among them) that read the codes of x's type. */
static onyx_status table_place(rewriter *r, const graph_node *q, const table_unit *u,
                               onyx_dtype xt) {
    tensor *codes = malloc(sizeof *codes + 256);
    if (!rw_keep(r, codes)) return onyx_oom("graph rewrite");
    *codes = (tensor){.dtype = xt, .rank = 1, .dims = {256}, .numel = 256, .data = codes + 1,
                      .nbytes = 256, .device = DEVICE_CPU};
    for (int b = 0; b < 256; b++) ((uint8_t *)codes->data)[b] = (uint8_t)b;
    int codes_v = rw_add_value(r, u->x, "/codes", codes);
    if (codes_v < 0) return onyx_oom("graph rewrite");
    /* each root DQ's copy right after it (one there already, of another unit, serves) */
    int root_copies[TABLE_ROOTS], copies[TABLE_MEMBERS];
    for (int k = 0; k < u->n_roots; k++) {
        const graph_node *dq = u->roots[k], *there = &r->made[2 * rw_index(r, dq) + 1];
        if (there->op_type) {
            root_copies[k] = there->outputs[0];
            continue;
        }
        root_copies[k] = rw_add_value(r, dq->outputs[0], "/table", NULL);
        if (root_copies[k] < 0) return onyx_oom("graph rewrite");
        int ins[3] = {codes_v, dq->inputs[1], dq->inputs[2]};
        TRY(rw_place_at(r, dq, true, dq->name, NULL, 0, "", "DequantizeLinear", dq->version, ins,
                        3, root_copies[k], dq->attrs, dq->n_attrs));
    }
    /* the members' copies in their places, in graph order (what they read comes first) */
    table_unit sorted = *u;
    qsort(sorted.members, (size_t)sorted.n_members, sizeof *sorted.members, table_by_index);
    for (int m = 0; m < sorted.n_members; m++) {
        copies[m] = rw_add_value(r, sorted.members[m]->outputs[0], "/table", NULL);
        if (copies[m] < 0) return onyx_oom("graph rewrite");
    }
    for (int m = 0; m < sorted.n_members; m++) {
        const graph_node *nd = sorted.members[m];
        int ins[TABLE_INPUTS];
        for (int i = 0; i < nd->n_inputs; i++)
            ins[i] = nd->inputs[i] < 0 ? -1
                                       : table_copy_of(&sorted, copies, root_copies, nd->inputs[i]);
        TRY(rw_place_at(r, nd, false, nd->name, &nd, 1, nd->domain, nd->op_type, nd->version, ins,
                        nd->n_inputs, copies[m], nd->attrs, nd->n_attrs));
    }
    /* the lookup after q's copy, named after the op that made q's input */
    int ins[2] = {u->x, table_copy_of(&sorted, copies, root_copies, q->outputs[0])};
    TRY(rw_place_at(r, q, true, rw_producer(r, q->inputs[0]) ? rw_producer(r, q->inputs[0])->name
                                                              : q->name,
                    NULL, 0, "ai.onyx", "LookupTable", 1, ins, 2, q->outputs[0], NULL, 0));
    r->uses[u->x]++;
    /* the members read the root DQs no more */
    for (int m = 0; m < u->n_members; m++)
        for (int i = 0; i < u->members[m]->n_inputs; i++)
            for (int k = 0; k < u->n_roots; k++)
                if (u->members[m]->inputs[i] == u->roots[k]->outputs[0])
                    release(r, u->members[m]->inputs[i]);
    return ONYX_OK;
}

/* The table unit ending at Q node q, if there is one. An inner Q -> DQ pair whose value something
 * else reads too ends the unit there instead (x is then that pair's 8-bit value), tried again. */
static onyx_status table_unit_at(rewriter *r, const graph_node *q) {
    qparams y;
    if (!qdq_params(r, q, false, 1, 0, 0, &y)) return ONYX_OK;
    const graph_node *op = rw_producer(r, y.x);
    if (!op || rw_is_op(op, "DequantizeLinear") || !table_op(op)) return ONYX_OK;
    table_unit u = {.x = -1};
    for (int attempt = 0;; attempt++) {
        const graph_node *stops[TABLE_ROOTS];
        int n_stops = u.n_stops;
        memcpy(stops, u.stops, sizeof stops);
        u = (table_unit){.x = -1, .n_stops = n_stops};
        memcpy(u.stops, stops, sizeof stops);
        if (table_value(r, &u, y.x, 0) != T_X || !table_add(&u, q)) return ONYX_OK;
        const graph_node *leak = table_leak(r, &u, q);
        if (!leak) break;
        /* an inner DQ, or the Q before one: the pair's Q becomes a stop */
        if (rw_is_op(leak, "DequantizeLinear")) leak = rw_producer(r, leak->inputs[0]);
        if (!rw_is_op(leak, "QuantizeLinear") || u.n_stops == TABLE_ROOTS) return ONYX_OK;
        u.stops[u.n_stops++] = leak;
    }
    bool keeps;
    TRY(table_keeps_shape(r, &u, &keeps));
    if (!keeps) return ONYX_OK;
    const op_schema *schema;
    if (r->ops->resolve("ai.onyx", "LookupTable", 1, &schema) != ONYX_OK) {
        onyx_error_clear();
        return ONYX_OK;
    }
    qparams px;
    if (!activation_dq(r, u.roots[0]->outputs[0], &px)) return ONYX_OK;
    return table_place(r, q, &u, px.z->dtype);
}

onyx_status qdq_tables(rewriter *r) {
    for (int n = r->g->n_nodes - 1; n >= 0; n--)
        if (!r->gone[n] && rw_is_op(&r->g->nodes[n], "QuantizeLinear"))
            TRY(table_unit_at(r, &r->g->nodes[n]));
    return ONYX_OK;
}

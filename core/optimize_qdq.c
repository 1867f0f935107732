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
 * The 8-bit op rounds once where the unit rounds twice (its float op, then Q): a result may move
 * by one quantization step, as with onnxruntime's rewrites. Only 8-bit types, float scales and
 * zero points that are constants, per-tensor activations (weights per tensor or per output
 * channel) and no block quantization; any other unit stays as written. A DQ goes once nothing
 * reads it any more. */
#include <string.h>

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
    if (rw_is_op(op, "Transpose") || rw_is_op(op, "Reshape") || rw_is_op(op, "Flatten") ||
        rw_is_op(op, "Squeeze") || rw_is_op(op, "Unsqueeze"))
        return moving_unit(r, q, &y, op);
    return ONYX_OK;
}

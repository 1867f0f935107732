/* QDQ graphs in 8 bits. onnxruntime's quantizer in its QDQ format writes each quantized op as the
 * float op between DequantizeLinear (DQ) and QuantizeLinear (Q) nodes: run as written, that
 * computes in float and holds the weights in float too. These rules, each tried at a Q, make of
 * such a unit the 8-bit op onnxruntime's QDQ transformers make of it, which the int8 kernels run
 * (kernels_cpu/conv/qconv_dnnl.c and the 8-bit chains of core/fuse.c):
 *   qdq_conv     Q(Conv(DQ(x), DQ(W) [, DQ(B)]))            -> QLinearConv(x, W [, B])
 *        W a constant; B a constant int32 whose scale is x_scale * w_scale, its zero point 0
 *        (what the quantizer writes), so that it adds to the int32 sums as it is
 *   qdq_add, qdq_mul  Q(Add(DQ(a), DQ(b))), Q(Mul(DQ(a), DQ(b)))
 *                                        -> com.microsoft QLinearAdd(a, b), QLinearMul(a, b)
 *   qdq_sigmoid  Q(Sigmoid(DQ(x)))                          -> com.microsoft QLinearSigmoid(x)
 *   qdq_matmul   Q(MatMul(DQ(a), DQ(B)))                    -> QLinearMatMul(a, B)
 *        B a constant 2-D, per tensor or per column
 *   qdq_gemm, qdq_float_gemm (tried at the Gemm)  [Q](Gemm(DQ(a), DQ(B) [, DQ(C)]))
 *                                        -> com.microsoft QGemm(a, B [, C]), 8-bit or float
 *        result (a classifier's), alpha and beta 1, C a constant int32 as B above
 *   qdq_max_pool Q(MaxPool(DQ(x))), Q's scale and zero point DQ's -> MaxPool(x) on the 8-bit x
 *   qdq_move     Q(Transpose | Reshape | Flatten | Squeeze | Unsqueeze | Gather | Resize
 *                  (DQ(x), ...)), the same parameters   -> that op on the 8-bit x (it moves
 *        values only; Resize interpolates, but of an affine map: within a rounding)
 *   qdq_global_average_pool Q(GlobalAveragePool(DQ(x))) -> com.microsoft QLinearGlobalAveragePool(x)
 *   qdq_average_pool        Q(AveragePool(DQ(x)))       -> com.microsoft QLinearAveragePool(x)
 *   qdq_softmax  Q(Softmax(DQ(x)))                          -> com.microsoft QLinearSoftmax(x)
 *   qdq_concat   Q(Concat(DQ(x1), DQ(x2), ...))             -> Concat(x1, x2, ...) on 8 bits where
 *        all have Q's scale and zero point, else com.microsoft QLinearConcat
 * (and units that are functions of one 8-bit tensor become tables: core/rules/qdq_table.c).
 * The 8-bit op rounds once where the unit rounds twice (its float op, then Q): a result may move
 * by one quantization step, as with onnxruntime's rewrites. Only 8-bit types, float scales and
 * zero points that are constants, per-tensor activations (weights per tensor or per output
 * channel) and no block quantization; any other unit stays as written. A DQ goes once nothing
 * reads it any more. */
#include <stdlib.h>
#include <string.h>

#include "core/rules/rules.h"

/* Puts domain:op_type(ins) -> q's output at q in place of the unit's float op and q (q NULL: a
 * unit with a float result, op's output at op). */
static onyx_status place_unit(rewriter *r, const graph_node *q, const graph_node *op,
                              const char *domain, const char *op_type, int version, const int *ins,
                              int n_in, const graph_attr *attrs, int n_attrs) {
    const graph_node *members[2] = {op, q}, *last = q ? q : op;
    int made = r->n_placed;
    TRY(rw_place_at(r, last, false, op->name, members, q ? 2 : 1, domain, op_type, version, ins,
                    n_in, last->outputs[0], attrs, n_attrs));
    if (r->n_placed == made) return ONYX_OK; /* the registry lacks the op: kept as written */
    for (int i = 0; i < n_in; i++)
        if (ins[i] >= 0) r->uses[ins[i]]++;
    for (int i = 0; i < op->n_inputs; i++) rw_release(r, op->inputs[i]);
    for (int i = 0; q && i < q->n_inputs; i++) rw_release(r, q->inputs[i]);
    return ONYX_OK;
}

static bool same_scalar(const tensor *a, const tensor *b) {
    return a->numel == 1 && b->numel == 1 && a->dtype == b->dtype &&
           !memcmp(a->data, b->data, dtype_size(a->dtype));
}

/* Whether B (int32, its DQ's scale bs and zero point bz) adds to the int32 sums of x by W as it
 * is: bs[m] == x_scale * w_scale[m] exactly, in float as the quantizer computes it, bz all 0. */
static bool bias_fits(const rewriter *r, const graph_node *dq, const rw_qparams *x,
                      const rw_qparams *w, int64_t m) {
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

static onyx_status conv_unit(rewriter *r, const graph_node *q, const rw_qparams *y,
                             const graph_node *conv) {
    rw_qparams x, w;
    if (conv->n_inputs < 2 || conv->n_inputs > 3 || conv->n_outputs != 1 ||
        !rw_activation_dq(r, conv->inputs[0], &x))
        return ONYX_OK;
    const graph_node *wdq = rw_producer(r, conv->inputs[1]);
    const tensor *wt = wdq ? rw_constant(r, wdq->inputs[0]) : NULL;
    if (!wt || !rw_eight_bit(wt->dtype) || wt->rank < 3 ||
        !rw_qdq_params(r, wdq, true, 0, wt->rank, 0, &w) || (w.s->numel != 1 && w.s->numel != wt->dims[0]))
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
static onyx_status binary_unit(rewriter *r, const graph_node *q, const rw_qparams *y,
                               const graph_node *op, const char *qop) {
    rw_qparams a, b;
    if (op->version < 7 || op->n_inputs != 2 || op->n_outputs != 1 ||
        !rw_activation_dq(r, op->inputs[0], &a) || !rw_activation_dq(r, op->inputs[1], &b) ||
        a.z->dtype != y->z->dtype || b.z->dtype != y->z->dtype)
        return ONYX_OK;
    int ins[8] = {a.x, a.scale, a.zero, b.x, b.scale, b.zero, y->scale, y->zero};
    return place_unit(r, q, op, "com.microsoft", qop, 1, ins, 8, NULL, 0);
}

/* An elementwise function of one 8-bit tensor of y's type (its com.microsoft op takes no
 * attributes: only ops that have none). */
static onyx_status unary_unit(rewriter *r, const graph_node *q, const rw_qparams *y,
                              const graph_node *op, const char *qop) {
    rw_qparams x;
    if (op->n_inputs != 1 || op->n_outputs != 1 || op->n_attrs != 0 ||
        !rw_activation_dq(r, op->inputs[0], &x) || x.z->dtype != y->z->dtype)
        return ONYX_OK;
    int ins[5] = {x.x, x.scale, x.zero, y->scale, y->zero};
    return place_unit(r, q, op, "com.microsoft", qop, 1, ins, 5, NULL, 0);
}

static onyx_status matmul_unit(rewriter *r, const graph_node *q, const rw_qparams *y,
                               const graph_node *mm) {
    rw_qparams a, b;
    if (mm->n_inputs != 2 || mm->n_outputs != 1 || !rw_activation_dq(r, mm->inputs[0], &a))
        return ONYX_OK;
    const graph_node *bdq = rw_producer(r, mm->inputs[1]);
    const tensor *bt = bdq ? rw_constant(r, bdq->inputs[0]) : NULL;
    if (!bt || !rw_eight_bit(bt->dtype) || bt->rank != 2 ||
        !rw_qdq_params(r, bdq, true, 0, 2, 1, &b) || (b.s->numel != 1 && b.s->numel != bt->dims[1]))
        return ONYX_OK;
    int ins[8] = {a.x, a.scale, a.zero, b.x, b.scale, b.zero, y->scale, y->zero};
    return place_unit(r, q, mm, "", "QLinearMatMul", 10, ins, 8, NULL, 0);
}

/* Max pooling commutes with a monotonic requantization only when it is the identity: the same
 * scale and zero point on both sides. */
static onyx_status maxpool_unit(rewriter *r, const graph_node *q, const rw_qparams *y,
                                const graph_node *pool) {
    rw_qparams x;
    if (pool->n_inputs != 1 || pool->n_outputs != 1 || !rw_activation_dq(r, pool->inputs[0], &x) ||
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
static onyx_status gemm_unit(rewriter *r, const graph_node *q, const rw_qparams *y,
                             const graph_node *gemm) {
    rw_qparams a, b;
    if (gemm->n_inputs < 2 || gemm->n_inputs > 3 || gemm->n_outputs != 1 ||
        attr_float(gemm, "alpha", 1.0f) != 1.0f || attr_float(gemm, "beta", 1.0f) != 1.0f ||
        !rw_activation_dq(r, gemm->inputs[0], &a))
        return ONYX_OK;
    bool tb = attr_int(gemm, "transB", 0) != 0;
    const graph_node *bdq = rw_producer(r, gemm->inputs[1]);
    const tensor *bt = bdq ? rw_constant(r, bdq->inputs[0]) : NULL;
    if (!bt || !rw_eight_bit(bt->dtype) || bt->rank != 2 ||
        !rw_qdq_params(r, bdq, true, 0, 2, tb ? 0 : 1, &b) ||
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

onyx_status rule_qdq_float_gemm(rewriter *r, const graph_node *gemm) {
    /* a Gemm whose result a Q reads is that Q's unit (rule_qdq_gemm) */
    const graph_node *reader = gemm->n_outputs == 1 ? rw_sole_reader(r, gemm->outputs[0]) : NULL;
    if (rw_is_op(reader, "QuantizeLinear")) return ONYX_OK;
    return gemm_unit(r, NULL, NULL, gemm);
}

/* An op that only moves values (its other inputs shapes or axes) commutes with a quantization
 * of the same parameters on both sides. */
static onyx_status moving_unit(rewriter *r, const graph_node *q, const rw_qparams *y,
                               const graph_node *op) {
    rw_qparams x;
    if (op->n_inputs < 1 || op->n_outputs != 1 || !rw_activation_dq(r, op->inputs[0], &x) ||
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

static onyx_status global_average_unit(rewriter *r, const graph_node *q, const rw_qparams *y,
                                       const graph_node *pool) {
    rw_qparams x;
    if (pool->n_inputs != 1 || pool->n_outputs != 1 || !rw_activation_dq(r, pool->inputs[0], &x) ||
        x.z->dtype != y->z->dtype)
        return ONYX_OK;
    int ins[5] = {x.x, x.scale, x.zero, y->scale, y->zero};
    return place_unit(r, q, pool, "com.microsoft", "QLinearGlobalAveragePool", 1, ins, 5, NULL, 0);
}

/* Concat of 8-bit tensors of y's type: of y's scale and zero point all, the values move only
 * (Concat on the 8-bit tensors); else each is requantized to y's (com.microsoft QLinearConcat,
 * onnxruntime's). */
static onyx_status concat_unit(rewriter *r, const graph_node *q, const rw_qparams *y,
                               const graph_node *cat) {
    enum { MAX_PARTS = 32 };
    if (cat->n_inputs < 1 || cat->n_inputs > MAX_PARTS || cat->n_outputs != 1) return ONYX_OK;
    int ins[2 + 3 * MAX_PARTS], moved[MAX_PARTS];
    bool same = true;
    ins[0] = y->scale;
    ins[1] = y->zero;
    for (int i = 0; i < cat->n_inputs; i++) {
        rw_qparams x;
        if (!rw_activation_dq(r, cat->inputs[i], &x) || x.z->dtype != y->z->dtype) return ONYX_OK;
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
static onyx_status average_unit(rewriter *r, const graph_node *q, const rw_qparams *y,
                                const graph_node *pool) {
    rw_qparams x;
    if (pool->n_inputs != 1 || pool->n_outputs != 1 || !rw_activation_dq(r, pool->inputs[0], &x) ||
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
static onyx_status softmax_unit(rewriter *r, const graph_node *q, const rw_qparams *y,
                                const graph_node *sm) {
    rw_qparams x;
    if (sm->n_inputs != 1 || sm->n_outputs != 1 || !rw_activation_dq(r, sm->inputs[0], &x) ||
        x.z->dtype != y->z->dtype || sm->n_attrs > 1)
        return ONYX_OK;
    graph_attr attrs[2] = {{.name = "opset", .type = ATTR_INT, .i = sm->version}};
    int n_attrs = 1;
    if (sm->n_attrs) attrs[n_attrs++] = sm->attrs[0]; /* axis */
    int ins[5] = {x.x, x.scale, x.zero, y->scale, y->zero};
    return place_unit(r, q, sm, "com.microsoft", "QLinearSoftmax", 1, ins, 5, attrs, n_attrs);
}

/* The unit ending at Q node q whose float op is `op_type`: q's parameters and that op, when
 * nothing else reads the op's result. */
static const graph_node *unit_op(const rewriter *r, const graph_node *q, const char *op_type,
                                 rw_qparams *y) {
    if (!rw_qdq_params(r, q, false, 1, 0, 0, y)) return NULL;
    const graph_node *op = rw_producer(r, y->x);
    if (!op || r->uses[y->x] != 1) return NULL; /* the float result is read elsewhere too */
    return rw_is_op(op, op_type) ? op : NULL;
}

onyx_status rule_qdq_conv(rewriter *r, const graph_node *q) {
    rw_qparams y;
    const graph_node *op = unit_op(r, q, "Conv", &y);
    return op ? conv_unit(r, q, &y, op) : ONYX_OK;
}

onyx_status rule_qdq_matmul(rewriter *r, const graph_node *q) {
    rw_qparams y;
    const graph_node *op = unit_op(r, q, "MatMul", &y);
    return op ? matmul_unit(r, q, &y, op) : ONYX_OK;
}

onyx_status rule_qdq_gemm(rewriter *r, const graph_node *q) {
    rw_qparams y;
    const graph_node *op = unit_op(r, q, "Gemm", &y);
    return op ? gemm_unit(r, q, &y, op) : ONYX_OK;
}

onyx_status rule_qdq_add(rewriter *r, const graph_node *q) {
    rw_qparams y;
    const graph_node *op = unit_op(r, q, "Add", &y);
    return op ? binary_unit(r, q, &y, op, "QLinearAdd") : ONYX_OK;
}

onyx_status rule_qdq_mul(rewriter *r, const graph_node *q) {
    rw_qparams y;
    const graph_node *op = unit_op(r, q, "Mul", &y);
    return op ? binary_unit(r, q, &y, op, "QLinearMul") : ONYX_OK;
}

onyx_status rule_qdq_sigmoid(rewriter *r, const graph_node *q) {
    rw_qparams y;
    const graph_node *op = unit_op(r, q, "Sigmoid", &y);
    return op ? unary_unit(r, q, &y, op, "QLinearSigmoid") : ONYX_OK;
}

onyx_status rule_qdq_max_pool(rewriter *r, const graph_node *q) {
    rw_qparams y;
    const graph_node *op = unit_op(r, q, "MaxPool", &y);
    return op ? maxpool_unit(r, q, &y, op) : ONYX_OK;
}

onyx_status rule_qdq_global_average_pool(rewriter *r, const graph_node *q) {
    rw_qparams y;
    const graph_node *op = unit_op(r, q, "GlobalAveragePool", &y);
    return op ? global_average_unit(r, q, &y, op) : ONYX_OK;
}

onyx_status rule_qdq_concat(rewriter *r, const graph_node *q) {
    rw_qparams y;
    const graph_node *op = unit_op(r, q, "Concat", &y);
    return op ? concat_unit(r, q, &y, op) : ONYX_OK;
}

onyx_status rule_qdq_average_pool(rewriter *r, const graph_node *q) {
    rw_qparams y;
    const graph_node *op = unit_op(r, q, "AveragePool", &y);
    return op ? average_unit(r, q, &y, op) : ONYX_OK;
}

onyx_status rule_qdq_softmax(rewriter *r, const graph_node *q) {
    rw_qparams y;
    const graph_node *op = unit_op(r, q, "Softmax", &y);
    return op ? softmax_unit(r, q, &y, op) : ONYX_OK;
}

onyx_status rule_qdq_move(rewriter *r, const graph_node *q) {
    /* Resize interpolates, but of an affine map: with y's parameters, resizing the 8-bit x (in
     * double, rounded half to even) is the unit within a rounding, as onnxruntime drops its DQ
     * and Q */
    static const char *const moves[] = {"Transpose", "Reshape", "Flatten", "Squeeze",
                                        "Unsqueeze", "Gather",  "Resize"};
    rw_qparams y;
    for (size_t k = 0; k < sizeof moves / sizeof *moves; k++) {
        const graph_node *op = unit_op(r, q, moves[k], &y);
        if (op) return moving_unit(r, q, &y, op);
    }
    return ONYX_OK;
}

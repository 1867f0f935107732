/* Dynamically quantized products in one step. onnxruntime's
 * quantize_dynamic writes each MatMul with constant weights W as
 *   DynamicQuantizeLinear(x) -> (q, s, z)
 *   Cast(MatMulInteger(q, W, z, wz), float) * Mul(s, ws) [+ bias]
 * which runs as three passes over the product (the int32 sums, their float copy, the scaled
 * copy). One com.microsoft MatMulIntegerToFloat(q, W, s, ws, z, wz [, bias]) does it in one pass
 * over the sums, with the same roundings: float(acc) * (s * ws[j]) + bias[j], where the products
 * and sums commute exactly (kernels_cpu/contrib_quant/matmul_integer_to_float.c). W, wz, ws and
 * the bias must be constants whose shapes MatMulIntegerToFloat takes (wz and ws one value or
 * one per column, the bias one per column). The DynamicQuantizeLinear stays where its outputs
 * feed several products (q, k and v); where this product is all that reads them, it joins too:
 * one com.microsoft DynamicQuantizeMatMul(x, W, ws, wz [, bias]) quantizes x as it did and
 * multiplies (one step fewer: 37 of BERT-base's 49 quantizations, a tenth of a 12-token run's
 * steps). */
#include <string.h>

#include "core/rules/rules.h"

/* Whether constant t holds one value, or one per column of a [K, N] B ([N] or [1, N]), as
 * MatMulIntegerToFloat reads b's scale and zero point. */
static bool per_column_or_one(const tensor *t, int64_t n) {
    return (t->numel == 1 && t->rank <= 1) || (t->rank == 1 && t->dims[0] == n) ||
           (t->rank == 2 && t->dims[0] == 1 && t->dims[1] == n);
}

onyx_status rule_dynamic_quant_matmul(rewriter *r, const graph_node *mmi) {
    if (mmi->n_inputs < 2 || mmi->n_outputs != 1) return ONYX_OK;
    int a = mmi->inputs[0], b = mmi->inputs[1];
    int za = mmi->n_inputs > 2 ? mmi->inputs[2] : -1, zb = mmi->n_inputs > 3 ? mmi->inputs[3] : -1;
    const graph_node *dql = rw_producer(r, a);
    if (!rw_is_op(dql, "DynamicQuantizeLinear") || dql->n_outputs < 2 || dql->outputs[0] != a ||
        dql->outputs[1] < 0 || (za >= 0 && (dql->n_outputs < 3 || za != dql->outputs[2])))
        return ONYX_OK;
    int a_scale = dql->outputs[1];
    const tensor *w = rw_constant(r, b);
    if (!w || w->rank != 2 || (w->dtype != ONYX_INT8 && w->dtype != ONYX_UINT8)) return ONYX_OK;
    int64_t n = w->dims[1];
    const tensor *wz = zb >= 0 ? rw_constant(r, zb) : NULL;
    if (zb >= 0 && (!wz || wz->dtype != w->dtype || !per_column_or_one(wz, n))) return ONYX_OK;
    const graph_node *m[6] = {mmi};
    int nm = 1;
    const graph_node *cast = rw_sole_reader(r, mmi->outputs[0]);
    if (!rw_is_op(cast, "Cast") || cast->n_outputs != 1 || attr_int(cast, "to", 0) != ONYX_FLOAT)
        return ONYX_OK;
    m[nm++] = cast;
    const graph_node *mul = rw_sole_reader(r, cast->outputs[0]);
    int s = rw_other_input(mul, cast->outputs[0]);
    const graph_node *scales = rw_producer(r, s);
    int b_scale = rw_other_input(scales, a_scale);
    if (!rw_is_op(mul, "Mul") || mul->n_outputs != 1 || !rw_is_op(scales, "Mul") || b_scale < 0)
        return ONYX_OK;
    const tensor *ws = rw_constant(r, b_scale);
    if (!ws || ws->dtype != ONYX_FLOAT || !per_column_or_one(ws, n)) return ONYX_OK;
    m[nm++] = mul;
    bool scales_join = rw_sole_reader(r, s) == mul;
    if (scales_join) m[nm++] = scales;
    const graph_node *last = mul, *add = rw_sole_reader(r, mul->outputs[0]);
    int bias = rw_is_op(add, "Add") && add->n_outputs == 1 ? rw_other_input(add, mul->outputs[0]) : -1;
    const tensor *bt = rw_constant(r, bias);
    if (bt && bt->dtype == ONYX_FLOAT && bt->rank == 1 && bt->dims[0] == n) {
        m[nm++] = add;
        last = add;
    } else {
        bias = -1;
    }
    if (scales_join && za >= 0 && rw_sole_reader(r, a) == mmi && rw_sole_reader(r, za) == mmi &&
        rw_sole_reader(r, a_scale) == scales) {
        m[nm++] = dql;
        int dq_ins[5] = {dql->inputs[0], b, b_scale, zb, bias}, n_dq = 5;
        while (dq_ins[n_dq - 1] < 0) n_dq--;
        return rw_place_at(r, last, false, last->name, m, nm, "com.microsoft",
                           "DynamicQuantizeMatMul", 1, dq_ins, n_dq, last->outputs[0], NULL, 0);
    }
    int ins[7] = {a, b, a_scale, b_scale, za, zb, bias}, n_in = 7;
    while (ins[n_in - 1] < 0) n_in--;
    return rw_place_at(r, last, false, last->name, m, nm, "com.microsoft", "MatMulIntegerToFloat",
                       1, ins, n_in, last->outputs[0], NULL, 0);
}

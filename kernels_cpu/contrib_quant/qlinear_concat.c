/* CPU kernels of com.microsoft QLinearConcat and QLinearWhere: element selection, each input
 * requantized to the output's parameters through a 256-entry table (copied when they agree). A
 * QLinearConcat along channels of tensors the fusion pass keeps opaque (channels last,
 * core/fuse.h; its state then non-NULL, cpu_opaque_prepare) joins them pixel by pixel. */
#include <string.h>

#include "geometry/axes.h"
#include "kernels_cpu/common/broadcast.h"
#include "kernels_cpu/common/move.h"
#include "kernels_cpu/common/opaque.h"
#include "kernels_cpu/contrib_quant/cq_kernel.h"

/* The table taking input parameters px to py, or false when they are equal (a plain copy). */
static bool requant_table(uint8_t lut[256], onyx_dtype t, cq_param px, cq_param py) {
    if (px.scale == py.scale && px.zp == py.zp) return false;
    cq_lut_build(lut, t, px, py, NULL, NULL);
    return true;
}

onyx_status cpu_qlinearconcat_run(const kernel_call *c) {
    if (c->n_in < 5 || (c->n_in - 2) % 3 != 0)
        return onyx_error(ONYX_ERR_SHAPE, "%d inputs, expected Y_scale, Y_zero_point and "
                          "(tensor, scale, zero point) triples", c->n_in);
    const tensor *yz = kernel_input(c, 1);
    if (!yz) return onyx_error(ONYX_ERR_SHAPE, "input 1 (Y_zero_point) is required");
    onyx_dtype t = yz->dtype;
    if (t != ONYX_INT8 && t != ONYX_UINT8)
        return onyx_error(ONYX_ERR_SHAPE, "input 1 (Y_zero_point) has type %s, expected int8 or "
                          "uint8", onyx_dtype_name(t));
    cq_param py;
    TRY(cq_param_get(c, 0, 1, t, "Y", &py));
    tensor *y = kernel_output(c, 0);
    int rank = y->rank;
    int ax;
    geom_msg m;
    GEOM_TRY(m, geom_axis(attr_int(c->node, "axis", 0), rank, "axis", &ax, &m));
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < ax; k++) outer *= y->dims[k];
    for (int k = ax + 1; k < rank; k++) inner *= y->dims[k];
    if (c->state) { /* channels last: [N, spatial..., C], each pixel a row */
        if (ax != 1 || rank < 3)
            return onyx_error(ONYX_ERR_RUNTIME, "a channels-last QLinearConcat joins channels "
                              "(axis 1) of tensors of rank 3+");
        outer *= inner;
        inner = 1;
    }
    int64_t out_pitch = y->dims[ax] * inner, off = 0;
    for (int i = 2; i < c->n_in; i += 3) {
        TRY(cq_need_q8(c, i, t, "input tensor"));
        const tensor *x = kernel_input(c, i);
        if (x->rank != rank)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has rank %d, expected %d", i, x->rank,
                              rank);
        for (int k = 0; k < rank; k++)
            if (k != ax && x->dims[k] != y->dims[k])
                return onyx_error(ONYX_ERR_SHAPE, "input %d has size %lld on axis %d, expected "
                                  "%lld", i, (long long)x->dims[k], k, (long long)y->dims[k]);
        if (off + x->dims[ax] * inner > out_pitch)
            return onyx_error(ONYX_ERR_SHAPE, "inputs are longer than the output along axis %d",
                              ax);
        cq_param px;
        TRY(cq_param_get(c, i + 1, i + 2, t, "input", &px));
        uint8_t lut[256];
        bool map = requant_table(lut, t, px, py);
        int64_t pitch = x->dims[ax] * inner;
        const uint8_t *src = x->data;
        uint8_t *dst = (uint8_t *)y->data + off;
        if (pitch > 0 && map) {
            for (int64_t o = 0; o < outer; o++)
                cq_lut_apply(lut, src + o * pitch, dst + o * out_pitch, pitch);
        } else if (pitch > 0) {
            int64_t dims[2] = {outer, pitch}, ds[2] = {out_pitch, 1}, ss[2] = {pitch, 1};
            cpu_copy_strided(dst, src, 1, 2, dims, ds, ss);
        }
        off += pitch;
    }
    if (off != out_pitch)
        return onyx_error(ONYX_ERR_SHAPE, "inputs fill %lld of the output's %lld elements per "
                          "row", (long long)off, (long long)out_pitch);
    return ONYX_OK;
}

/* ---- QLinearWhere */

typedef struct qwhere_ctx {
    uint8_t lx[256], ly[256];
} qwhere_ctx;

static void where_loop(void *ctx, int64_t n, char *const *p, const int64_t *s) {
    const qwhere_ctx *q = ctx;
    uint8_t *o = (uint8_t *)p[0];
    const uint8_t *cond = (const uint8_t *)p[1], *x = (const uint8_t *)p[2],
                  *y = (const uint8_t *)p[3];
    for (int64_t i = 0; i < n; i++) o[i] = cond[i * s[1]] ? q->lx[x[i * s[2]]] : q->ly[y[i * s[3]]];
}

onyx_status cpu_qlinearwhere_run(const kernel_call *c) {
    const tensor *cond = kernel_input(c, 0), *zz = kernel_input(c, 8);
    if (!cond || cond->dtype != ONYX_BOOL)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 (condition) must be a bool tensor");
    if (!zz) return onyx_error(ONYX_ERR_SHAPE, "input 8 (z_zero_point) is required");
    onyx_dtype t = zz->dtype;
    TRY(cq_need_q8(c, 1, t, "X"));
    TRY(cq_need_q8(c, 4, t, "Y"));
    cq_param px, py, pz;
    TRY(cq_param_get(c, 2, 3, t, "X", &px));
    TRY(cq_param_get(c, 5, 6, t, "Y", &py));
    TRY(cq_param_get(c, 7, 8, t, "Z", &pz));
    qwhere_ctx q;
    if (!requant_table(q.lx, t, px, pz))
        for (int b = 0; b < 256; b++) q.lx[b] = (uint8_t)b;
    if (!requant_table(q.ly, t, py, pz))
        for (int b = 0; b < 256; b++) q.ly[b] = (uint8_t)b;
    tensor *out = kernel_output(c, 0);
    const tensor *ins[3] = {cond, kernel_input(c, 1), kernel_input(c, 4)};
    cpu_bcast_iter it;
    TRY(cpu_bcast_init_tensors(&it, out, 3, ins));
    const void *ptr[3] = {ins[0]->data, ins[1]->data, ins[2]->data};
    cpu_bcast_run(&it, out->data, ptr, where_loop, &q, false);
    return ONYX_OK;
}

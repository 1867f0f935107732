/* CPU kernel of com.microsoft QGemm.
 *
 * The exact int32 GEMM plus C, then as onnxruntime's MLAS output processors, so that the roundings
 * match: float(acc) * (alpha * a_scale * b_scale[j] / y_scale), rounded half to even and
 * saturated with y_zero_point, or that float itself without y_zero_point. With A's shape known at
 * prepare, A not transposed and B a constant, the product runs on the shared int8 matmul
 * primitive with B packed once (kernels_cpu/common/i8_matmul.h); else on cq_gemm_s32 with B laid
 * out once. */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/common/i8_matmul.h"
#include "kernels_cpu/contrib_quant/cq_kernel.h"

typedef struct out_job {
    const int32_t *acc;
    const float *scales; /* one per column, or one */
    int64_t n_scales;
    int64_t n;
    void *y;
    onyx_dtype yt;
    int32_t zp, lo, hi;
} out_job;

static void out_rows(void *ctx, int64_t b, int64_t e) {
    const out_job *j = ctx;
    for (int64_t i = b; i < e; i++) {
        const int32_t *acc = j->acc + i * j->n;
        for (int64_t c = 0; c < j->n; c++) {
            float v = (float)acc[c] * j->scales[j->n_scales > 1 ? c : 0];
            int64_t o = i * j->n + c;
            if (j->yt == ONYX_FLOAT) ((float *)j->y)[o] = v;
            else ((uint8_t *)j->y)[o] = (uint8_t)q8_saturate(v, j->zp, j->lo, j->hi);
        }
    }
}

/* C's strides along rows and columns, broadcast as onnxruntime's Gemm reads it ((), (N), (1, N),
 * (M, 1), (M, N)). */
static onyx_status bias_strides(const tensor *cb, int64_t m, int64_t n, int64_t *rs, int64_t *cs) {
    if (cb->numel == 1) *rs = 0, *cs = 0;
    else if (cb->rank == 1 && cb->dims[0] == n) *rs = 0, *cs = 1;
    else if (cb->rank == 2 && cb->dims[0] == 1 && cb->dims[1] == n) *rs = 0, *cs = 1;
    else if (cb->rank == 2 && cb->dims[0] == m && cb->dims[1] == 1) *rs = 1, *cs = 0;
    else if (cb->rank == 2 && cb->dims[0] == m && cb->dims[1] == n) *rs = n, *cs = 1;
    else {
        char buf[160];
        return onyx_error(ONYX_ERR_SHAPE, "input 6 (C) has shape %s, which does not broadcast "
                          "to [%lld, %lld]", shape_str(cb->rank, cb->dims, buf, sizeof buf),
                          (long long)m, (long long)n);
    }
    return ONYX_OK;
}

/* Adds C (by its strides) to the int32 sums, wrapping. */
static void add_bias(const int32_t *cv, int64_t rs, int64_t cs, int64_t m, int64_t n,
                     int32_t *acc) {
    for (int64_t i = 0; i < m; i++)
        for (int64_t jj = 0; jj < n; jj++)
            acc[i * n + jj] = (int32_t)((uint32_t)acc[i * n + jj] + (uint32_t)cv[i * rs + jj * cs]);
}

/* A constant B: packed for the int8 matmul primitive (mm, for A of m rows), or laid out once
 * for cq_gemm_s32 (b), so that runs skip its transposition. */
typedef struct qgemm_state {
    cpu_i8mm *mm;
    int64_t m;
    onyx_dtype a_dtype;
    const void *b_data;
    int8_t *b;
    int64_t k, n;
} qgemm_state;

/* A run context's part: the primitive's memory objects. */
typedef struct qgemm_fork {
    const qgemm_state *s;
    cpu_i8mm_mem *f;
} qgemm_fork;

onyx_status cpu_qgemm_prepare(const kernel_prep *p, void **state) {
    *state = NULL;
    const tensor *b = p->n_in > 3 ? p->in_value[3] : NULL;
    qgemm_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("QGemm weights");
    *state = s;
    if (!b || b->rank != 2 || (b->dtype != ONYX_INT8 && b->dtype != ONYX_UINT8)) return ONYX_OK;
    bool ta = attr_int(p->node, "transA", 0) != 0, tb = attr_int(p->node, "transB", 0) != 0;
    const type_info *a = p->in_type[0];
    s->k = b->dims[tb ? 1 : 0];
    s->n = b->dims[tb ? 0 : 1];
    s->b_data = b->data;
    if (!ta && a && a->kind == ONYX_VALUE_TENSOR && type_is_static(a) && a->rank == 2 &&
        a->dims[1] == s->k && (a->dtype == ONYX_INT8 || a->dtype == ONYX_UINT8)) {
        s->m = a->dims[0];
        s->a_dtype = a->dtype;
        TRY(cpu_i8mm_prepare(p, s->m, a->dtype == ONYX_INT8, b, tb, &s->mm));
        if (s->mm) return ONYX_OK;
    }
    s->b = malloc((size_t)(s->k * s->n) + 1);
    if (!s->b) return onyx_oom("QGemm weights");
    cq_gemm_layout_b(b->dtype, tb, b->data, s->k, s->n, s->b);
    return ONYX_OK;
}

void cpu_qgemm_release(void *state) {
    qgemm_state *s = state;
    if (!s) return;
    cpu_i8mm_release(s->mm);
    free(s->b);
    free(s);
}

onyx_status cpu_qgemm_fork(const void *state, void **out) {
    qgemm_fork *f = calloc(1, sizeof *f);
    if (!f) return onyx_oom("QGemm working state");
    f->s = state;
    if (f->s && f->s->mm) {
        onyx_status st = cpu_i8mm_fork(f->s->mm, &f->f);
        if (st != ONYX_OK) {
            free(f);
            return st;
        }
    }
    *out = f;
    return ONYX_OK;
}

void cpu_qgemm_unfork(void *fork) {
    qgemm_fork *f = fork;
    if (!f) return;
    cpu_i8mm_unfork(f->f);
    free(f);
}

onyx_status cpu_qgemm_run(const kernel_call *c) {
    TRY(cq_need_q8(c, 0, ONYX_UNDEFINED, "A"));
    TRY(cq_need_q8(c, 3, ONYX_UNDEFINED, "B"));
    const tensor *a = kernel_input(c, 0), *b = kernel_input(c, 3);
    const tensor *bs = kernel_input(c, 4), *bz = kernel_input(c, 5), *cb = kernel_input(c, 6);
    const tensor *ys = kernel_input(c, 7), *yz = kernel_input(c, 8);
    tensor *y = kernel_output(c, 0);
    if (a->rank != 2 || b->rank != 2)
        return onyx_error(ONYX_ERR_SHAPE, "A and B have ranks %d and %d, expected 2", a->rank,
                          b->rank);
    cq_param pa;
    TRY(cq_param_get(c, 1, 2, a->dtype, "A", &pa));
    bool ta = attr_int(c->node, "transA", 0) != 0, tb = attr_int(c->node, "transB", 0) != 0;
    int64_t m = a->dims[ta ? 1 : 0], k = a->dims[ta ? 0 : 1], n = b->dims[tb ? 0 : 1];
    if (b->dims[tb ? 1 : 0] != k)
        return onyx_error(ONYX_ERR_SHAPE, "inner dims differ: %lld (A) and %lld (B)",
                          (long long)k, (long long)b->dims[tb ? 1 : 0]);
    if (!bs || bs->dtype != ONYX_FLOAT || !bz || bz->dtype != b->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "b_scale (float) and b_zero_point (B's type) are "
                          "required");
    if (bs->rank > 1 || bz->rank > 1 || bs->numel != bz->numel ||
        (bs->numel != 1 && bs->numel != n))
        return onyx_error(ONYX_ERR_SHAPE, "b_scale and b_zero_point have %lld and %lld values, "
                          "expected one each or N = %lld each (per column)",
                          (long long)bs->numel, (long long)bz->numel, (long long)n);
    if (cb && cb->dtype != ONYX_INT32)
        return onyx_error(ONYX_ERR_SHAPE, "input 6 (C) has type %s, expected int32",
                          onyx_dtype_name(cb->dtype));
    if (ys && (ys->dtype != ONYX_FLOAT || ys->numel != 1))
        return onyx_error(ONYX_ERR_SHAPE, "input 7 (y_scale) must be a float scalar");
    onyx_dtype yt = yz ? yz->dtype : ONYX_FLOAT;
    if (yz && ((yt != ONYX_INT8 && yt != ONYX_UINT8) || yz->numel != 1 || !ys))
        return onyx_error(ONYX_ERR_SHAPE, "input 8 (y_zero_point) must be an 8-bit scalar, with "
                          "y_scale");
    if (y->dtype != yt)
        return onyx_error(ONYX_ERR_SHAPE, "output has type %s, expected %s",
                          onyx_dtype_name(y->dtype), onyx_dtype_name(yt));
    if (m == 0 || n == 0) return ONYX_OK;

    int64_t nb = bs->numel;
    const qgemm_fork *f = c->state;
    const qgemm_state *st = f ? f->s : NULL;
    /* the packed product where this call's operands are the ones it was made for */
    bool fast = st && f->f && !ta && st->m == m && st->k == k && st->n == n &&
                st->a_dtype == a->dtype && st->b_data == b->data;
    size_t acc_bytes = ((size_t)(m * n) * 4 + 63) & ~(size_t)63;
    size_t extra = ((size_t)nb * (sizeof(float) + sizeof(int32_t)) + 63) & ~(size_t)63;
    size_t work_bytes = fast ? st->mm->scratch_bytes : cq_gemm_work_bytes(m, n, k);
    void *buf;
    TRY(kernel_scratch(c, acc_bytes + extra + work_bytes, &buf));
    int32_t *acc = buf;
    float *scales = (float *)((char *)buf + acc_bytes);
    int32_t *zb = (int32_t *)(scales + nb);
    void *work = (char *)buf + acc_bytes + extra;
    for (int64_t i = 0; i < nb; i++) zb[i] = cq_get(b->dtype, bz->data, i);
    int64_t c_rs = 0, c_cs = 0;
    if (cb) TRY(bias_strides(cb, m, n, &c_rs, &c_cs));
    /* the multipliers in onnxruntime's order: alpha * a_scale * b_scale[j], then / y_scale */
    float alpha = attr_float(c->node, "alpha", 1.0f);
    for (int64_t i = 0; i < nb; i++) {
        scales[i] = alpha * pa.scale * ((const float *)bs->data)[i];
        if (ys) scales[i] /= *(const float *)ys->data;
    }
    if (fast) { /* C, the scaling and the requantization in the product's own pass */
        int32_t za = pa.zp;
        cpu_i8mm_call x = {.a = a->data, .za = &za, .zb = zb, .zb_cols = nb > 1,
                           .c_add = cb ? cb->data : NULL, .c_rs = c_rs, .c_cs = c_cs,
                           .y = yz ? (void *)acc : y->data, .mult = scales, .mult_cols = nb > 1,
                           .q = yz ? y->data : NULL, .q_signed = yt == ONYX_INT8,
                           .qz = yz ? cq_get(yt, yz->data, 0) : 0, .scratch = work};
        return cpu_i8mm_run(f->f, &x);
    }
    cq_gemm g = {m, n, k, a->dtype, b->dtype, a->data, b->data, ta, tb, pa.zp, zb, nb,
                 st && st->b && st->k == k && st->n == n ? st->b : NULL};
    cq_gemm_s32(&g, work, acc);
    if (cb) add_bias(cb->data, c_rs, c_cs, m, n, acc);
    out_job oj = {acc, scales, nb, n, y->data, yt, 0, 0, 0};
    if (yz) {
        oj.zp = cq_get(yt, yz->data, 0);
        oj.lo = cq_lo(yt);
        oj.hi = cq_hi(yt);
    }
    parallel_for(m, 65536 / (n + 1) + 1, out_rows, &oj);
    return ONYX_OK;
}

/* CPU kernels of com.microsoft MatMulIntegerToFloat and DynamicQuantizeMatMul.
 *
 * The exact int32 product, then float(acc) * (a_scale * b_scale[j]) + bias[j] in that order, as
 * onnxruntime's scale-bias output processor rounds. With B a constant matrix the product runs on
 * oneDNN's int8 matmul primitive (kernels_cpu/common/i8_matmul.h: B packed once, A's batch dims
 * folded into rows, the scaling in the same pass as the zero points); otherwise per batch matrix
 * through cq_gemm_s32.
 * DynamicQuantizeMatMul first quantizes its float A to uint8 as onnxruntime does: the range
 * [min(A, 0), max(A, 0)] over 255 steps, the zero point and x / scale rounded half to even. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/dyn_q8.h"
#include "kernels_cpu/common/i8_matmul.h"
#include "kernels_cpu/common/matmul_shape.h"
#include "kernels_cpu/contrib_quant/cq_kernel.h"

/* Where b's scale or zero point for column j of a batch matrix sits: one value, one per column,
 * or one per column of each of B's matrices ([..., 1, N]). */
typedef enum bp_kind { BP_ONE, BP_COLUMN, BP_MATRIX } bp_kind;

static onyx_status bp_kind_of(const tensor *p, const tensor *b, int i, const char *name,
                              bp_kind *kind) {
    int64_t n = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    if (p->numel == 1 && p->rank <= 1) *kind = BP_ONE;
    else if (p->rank == 1 && p->dims[0] == n) *kind = BP_COLUMN;
    else {
        bool mats = p->rank == b->rank && p->rank >= 2 && p->dims[p->rank - 2] == 1;
        for (int d = 0; mats && d < p->rank; d++)
            if (d != p->rank - 2 && p->dims[d] != b->dims[d]) mats = false;
        if (!mats) {
            char s1[160], s2[160];
            return onyx_error(ONYX_ERR_UNSUPPORTED, "input %d (%s) has shape %s; supported with "
                              "B %s: one value, N values or [..., 1, N] matching B", i, name,
                              shape_str(p->rank, p->dims, s1, sizeof s1),
                              shape_str(b->rank, b->dims, s2, sizeof s2));
        }
        *kind = BP_MATRIX;
    }
    return ONYX_OK;
}

static inline int64_t bp_index(bp_kind k, int64_t matrix, int64_t n, int64_t j) {
    return k == BP_ONE ? 0 : k == BP_COLUMN ? j : matrix * n + j;
}

/* ---- the fast path: A's rows times the constant B (i8_matmul.h) */

onyx_status cpu_matmulintegertofloat_prepare(const kernel_prep *p, void **state) {
    return cpu_i8mm_rows_prepare(p, 0, 1, false, state);
}

/* DynamicQuantizeMatMul's float A becomes uint8 A per run. */
onyx_status cpu_dynamicquantizematmul_prepare(const kernel_prep *p, void **state) {
    return cpu_i8mm_rows_prepare(p, 0, 1, true, state);
}

/* The fast path's scratch: the product's, then zb and mult (n values each). */
static size_t fast_scratch(const cpu_i8mm_mem *f) { return f->p->scratch_bytes + (size_t)f->p->n * 8; }

/* ---- the generic path */

typedef struct out_job {
    const int32_t *acc;
    const float *mult, *bias;
    float *y;
    int64_t n;
} out_job;

static void out_rows(void *ctx, int64_t b, int64_t e) {
    const out_job *j = ctx;
    for (int64_t i = b; i < e; i++)
        for (int64_t c = 0; c < j->n; c++) {
            float v = (float)j->acc[i * j->n + c] * j->mult[c];
            j->y[i * j->n + c] = j->bias ? v + j->bias[c] : v;
        }
}

/* The shared body: a (already 8-bit, type at) with scale a_scale and zero point za. */
static onyx_status mm_to_float(const kernel_call *c, const tensor *a, const void *adata,
                               onyx_dtype at, float a_scale, int32_t za, int bi, int bsi,
                               int bzi, int biasi, const cpu_i8mm_mem *fast, void *scratch) {
    const tensor *b = kernel_input(c, bi), *bs = kernel_input(c, bsi),
                 *bz = kernel_input(c, bzi), *bias = kernel_input(c, biasi);
    tensor *y = kernel_output(c, 0);
    cpu_mm_shape sh;
    TRY(cpu_mm_shape_init(c->params, a, b, y, &sh));
    const int64_t m = sh.m, n = sh.n, k = sh.k;
    bp_kind sk, zk = BP_ONE;
    if (!bs || bs->dtype != ONYX_FLOAT)
        return onyx_error(ONYX_ERR_SHAPE, "input %d (b_scale) must be a float tensor", bsi);
    TRY(bp_kind_of(bs, b, bsi, "b_scale", &sk));
    if (bz) {
        if (bz->dtype != b->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "input %d (b_zero_point) has type %s, expected %s",
                              bzi, onyx_dtype_name(bz->dtype), onyx_dtype_name(b->dtype));
        TRY(bp_kind_of(bz, b, bzi, "b_zero_point", &zk));
    }
    if (bias && (bias->dtype != ONYX_FLOAT || bias->rank != 1 || bias->dims[0] != n))
        return onyx_error(ONYX_ERR_SHAPE, "input %d (bias) must be a float vector of N = %lld "
                          "values", biasi, (long long)n);
    if (y->numel == 0) return ONYX_OK;
    if (fast) { /* B has one matrix: every parameter kind indexes column j alike */
        int32_t *zb = (int32_t *)((char *)scratch + fast->p->scratch_bytes);
        float *mult = (float *)(zb + n);
        for (int64_t jj = 0; jj < n; jj++) {
            zb[jj] = bz ? cq_get(b->dtype, bz->data, bp_index(zk, 0, n, jj)) : 0;
            mult[jj] = a_scale * ((const float *)bs->data)[bp_index(sk, 0, n, jj)];
        }
        cpu_i8mm_call x = {.a = adata, .za = &za, .zb = zb, .zb_cols = true, .y = y->data,
                           .mult = mult, .mult_cols = true, .bias = bias ? bias->data : NULL,
                           .scratch = scratch};
        return cpu_i8mm_run(fast, &x);
    }
    int32_t *acc = scratch;
    int32_t *zb = acc + m * n;
    float *mult = (float *)(zb + n);
    void *work = mult + n;
    for (int64_t t = 0; t < sh.nbatch; t++) {
        int64_t ao, bo;
        cpu_mm_batch_offsets(&sh, t, &ao, &bo);
        int64_t mat = k > 0 && n > 0 ? bo / (k * n) : 0;
        for (int64_t jj = 0; jj < n; jj++) {
            zb[jj] = bz ? cq_get(b->dtype, bz->data, bp_index(zk, mat, n, jj)) : 0;
            mult[jj] = a_scale * ((const float *)bs->data)[bp_index(sk, mat, n, jj)];
        }
        cq_gemm g = {m, n, k, at, b->dtype, (const uint8_t *)adata + ao,
                     (const uint8_t *)b->data + bo, false, false, za, zb, n, NULL};
        cq_gemm_s32(&g, work, acc);
        out_job oj = {acc, mult, bias ? bias->data : NULL, (float *)y->data + t * m * n, n};
        parallel_for(m, 65536 / (n + 1) + 1, out_rows, &oj);
    }
    return ONYX_OK;
}

static size_t mm_scratch(const tensor *a, const tensor *b) {
    int64_t m = a->rank >= 2 ? a->dims[a->rank - 2] : 1, k = a->dims[a->rank - 1];
    int64_t n = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    return (size_t)(m * n + 2 * n) * 4 + cq_gemm_work_bytes(m, n, k) + 64;
}

onyx_status cpu_matmulintegertofloat_run(const kernel_call *c) {
    TRY(cq_need_q8(c, 0, ONYX_UNDEFINED, "A"));
    TRY(cq_need_q8(c, 1, ONYX_UNDEFINED, "B"));
    const tensor *a = kernel_input(c, 0), *b = kernel_input(c, 1);
    if (a->rank < 1 || b->rank < 1)
        return onyx_error(ONYX_ERR_SHAPE, "A and B must have rank >= 1");
    cq_param pa;
    TRY(cq_param_get(c, 2, 4, a->dtype, "A", &pa));
    const cpu_i8mm_mem *fast = cpu_i8mm_rows_for(c, a, b);
    void *scratch;
    TRY(kernel_scratch(c, fast ? fast_scratch(fast) : mm_scratch(a, b), &scratch));
    return mm_to_float(c, a, a->data, a->dtype, pa.scale, pa.zp, 1, 3, 5, 6, fast, scratch);
}

typedef struct dq_job {
    const float *x;
    uint8_t *q;
    float scale, zp;
} dq_job;

CPU_CLONES static void dq_range(void *ctx, int64_t b, int64_t e) {
    const dq_job *j = ctx;
    const float *x = j->x;
    uint8_t *q = j->q;
    const float zp = j->zp, lo = -zp, hi = 255.0f - zp, scale = j->scale;
    CPU_SIMD for (int64_t i = b; i < e; i++) {
        float v = x[i] / scale;
        v = v > lo ? v : lo;
        v = v < hi ? v : hi;
        q[i] = (uint8_t)(int32_t)(q8_round(v) + zp);
    }
}

onyx_status cpu_dynamicquantizematmul_run(const kernel_call *c) {
    const tensor *a = kernel_input(c, 0), *b = kernel_input(c, 1);
    if (!a || a->dtype != ONYX_FLOAT)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 (A) must be a float tensor");
    TRY(cq_need_q8(c, 1, ONYX_UNDEFINED, "B"));
    if (a->rank < 1 || b->rank < 1)
        return onyx_error(ONYX_ERR_SHAPE, "A and B must have rank >= 1");
    const cpu_i8mm_mem *fast = cpu_i8mm_rows_for(c, a, b);
    size_t mm = ((fast ? fast_scratch(fast) : mm_scratch(a, b)) + 63) & ~(size_t)63;
    void *scratch;
    TRY(kernel_scratch(c, mm + (size_t)a->numel + 1, &scratch));
    uint8_t *qa = (uint8_t *)scratch + mm;
    const float *x = a->data;
    float lo, hi;
    cpu_dyn_q8_range(x, a->numel, &lo, &hi);
    float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    float z = 0.0f - lo / scale;
    z = z > 0 ? z : 0;
    z = z < 255 ? z : 255;
    z = q8_round(z);
    dq_job dj = {x, qa, scale, z};
    parallel_for(a->numel, 1 << 16, dq_range, &dj);
    return mm_to_float(c, a, qa, ONYX_UINT8, scale, (int32_t)z, 1, 2, 3, 4, fast, scratch);
}

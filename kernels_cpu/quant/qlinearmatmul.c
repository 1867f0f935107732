/* CPU kernel of QLinearMatMul: exact int32 products of (a - a_zero_point) and (b - b_zero_point)
 * (wrapping as 32-bit accumulation may), requantized as onnxruntime does: the multiplier
 * a_scale * b_scale / y_scale rounded to the scales' type step by step, float(acc) times it in
 * float, rounded half to even, saturated (kernels_cpu/common/requant.h). With a constant 2-D b
 * and one a scale the product runs on oneDNN's int8 matmul (b packed once, a's batch dims folded
 * into rows, the requantization in the same pass: kernels_cpu/common/i8_matmul.h); with one
 * zero point per operand, on oneDNN's int8 GEMM; else on a plain loop. float8 operands go
 * through 256-entry decode tables and sums in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/floatconv.h"
#include "core/parallel.h"
#include "kernels_cpu/common/blas.h"
#include "kernels_cpu/common/i8_matmul.h"
#include "kernels_cpu/common/requant.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/matmul_shape.h"

/* Columns per tile of int32 accumulators (on the stack). */
#define TILE 256
/* Multiply-adds below which rows are not worth another thread. */
#define MAC_GRAIN 65536

/* How a scale/zero-point pair is laid out: one value, one per row of a (column of b), or that for
 * each of a's (b's) matrices ([D1, D2, M, 1] / [D1, D2, 1, N]). */
typedef enum qp_kind { QP_ONE, QP_EACH, QP_EACH_MATRIX } qp_kind;

typedef struct qmm_job {
    const tensor *a, *as, *az, *b, *bs, *bz;
    tensor *y;
    cpu_mm_shape sh;
    qp_kind ak, bk;
    onyx_dtype sd;        /* the scales' type: the multiplier is rounded to it step by step */
    double ys, yz;        /* y's scale and zero point (decoded) */
    double lo, hi;        /* y's integer range */
    double lut_a[256], lut_b[256]; /* byte -> value, for the float8 path */
} qmm_job;

static double round_to(onyx_dtype d, double v) {
    switch (d) {
    case ONYX_FLOAT: return (double)(float)v;
    case ONYX_FLOAT16: return fp16_to_float(floatconv_double_to_fp16(v));
    case ONYX_BFLOAT16: return bf16_to_float(floatconv_double_to_bf16(v));
    default: return v;
    }
}

/* byte value of an int8/uint8/float8 element as a number */
static double byte_value(onyx_dtype d, uint8_t v) {
    if (d == ONYX_INT8) return (int8_t)v;
    if (d == ONYX_UINT8) return v;
    return floatconv_decode(d, v);
}

/* which matrix an element offset starts (empty matrices: the first) */
static inline int64_t mat_index(int64_t off, int64_t size) { return size ? off / size : 0; }

static inline int64_t qp_index(qp_kind k, int64_t matrix, int64_t per, int64_t i) {
    return k == QP_ONE ? 0 : k == QP_EACH ? i : matrix * per + i;
}

/* a's multiplier with b's column jj: round(round(as * bs) / ys) in the scales' type */
static inline double multiplier(const qmm_job *j, double as, int64_t mb, int64_t jj) {
    double bs = tensor_get_f64(j->bs, qp_index(j->bk, mb, j->sh.n, jj));
    return round_to(j->sd, round_to(j->sd, as * bs) / j->ys);
}

/* An 8-bit result from its int32 sum (requant.h). */
static inline int32_t requant(const qmm_job *j, int32_t acc, double mult) {
    return q8_saturate((float)acc * (float)mult, (int32_t)j->yz, (int32_t)j->lo, (int32_t)j->hi);
}

/* A float8 path's result from its value in output units. */
static inline double requant_value(const qmm_job *j, double v) {
    v = nearbyint(v) + j->yz;
    return v != v ? j->lo : v < j->lo ? j->lo : v > j->hi ? j->hi : v;
}

/* Rows [b, e) over all batches, integer operands. */
#define DEFINE_QROWS(NA, TA, NB, TB, NY, TY)                                                       \
    static void qrows_##NA##_##NB##_##NY(void *ctx, int64_t b, int64_t e) {                        \
        const qmm_job *j = ctx;                                                                    \
        const int64_t m = j->sh.m, n = j->sh.n, k = j->sh.k;                                       \
        for (int64_t t = b; t < e; t++) {                                                          \
            int64_t i = t % m, ao, bo;                                                             \
            cpu_mm_batch_offsets(&j->sh, t / m, &ao, &bo);                                         \
            int64_t ma = mat_index(ao, m * k), mb = mat_index(bo, k * n);                          \
            const TA *a = (const TA *)j->a->data + ao + i * k;                                     \
            const TB *bm = (const TB *)j->b->data + bo;                                            \
            int64_t ai = qp_index(j->ak, ma, m, i);                                                \
            uint32_t za = (uint32_t)(int32_t)((const TA *)j->az->data)[ai];                        \
            double as = tensor_get_f64(j->as, ai);                                                 \
            const TB *zb = j->bz->data;                                                            \
            uint32_t rs = 0;                                                                       \
            for (int64_t p = 0; p < k; p++) rs += (uint32_t)(int32_t)a[p] - za;                    \
            TY *y = (TY *)j->y->data + t * n;                                                      \
            for (int64_t n0 = 0; n0 < n; n0 += TILE) {                                             \
                int64_t nn = n - n0 < TILE ? n - n0 : TILE;                                        \
                uint32_t acc[TILE];                                                                \
                for (int64_t c = 0; c < nn; c++) acc[c] = 0;                                       \
                for (int64_t p = 0; p < k; p++) {                                                  \
                    /* |a - za| <= 255 fits int16: 16x16->32 products vectorize even on SSE2 */    \
                    int16_t av = (int16_t)((int32_t)a[p] - (int32_t)za);                           \
                    const TB *bp = bm + p * n + n0;                                                \
                    CPU_SIMD for (int64_t c = 0; c < nn; c++)                                      \
                        acc[c] += (uint32_t)((int32_t)av * (int32_t)(int16_t)bp[c]);               \
                }                                                                                  \
                for (int64_t c = 0; c < nn; c++) {                                                 \
                    int64_t jj = n0 + c;                                                           \
                    uint32_t zbj = (uint32_t)(int32_t)zb[qp_index(j->bk, mb, n, jj)];              \
                    int32_t cv = (int32_t)(acc[c] - rs * zbj);                                     \
                    y[jj] = (TY)requant(j, cv, multiplier(j, as, mb, jj));                         \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }
#define DEFINE_QROWS_Y(NA, TA, NB, TB)                                                             \
    DEFINE_QROWS(NA, TA, NB, TB, u8, uint8_t) DEFINE_QROWS(NA, TA, NB, TB, s8, int8_t)
DEFINE_QROWS_Y(u8, uint8_t, u8, uint8_t)
DEFINE_QROWS_Y(u8, uint8_t, s8, int8_t)
DEFINE_QROWS_Y(s8, int8_t, u8, uint8_t)
DEFINE_QROWS_Y(s8, int8_t, s8, int8_t)

/* Rows [b, e) with a float8 operand or result: values through the decode tables, sums in
 * double. */
static void qrows_lut(void *ctx, int64_t b, int64_t e) {
    const qmm_job *j = ctx;
    const int64_t m = j->sh.m, n = j->sh.n, k = j->sh.k;
    onyx_dtype yd = j->y->dtype;
    for (int64_t t = b; t < e; t++) {
        int64_t i = t % m, ao, bo;
        cpu_mm_batch_offsets(&j->sh, t / m, &ao, &bo);
        int64_t ma = mat_index(ao, m * k), mb = mat_index(bo, k * n);
        const uint8_t *a = (const uint8_t *)j->a->data + ao + i * k;
        const uint8_t *bm = (const uint8_t *)j->b->data + bo;
        int64_t ai = qp_index(j->ak, ma, m, i);
        double za = j->lut_a[((const uint8_t *)j->az->data)[ai]];
        double as = tensor_get_f64(j->as, ai);
        for (int64_t jj = 0; jj < n; jj++) {
            double zb = j->lut_b[((const uint8_t *)j->bz->data)[qp_index(j->bk, mb, n, jj)]];
            double s = 0;
            for (int64_t p = 0; p < k; p++)
                s += (j->lut_a[a[p]] - za) * (j->lut_b[bm[p * n + jj]] - zb);
            double v = s * multiplier(j, as, mb, jj);
            uint8_t *y = (uint8_t *)j->y->data + t * n + jj;
            if (yd == ONYX_INT8 || yd == ONYX_UINT8) {
                double q = requant_value(j, v);
                *y = yd == ONYX_INT8 ? (uint8_t)(int8_t)q : (uint8_t)q;
            } else {
                *y = floatconv_encode(yd, v + j->yz, true);
            }
        }
    }
}

/* Requantizing the int32 products of one batch (rows [b, e)) computed by the GEMM. */
typedef struct qmm_rq {
    const qmm_job *j;
    const int32_t *c;
    int64_t t, ma, mb;  /* batch index, a's and b's matrix */
    int64_t m;          /* rows of the batch (all batches' rows when they were one product) */
    const double *mult; /* with one a scale: the multiplier of each column (of column 0 when b
                           has one scale too) */
} qmm_rq;

#define DEFINE_RQ(NY, TY)                                                                          \
    static void rq_##NY(void *ctx, int64_t b, int64_t e) {                                         \
        const qmm_rq *q = ctx;                                                                     \
        const qmm_job *j = q->j;                                                                   \
        const int64_t n = j->sh.n;                                                                 \
        for (int64_t i = b; i < e; i++) {                                                          \
            TY *y = (TY *)j->y->data + (q->t * q->m + i) * n;                                      \
            const int32_t *c = q->c + i * n;                                                       \
            if (q->mult && j->bk == QP_ONE) {                                                      \
                double mult = q->mult[0];                                                          \
                for (int64_t jj = 0; jj < n; jj++) y[jj] = (TY)requant(j, c[jj], mult);            \
            } else if (q->mult) {                                                                  \
                for (int64_t jj = 0; jj < n; jj++) y[jj] = (TY)requant(j, c[jj], q->mult[jj]);     \
            } else {                                                                               \
                double as = tensor_get_f64(j->as, qp_index(j->ak, q->ma, j->sh.m, i));             \
                for (int64_t jj = 0; jj < n; jj++)                                                 \
                    y[jj] = (TY)requant(j, c[jj], multiplier(j, as, q->mb, jj));                   \
            }                                                                                      \
        }                                                                                          \
    }
DEFINE_RQ(u8, uint8_t)
DEFINE_RQ(s8, int8_t)

/* Whether every batch of a multiplies the one b, a's batches stored one after another: then
 * they are one product of all their rows (a transformer's [B, S, K] activations by a weight). */
static bool b_shared(const cpu_mm_shape *sh) {
    int64_t stride = sh->m * sh->k;
    for (int i = sh->nb - 1; i >= 0; i--) {
        if (sh->bstr[i] != 0 || (sh->bdim[i] > 1 && sh->astr[i] != stride)) return false;
        stride *= sh->bdim[i];
    }
    return true;
}

/* Every batch through cpu_gemm_i8; false (nothing written) where it is not available. Its
 * working memory (one batch's int32 products, b as int8, the columns' multipliers) is the run
 * context's scratch. */
static onyx_status gemm_path(const kernel_call *call, qmm_job *j, bool *done) {
    *done = false;
    bool a_signed = j->a->dtype == ONYX_INT8, b_signed = j->b->dtype == ONYX_INT8;
    bool fold = j->ak == QP_ONE && j->bk != QP_EACH_MATRIX && b_shared(&j->sh);
    int64_t rows = fold ? j->sh.nbatch * j->sh.m : j->sh.m, batches = fold ? 1 : j->sh.nbatch;
    /* each region 64-byte aligned: the multipliers are doubles */
    size_t cbytes = ((size_t)(rows * j->sh.n) * sizeof(int32_t) + 63) & ~(size_t)63;
    size_t bbytes = b_signed ? 0 : ((size_t)(j->sh.k * j->sh.n) + 63) & ~(size_t)63;
    size_t mbytes = (size_t)j->sh.n * sizeof(double);
    void *buf;
    TRY(kernel_scratch(call, cbytes + bbytes + mbytes, &buf));
    int32_t *c = buf;
    int8_t *bconv = (int8_t *)((char *)buf + cbytes);
    double *mult = (double *)((char *)buf + cbytes + bbytes);
    int32_t za = (int32_t)tensor_get_i64(j->az, 0), zb = (int32_t)tensor_get_i64(j->bz, 0);
    /* uint8 b as int8: b - 128 with its zero point moved alike */
    if (!b_signed) zb -= 128;
    for (int64_t t = 0; t < batches; t++) {
        int64_t ao, bo;
        cpu_mm_batch_offsets(&j->sh, t, &ao, &bo);
        const int8_t *bm = (const int8_t *)j->b->data + bo;
        if (!b_signed) {
            const uint8_t *src = (const uint8_t *)j->b->data + bo;
            for (int64_t i = 0; i < j->sh.k * j->sh.n; i++) bconv[i] = (int8_t)(src[i] ^ 0x80u);
            bm = bconv;
        }
        if (!cpu_gemm_i8(a_signed, rows, j->sh.n, j->sh.k, (const uint8_t *)j->a->data + ao, j->sh.k, za,
                         bm, j->sh.n, zb, c, j->sh.n)) {
            if (t == 0) return ONYX_OK; /* no exact int8 GEMM here: the loop computes it all */
            return onyx_error(ONYX_ERR_RUNTIME, "oneDNN's int8 GEMM failed midway");
        }
        qmm_rq q = {j, c, t, mat_index(ao, j->sh.m * j->sh.k), mat_index(bo, j->sh.k * j->sh.n),
                    rows, NULL};
        if (j->ak == QP_ONE) {
            double as = tensor_get_f64(j->as, 0);
            for (int64_t jj = 0; jj < (j->bk == QP_ONE ? 1 : j->sh.n); jj++)
                mult[jj] = multiplier(j, as, q.mb, jj);
            q.mult = mult;
        }
        parallel_for(rows, MAC_GRAIN / (j->sh.n * 16 + 1) + 1,
                     j->y->dtype == ONYX_INT8 ? rq_s8 : rq_u8, &q);
    }
    *done = true;
    return ONYX_OK;
}

/* A's rows times the constant b on the prepared int8 matmul, requantized in its pass. */
static onyx_status fast_run(const kernel_call *c, const cpu_i8mm_mem *f, const qmm_job *j) {
    const cpu_i8mm *mm = f->p;
    const int64_t n = mm->n, cols = j->bk == QP_ONE ? 1 : n;
    size_t head = (mm->scratch_bytes + 63) & ~(size_t)63;
    void *buf;
    TRY(kernel_scratch(c, head + (size_t)(mm->m * n + 2 * cols) * 4, &buf));
    int32_t *acc = (int32_t *)((char *)buf + head), *zb = acc + mm->m * n;
    float *mult = (float *)(zb + cols);
    const double as = tensor_get_f64(j->as, 0);
    for (int64_t jj = 0; jj < cols; jj++) {
        zb[jj] = (int32_t)tensor_get_i64(j->bz, jj);
        mult[jj] = (float)multiplier(j, as, 0, jj);
    }
    const int32_t za = (int32_t)tensor_get_i64(j->az, 0);
    cpu_i8mm_call x = {.a = j->a->data, .za = &za, .zb = zb, .zb_cols = cols > 1, .y = acc,
                       .mult = mult, .mult_cols = cols > 1, .q = j->y->data,
                       .q_signed = j->y->dtype == ONYX_INT8, .qz = (int32_t)j->yz,
                       .scratch = buf};
    return cpu_i8mm_run(f, &x);
}

onyx_status cpu_qlinearmatmul_prepare(const kernel_prep *p, void **state) {
    return cpu_i8mm_rows_prepare(p, 0, 3, false, state);
}

/* Whether every value of zero point z is its first: per-column scales with one zero point (what
 * quantizers write for symmetric per-channel weights) still take the int8 GEMM. */
static bool uniform_zero_point(const tensor *z) {
    for (int64_t i = 1; i < z->numel; i++)
        if (tensor_get_i64(z, i) != tensor_get_i64(z, 0)) return false;
    return true;
}

/* Layout of a scale/zero-point pair of operand x (input i), `per` rows or columns per matrix. */
static onyx_status param_kind(const tensor *s, const tensor *z, int i, const tensor *x,
                              int64_t per, qp_kind *kind) {
    if (s->numel != z->numel)
        return onyx_error(ONYX_ERR_SHAPE, "input %d (scale) has %lld elements, its zero point "
                          "%lld", i, (long long)s->numel, (long long)z->numel);
    int64_t matrices = 1;
    for (int d = 0; d < x->rank - 2; d++) matrices *= x->dims[d];
    if (s->numel == 1) *kind = QP_ONE;
    else if (s->rank == 1 && s->numel == per) *kind = QP_EACH;
    else if (s->numel == matrices * per && x->rank > 2) *kind = QP_EACH_MATRIX;
    else if (s->numel == per) *kind = QP_EACH;
    else
        return onyx_error(ONYX_ERR_SHAPE, "input %d (scale) has %lld elements, expected 1, %lld "
                          "or %lld", i, (long long)s->numel, (long long)per,
                          (long long)(matrices * per));
    return ONYX_OK;
}

onyx_status cpu_qlinearmatmul_run(const kernel_call *c) {
    qmm_job j = {.a = kernel_input(c, 0), .as = kernel_input(c, 1), .az = kernel_input(c, 2), .b = kernel_input(c, 3),
                 .bs = kernel_input(c, 4), .bz = kernel_input(c, 5), .y = kernel_output(c, 0)};
    const tensor *ys = kernel_input(c, 6), *yz = kernel_input(c, 7);
    if (!j.a || !j.as || !j.az || !j.b || !j.bs || !j.bz || !ys || !yz || !j.y)
        return onyx_error(ONYX_ERR_SHAPE, "all eight inputs are required tensors");
    if (j.az->dtype != j.a->dtype || j.bz->dtype != j.b->dtype || yz->dtype != j.y->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "zero points must have their operand's type");
    if (ys->numel != 1 || yz->numel != 1)
        return onyx_error(ONYX_ERR_SHAPE, "y_scale and y_zero_point have %lld and %lld elements, "
                          "expected 1", (long long)ys->numel, (long long)yz->numel);
    TRY(cpu_mm_shape_init(c->params, j.a, j.b, j.y, &j.sh));
    TRY(param_kind(j.as, j.az, 1, j.a, j.sh.m, &j.ak));
    TRY(param_kind(j.bs, j.bz, 4, j.b, j.sh.n, &j.bk));
    j.sd = ys->dtype;
    j.ys = tensor_get_f64(ys, 0);
    onyx_dtype ad = j.a->dtype, bd = j.b->dtype, yd = j.y->dtype;
    j.yz = byte_value(yd, *(const uint8_t *)yz->data);
    j.lo = yd == ONYX_INT8 ? -128 : 0;
    j.hi = yd == ONYX_INT8 ? 127 : 255;
    if (j.y->numel == 0) return ONYX_OK;
    int64_t grain = MAC_GRAIN / (j.sh.n * j.sh.k + 1) + 1;
    bool ints = (ad == ONYX_INT8 || ad == ONYX_UINT8) && (bd == ONYX_INT8 || bd == ONYX_UINT8) &&
                (yd == ONYX_INT8 || yd == ONYX_UINT8);
    if (!ints) {
        for (int v = 0; v < 256; v++) {
            j.lut_a[v] = byte_value(ad, (uint8_t)v);
            j.lut_b[v] = byte_value(bd, (uint8_t)v);
        }
        parallel_for(j.sh.nbatch * j.sh.m, grain, qrows_lut, &j);
        return ONYX_OK;
    }
    const cpu_i8mm_mem *fast = j.ak == QP_ONE ? cpu_i8mm_rows_for(c, j.a, j.b) : NULL;
    if (fast) return fast_run(c, fast, &j);
    if (uniform_zero_point(j.az) && uniform_zero_point(j.bz) && j.sh.k > 0) {
        bool done;
        TRY(gemm_path(c, &j, &done));
        if (done) return ONYX_OK;
    }
    void (*fn)(void *, int64_t, int64_t);
    bool sa = ad == ONYX_INT8, sb = bd == ONYX_INT8, sy = yd == ONYX_INT8;
    if (sa) fn = sb ? (sy ? qrows_s8_s8_s8 : qrows_s8_s8_u8)
                    : (sy ? qrows_s8_u8_s8 : qrows_s8_u8_u8);
    else fn = sb ? (sy ? qrows_u8_s8_s8 : qrows_u8_s8_u8)
                 : (sy ? qrows_u8_u8_s8 : qrows_u8_u8_u8);
    parallel_for(j.sh.nbatch * j.sh.m, grain, fn, &j);
    return ONYX_OK;
}

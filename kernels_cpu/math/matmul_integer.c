/* CPU kernel of MatMulInteger: (A - a_zero_point) @ (B - b_zero_point) in int32.
 *
 * With B a constant matrix (the weights of onnxruntime's quantize_dynamic) and an exact int8
 * product on this CPU, the product runs on oneDNN's int8 matmul primitive, B packed once
 * (kernels_cpu/common/i8_matmul.h); every other case, and every CPU without VNNI, on the
 * reference loop below. Both give the same int32 bits. */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/common/i8_matmul.h"
#include "kernels_cpu/common/matmul_shape.h"
#include "kernels_cpu/cpu_kernels.h"

/* Multiply-adds below which rows are not worth another thread. */
#define INT_GRAIN 65536

/* ---- the reference: (A - a_zero_point) @ (B - b_zero_point) in int32, computed as
 * sum_k a'[i,k] b[k,j] - zb[j] * sum_k a'[i,k] so that B is read as stored. Zero points are one
 * value, one per row of A / column of B, or that for each of A's / B's matrices ([D1, D2, M, 1]
 * and [D1, D2, 1, N]). Wraps on overflow (uint32 arithmetic). */

typedef enum zp_kind { ZP_ONE, ZP_EACH, ZP_EACH_MATRIX } zp_kind;

/* The operands of a batched product (output batch index -> offsets of A's and B's matrices). */
typedef struct mmi_mats {
    const void *a, *b;
    void *c;
    cpu_mm_shape sh;
} mmi_mats;

typedef struct mmi_job {
    mmi_mats j;
    const void *za, *zb;
    zp_kind za_kind, zb_kind;
} mmi_job;

static inline int64_t zp_index(zp_kind k, int64_t matrix, int64_t per, int64_t i) {
    return k == ZP_ONE ? 0 : k == ZP_EACH ? i : matrix * per + i;
}

#define DEFINE_MMI(NA, TA, NB, TB)                                                                 \
    static void mmi_##NA##_##NB(void *ctx, int64_t b, int64_t e) {                                 \
        const mmi_job *q = ctx;                                                                    \
        const mmi_mats *j = &q->j;                                                                 \
        for (int64_t t = b; t < e; t++) {                                                          \
            int64_t bt = t / j->sh.m, i = t % j->sh.m, ao, bo;                                     \
            cpu_mm_batch_offsets(&j->sh, bt, &ao, &bo);                                            \
            const TA *a = (const TA *)j->a + ao + i * j->sh.k;                                     \
            const TB *bm = (const TB *)j->b + bo;                                                  \
            uint32_t *c = (uint32_t *)j->c + t * j->sh.n;                                          \
            int64_t ma = ao / (j->sh.m * j->sh.k), mb = bo / (j->sh.k * j->sh.n);                  \
            int32_t za = q->za ? ((const TA *)q->za)[zp_index(q->za_kind, ma, j->sh.m, i)] : 0;    \
            uint32_t rs = 0;                                                                       \
            for (int64_t n = 0; n < j->sh.n; n++) c[n] = 0;                                        \
            for (int64_t p = 0; p < j->sh.k; p++) {                                                \
                uint32_t av = (uint32_t)((int32_t)a[p] - za);                                      \
                const TB *bp = bm + p * j->sh.n;                                                   \
                rs += av;                                                                          \
                for (int64_t n = 0; n < j->sh.n; n++) c[n] += av * (uint32_t)(int32_t)bp[n];       \
            }                                                                                      \
            if (!q->zb) continue;                                                                  \
            const TB *zb = q->zb;                                                                  \
            for (int64_t n = 0; n < j->sh.n; n++)                                                  \
                c[n] -= rs * (uint32_t)(int32_t)zb[zp_index(q->zb_kind, mb, j->sh.n, n)];          \
        }                                                                                          \
    }
DEFINE_MMI(u8, uint8_t, u8, uint8_t)
DEFINE_MMI(u8, uint8_t, s8, int8_t)
DEFINE_MMI(s8, int8_t, u8, uint8_t)
DEFINE_MMI(s8, int8_t, s8, int8_t)

/* How zero point input i (of operand x, `per` rows or columns per matrix) is laid out. */
static onyx_status zero_point_kind(const tensor *z, int i, const tensor *x, int64_t per,
                                   zp_kind *kind) {
    int64_t matrices = 1;
    for (int d = 0; d < x->rank - 2; d++) matrices *= x->dims[d];
    if (z->numel == 1) *kind = ZP_ONE;
    else if (z->rank == 1 && z->numel == per) *kind = ZP_EACH;
    else if (z->numel == matrices * per) *kind = ZP_EACH_MATRIX;
    else
        return onyx_error(ONYX_ERR_SHAPE, "input %d (zero point) has %lld elements, expected 1, "
                          "%lld or %lld", i, (long long)z->numel, (long long)per,
                          (long long)(matrices * per));
    return ONYX_OK;
}

/* ---- the fast path: A's rows (batch dims folded in) times the constant B (i8_matmul.h) */

onyx_status cpu_matmul_integer_prepare(const kernel_prep *p, void **state) {
    return cpu_i8mm_rows_prepare(p, 0, 1, false, state);
}

static onyx_status fast_run(const kernel_call *c, const cpu_i8mm_mem *f, const mmi_job *q) {
    const cpu_i8mm *mm = f->p;
    const int64_t m = mm->m, n = mm->n, per = q->j.sh.m;
    void *buf;
    TRY(kernel_scratch(c, mm->scratch_bytes + (size_t)(m + n) * sizeof(int32_t), &buf));
    int32_t *za = (int32_t *)((char *)buf + mm->scratch_bytes), *zb = za + m;
    int32_t za1 = 0, zb1 = 0;
    bool sa = mm->a_signed, sb = mm->b_signed;
    cpu_i8mm_call x = {.a = q->j.a, .za = &za1, .zb = &zb1, .y = q->j.c, .scratch = buf};
    if (q->za && q->za_kind == ZP_ONE) {
        za1 = sa ? ((const int8_t *)q->za)[0] : ((const uint8_t *)q->za)[0];
    } else if (q->za) { /* per row: the folded row r is row r % per of matrix r / per */
        for (int64_t r = 0; r < m; r++) {
            int64_t i = zp_index(q->za_kind, r / per, per, r % per);
            za[r] = sa ? ((const int8_t *)q->za)[i] : ((const uint8_t *)q->za)[i];
        }
        x.za = za;
        x.za_rows = true;
    }
    if (q->zb && q->zb_kind == ZP_ONE) {
        zb1 = sb ? ((const int8_t *)q->zb)[0] : ((const uint8_t *)q->zb)[0];
    } else if (q->zb) { /* B has one matrix: ZP_EACH and ZP_EACH_MATRIX index the same */
        for (int64_t j = 0; j < n; j++)
            zb[j] = sb ? ((const int8_t *)q->zb)[j] : ((const uint8_t *)q->zb)[j];
        x.zb = zb;
        x.zb_cols = true;
    }
    return cpu_i8mm_run(f, &x);
}

onyx_status cpu_matmul_integer_run(const kernel_call *c) {
    const tensor *A = kernel_input(c, 0), *B = kernel_input(c, 1), *za = kernel_input(c, 2),
                 *zb = kernel_input(c, 3);
    tensor *Y = kernel_output(c, 0);
    mmi_job q = {0};
    TRY(cpu_mm_shape_init(c->params, A, B, Y, &q.j.sh));
    bool sa = A->dtype == ONYX_INT8, sb = B->dtype == ONYX_INT8;
    if ((!sa && A->dtype != ONYX_UINT8) || (!sb && B->dtype != ONYX_UINT8) ||
        Y->dtype != ONYX_INT32)
        return onyx_error(ONYX_ERR_SHAPE, "types %s x %s -> %s, expected (u)int8 x (u)int8 -> "
                          "int32", onyx_dtype_name(A->dtype), onyx_dtype_name(B->dtype),
                          onyx_dtype_name(Y->dtype));
    if (za) {
        if (za->dtype != A->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "input 2 (a_zero_point) has type %s, expected %s",
                              onyx_dtype_name(za->dtype), onyx_dtype_name(A->dtype));
        TRY(zero_point_kind(za, 2, A, q.j.sh.m, &q.za_kind));
        q.za = za->data;
    }
    if (zb) {
        if (zb->dtype != B->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "input 3 (b_zero_point) has type %s, expected %s",
                              onyx_dtype_name(zb->dtype), onyx_dtype_name(B->dtype));
        TRY(zero_point_kind(zb, 3, B, q.j.sh.n, &q.zb_kind));
        q.zb = zb->data;
    }
    if (Y->numel == 0) return ONYX_OK;
    if (q.j.sh.k == 0) {
        /* empty sums; the rows' matrix index (offset / (m * k)) would divide by zero */
        memset(Y->data, 0, Y->nbytes);
        return ONYX_OK;
    }
    q.j.a = A->data;
    q.j.b = B->data;
    q.j.c = Y->data;
    const cpu_i8mm_mem *f = cpu_i8mm_rows_for(c, A, B);
    if (f) return fast_run(c, f, &q);
    void (*fn)(void *, int64_t, int64_t) = sa ? (sb ? mmi_s8_s8 : mmi_s8_u8)
                                              : (sb ? mmi_u8_s8 : mmi_u8_u8);
    parallel_for(q.j.sh.nbatch * q.j.sh.m, INT_GRAIN / (q.j.sh.n * q.j.sh.k + 1) + 1, fn, &q);
    return ONYX_OK;
}

/* The exact 8-bit integer GEMM behind QGemm and MatMulIntegerToFloat (see cq_kernel.h).
 *
 * B is read as int8 (uint8 moved down by 128, its zero points alike) because oneDNN's exact
 * GEMM wants that; per-column zero points come in afterwards as zb[j] * rowsum(A - za), since
 * oneDNN takes one zero point per operand. */

#include "core/parallel.h"
#include "kernels_cpu/common/blas.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/contrib_quant/cq_kernel.h"

/* Columns per tile of int32 accumulators (on the stack). */
#define TILE 256

static size_t align64(size_t b) { return (b + 63) & ~(size_t)63; }

size_t cq_gemm_work_bytes(int64_t m, int64_t n, int64_t k) {
    return align64((size_t)(m * k)) + align64((size_t)(k * n)) + align64((size_t)n * 4) +
           align64((size_t)m * 4) + 64;
}

typedef struct rows_job {
    const cq_gemm *g;
    const uint8_t *a;  /* [m, k] in g->at */
    const int8_t *b;   /* [k, n] */
    const int32_t *zb; /* [n], shifted like b */
    int32_t *rs;       /* [m] rowsum(A - za) */
    int32_t *acc;
    bool products;     /* compute the products too (no GEMM did) */
} rows_job;

/* sum_p (a[p] - za), wrapping */
static uint32_t row_sum(const uint8_t *a, int64_t k, bool s8, uint32_t za) {
    uint32_t rs = 0;
    if (s8) {
        const int8_t *v = (const int8_t *)a;
        CPU_SIMD_SUM(rs) for (int64_t p = 0; p < k; p++) rs += (uint32_t)(int32_t)v[p];
    } else {
        CPU_SIMD_SUM(rs) for (int64_t p = 0; p < k; p++) rs += (uint32_t)a[p];
    }
    return rs - za * (uint32_t)k;
}

static void rows(void *ctx, int64_t b, int64_t e) {
    const rows_job *j = ctx;
    const int64_t n = j->g->n, k = j->g->k;
    const bool s8 = j->g->at == ONYX_INT8;
    const uint32_t za = (uint32_t)j->g->za;
    for (int64_t i = b; i < e; i++) {
        const uint8_t *ar = j->a + i * k;
        uint32_t rs = row_sum(ar, k, s8, za);
        j->rs[i] = (int32_t)rs;
        if (!j->products) continue;
        int32_t *out = j->acc + i * n;
        for (int64_t n0 = 0; n0 < n; n0 += TILE) {
            int64_t nn = n - n0 < TILE ? n - n0 : TILE;
            uint32_t acc[TILE];
            for (int64_t c = 0; c < nn; c++) acc[c] = 0;
            for (int64_t p = 0; p < k; p++) {
                /* |a - za| <= 255 fits int16, so the products vectorize as 16x16->32 */
                int32_t x = s8 ? (int32_t)(int8_t)ar[p] : (int32_t)ar[p];
                int16_t av = (int16_t)(x - (int32_t)za);
                const int8_t *bp = j->b + p * n + n0;
                CPU_SIMD for (int64_t c = 0; c < nn; c++)
                    acc[c] += (uint32_t)((int32_t)av * (int32_t)bp[c]);
            }
            for (int64_t c = 0; c < nn; c++)
                out[n0 + c] = (int32_t)(acc[c] - rs * (uint32_t)j->zb[n0 + c]);
        }
    }
}

void cq_gemm_layout_b(onyx_dtype bt, bool tb, const void *b, int64_t k, int64_t n, int8_t *out) {
    const uint8_t *src = b;
    const uint8_t flip = bt == ONYX_UINT8 ? 0x80 : 0;
    if (tb) {
        for (int64_t p = 0; p < k; p++)
            for (int64_t j = 0; j < n; j++) out[p * n + j] = (int8_t)(src[j * k + p] ^ flip);
    } else {
        for (int64_t x = 0; x < k * n; x++) out[x] = (int8_t)(src[x] ^ flip);
    }
}

void cq_gemm_s32(const cq_gemm *g, void *work, int32_t *acc) {
    const int64_t m = g->m, n = g->n, k = g->k;
    uint8_t *w = (uint8_t *)(((uintptr_t)work + 63) & ~(uintptr_t)63);
    uint8_t *at = w;
    int8_t *bt = (int8_t *)(w + align64((size_t)(m * k)));
    int32_t *zb = (int32_t *)((uint8_t *)bt + align64((size_t)(k * n)));
    int32_t *rs = (int32_t *)((uint8_t *)zb + align64((size_t)n * 4));
    /* operands already in place are read where they are */
    const uint8_t *a = g->a;
    if (g->ta) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = 0; p < k; p++) at[i * k + p] = a[p * m + i];
        a = at;
    }
    const int8_t *b = g->b_ready;
    if (!b && g->bt == ONYX_INT8 && !g->tb) b = g->b;
    if (!b) {
        cq_gemm_layout_b(g->bt, g->tb, g->b, k, n, bt);
        b = bt;
    }
    const int32_t shift = g->bt == ONYX_UINT8 ? 128 : 0;
    for (int64_t jj = 0; jj < n; jj++) zb[jj] = g->zb[g->zb_n > 1 ? jj : 0] - shift;
    /* per-column zero points that are all one (symmetric weights: all 0) are one zero point */
    bool one_zb = true;
    for (int64_t jj = 1; jj < n && one_zb; jj++) one_zb = zb[jj] == zb[0];
    rows_job j = {g, a, b, zb, rs, acc, true};
    if (k > 0 && cpu_gemm_i8(g->at == ONYX_INT8, m, n, k, a, k, g->za, b, n, zb[0], acc, n)) {
        if (one_zb) return;
        j.products = false;
        parallel_for(m, 65536 / (k + 1) + 1, rows, &j);
        for (int64_t i = 0; i < m; i++)
            for (int64_t jj = 0; jj < n; jj++)
                acc[i * n + jj] = (int32_t)((uint32_t)acc[i * n + jj] -
                                            (uint32_t)rs[i] * (uint32_t)(zb[jj] - zb[0]));
        return;
    }
    parallel_for(m, 65536 / (n * k + 1) + 1, rows, &j);
}

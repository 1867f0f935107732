/* CPU kernel of com.microsoft.MatMulNBits: the block-quantized weight is dequantized once to a
 * float [N, K] matrix at prepare (shared through kernel_shared by every plan of the model when B,
 * scales and zero points are constants; else per run into scratch), then Y = A W^T (+ bias)
 * through BLAS. */
#include <stdlib.h>

#include "kernels_cpu/common/blas.h"
#include "kernels_cpu/contrib_nlp/cnlp_cpu.h"
#include "kernels_cpu/cpu_kernels.h"
#include "ops/contrib_nlp/contrib_nlp.h"

typedef struct nb_src {
    cnlp_nbits q;
    const uint8_t *b;
    const tensor *scales, *zp; /* zp NULL: the midpoint 2^(bits-1) */
} nb_src;

/* w [N, K] from the packed codes: (code - zero point) * scale per block along K; codes are packed
 * low bits first within each byte, as are packed uint8 zero points along the blocks. */
static void dequant(const nb_src *s, float *w) {
    const cnlp_nbits *q = &s->q;
    const int bits = (int)q->bits, mask = (1 << bits) - 1, per = 8 / bits;
    const float mid = (float)(1 << (bits - 1));
    for (int64_t n = 0; n < q->n; n++)
        for (int64_t kb = 0; kb < q->k_blocks; kb++) {
            int64_t blk = n * q->k_blocks + kb;
            float scale = (float)cnlp_get(s->scales, blk), zp = mid;
            if (s->zp && s->zp->dtype == ONYX_UINT8) {
                uint8_t z = ((const uint8_t *)s->zp->data)[n * q->zp_bytes + kb / per];
                zp = (float)((z >> ((kb % per) * bits)) & mask);
            } else if (s->zp) {
                zp = (float)cnlp_get(s->zp, blk);
            }
            const uint8_t *codes = s->b + blk * q->blob;
            int64_t k0 = kb * q->block, kn = q->k - k0 < q->block ? q->k - k0 : q->block;
            float *row = w + n * q->k + k0;
            for (int64_t i = 0; i < kn; i++) {
                int code = (codes[i / per] >> ((i % per) * bits)) & mask;
                row[i] = ((float)code - zp) * scale;
            }
        }
}

static onyx_status check_inputs(const cnlp_nbits *q, const tensor *b, const tensor *scales,
                                const tensor *zp) {
    if (b->dtype != ONYX_UINT8 || b->numel != q->n * q->k_blocks * q->blob)
        return onyx_error(ONYX_ERR_SHAPE, "B must be uint8 with N*k_blocks*blob = %lld elements",
                          (long long)(q->n * q->k_blocks * q->blob));
    if (!dtype_in(scales->dtype, DT_FLOATS) || scales->numel != q->n * q->k_blocks)
        return onyx_error(ONYX_ERR_SHAPE, "scales must be float with N*k_blocks = %lld elements",
                          (long long)(q->n * q->k_blocks));
    if (zp && !(zp->dtype == ONYX_UINT8
                    ? zp->numel == q->n * q->zp_bytes
                    : dtype_in(zp->dtype, DT_FLOATS) && zp->numel == q->n * q->k_blocks))
        return onyx_error(ONYX_ERR_SHAPE,
                          "zero_points must be packed uint8 [N, %lld] or float "
                          "[N, %lld]",
                          (long long)q->zp_bytes, (long long)q->k_blocks);
    return ONYX_OK;
}

typedef struct nb_key {
    char tag[8];
    const void *b, *scales, *zp;
    int64_t k, n, bits, block;
    int32_t st, zt;
} nb_key;

static onyx_status nb_make(void *ctx, void **obj) {
    const nb_src *s = ctx;
    float *w = malloc((size_t)(s->q.n * s->q.k) * sizeof *w);
    if (!w) return onyx_oom("dequantized MatMulNBits weight");
    dequant(s, w);
    *obj = w;
    return ONYX_OK;
}

static void nb_free(void *obj) { free(obj); }

typedef struct nb_state {
    const float *w; /* shared, borrowed; NULL: dequantize per run */
} nb_state;

onyx_status cpu_cnlp_matmul_nbits_prepare(const kernel_prep *p, void **state) {
    cnlp_nbits q;
    TRY(cnlp_nbits_of(p->node, &q));
    nb_state *st = calloc(1, sizeof *st);
    if (!st) return onyx_oom("MatMulNBits state");
    const tensor *b = p->n_in > 1 ? p->in_value[1] : NULL,
                 *sc = p->n_in > 2 ? p->in_value[2] : NULL;
    const tensor *zp = p->n_in > 3 ? p->in_value[3] : NULL;
    bool zp_given = p->n_in > 3 && p->in_type[3];
    if (b && sc && (zp || !zp_given)) {
        onyx_status s = check_inputs(&q, b, sc, zp);
        nb_key key;
        memset(&key, 0, sizeof key);
        memcpy(key.tag, "cnlpnb", 7);
        key.b = b->data, key.scales = sc->data, key.zp = zp ? zp->data : NULL;
        key.k = q.k, key.n = q.n, key.bits = q.bits, key.block = q.block;
        key.st = sc->dtype, key.zt = zp ? zp->dtype : 0;
        nb_src src = {q, b->data, sc, zp};
        void *obj = NULL;
        if (s == ONYX_OK) s = kernel_shared(p, &key, sizeof key, nb_make, nb_free, &src, &obj);
        if (s != ONYX_OK) {
            free(st);
            return s;
        }
        st->w = obj;
    }
    *state = st;
    return ONYX_OK;
}

void cpu_cnlp_matmul_nbits_release(void *state) { free(state); }

onyx_status cpu_cnlp_matmul_nbits(const kernel_call *c) {
    const nb_state *st = c->state;
    cnlp_nbits q;
    TRY(cnlp_nbits_of(c->node, &q));
    const tensor *A = kernel_input(c, 0), *B = kernel_input(c, 1), *S = kernel_input(c, 2),
                 *Z = kernel_input(c, 3), *bias = kernel_input(c, 5);
    tensor *Y = kernel_output(c, 0);
    if (kernel_input(c, 4))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input g_idx (deprecated) is not supported");
    if (A->rank < 1 || A->dims[A->rank - 1] != q.k)
        return onyx_error(ONYX_ERR_SHAPE, "A's last dim must be K = %lld", (long long)q.k);
    if (bias && (bias->dtype != A->dtype || bias->numel != q.n))
        return onyx_error(ONYX_ERR_SHAPE, "bias must have A's type and N = %lld elements",
                          (long long)q.n);
    int64_t m = A->numel / q.k;
    if (!cpu_blas_dims_ok(m, q.n, q.k))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "matrix sizes exceed BLAS's int range");
    bool fa = A->dtype == ONYX_FLOAT;
    size_t wbytes = st->w ? 0 : ((size_t)(q.n * q.k) * 4 + 63) / 64 * 64;
    size_t abytes = fa ? 0 : ((size_t)A->numel * 4 + 63) / 64 * 64;
    size_t ybytes = fa ? 0 : (size_t)Y->numel * 4;
    char *buf = NULL;
    if (wbytes + abytes + ybytes) TRY(kernel_scratch(c, wbytes + abytes + ybytes, (void **)&buf));
    const float *w = st->w;
    if (!w) {
        TRY(check_inputs(&q, B, S, Z));
        nb_src src = {q, B->data, S, Z};
        dequant(&src, (float *)buf);
        w = (const float *)buf;
    }
    const float *a = A->data;
    float *y = Y->data;
    if (!fa) {
        cnlp_load(A->data, A->dtype, 0, (float *)(buf + wbytes), A->numel);
        a = (const float *)(buf + wbytes);
        y = (float *)(buf + wbytes + abytes);
    }
    if (m > 0) {
        if (m == 1) {
            /* not beta 0: some gemv let stale NaN through */
            memset(y, 0, (size_t)q.n * sizeof *y);
            cpu_sgemv(false, q.n, q.k, 1, w, q.k, a, 1, y);
        } else {
            cpu_sgemm(false, true, m, q.n, q.k, 1, a, q.k, w, q.k, 0, y, q.n);
        }
        if (bias) {
            float bb[256];
            for (int64_t n0 = 0; n0 < q.n; n0 += 256) {
                int64_t cnt = q.n - n0 < 256 ? q.n - n0 : 256;
                cnlp_load(bias->data, bias->dtype, n0, bb, cnt);
                for (int64_t r = 0; r < m; r++) {
                    float *yr = y + r * q.n + n0;
                    CPU_SIMD for (int64_t i = 0; i < cnt; i++) yr[i] += bb[i];
                }
            }
        }
    }
    if (!fa) cnlp_store(Y->data, Y->dtype, 0, y, Y->numel);
    return ONYX_OK;
}

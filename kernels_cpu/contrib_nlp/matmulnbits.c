/* CPU kernel of com.microsoft.MatMulNBits on its packed weights: B is never expanded to a float
 * matrix. Prepare keeps the model's packed codes where they are and makes only what is per block
 * (float scales, one byte per integer zero point), shared by every plan of the rep. A few rows
 * (decode) run dot products that unpack the codes in registers (kernels_cpu/contrib_nlp/
 * nbits_dot.c), in parallel over the output columns; at accuracy_level 4 the activations are
 * quantized per block to int8 and the products run in int8 (VNNI) where this CPU has it. Many
 * rows (prefill) dequantize panels of columns, sized to stay in cache, into scratch and multiply
 * them with sgemm, each thread its own panels from start to end. At accuracy_level 4 with
 * constant 4-bit weights, all row counts run instead as an int8 GEMM on a copy of the weight
 * repacked at prepare (kernels_cpu/contrib_nlp/nbits_i8.c).
 * Which of the two forms a constant weight is kept in is chosen here for every kernel that reads
 * it (nbits_form.h: a tied embedding's GatherNBits too). Weights given at run time get the same
 * per-block tables in scratch. */
#include <stdlib.h>

#include "core/parallel.h"
#include "kernels_cpu/common/blas.h"
#include "kernels_cpu/contrib_nlp/cnlp_cpu.h"
#include "kernels_cpu/contrib_nlp/nbits_dot.h"
#include "kernels_cpu/contrib_nlp/nbits_form.h"
#include "kernels_cpu/cpu_kernels.h"
#include "ops/contrib_nlp/contrib_nlp.h"

/* Rows up to which the dot kernels run; above, dequantized panels and sgemm (whose packing pays
 * off once a panel is reused by this many rows). */
#define DOT_MAX_ROWS 16
/* Bytes of one dequantized panel of columns, one per thread: a Xeon core's L2 (the Llama-sized
 * products at 128 rows, 2 threads: 1 MiB 6.2 / 24.6 ms, 2 MiB 5.0 / 20.0, 4 MiB 5.1 / 20.5). */
#define PANEL_BYTES ((size_t)1 << 21)
#define ALIGN64(x) (((x) + 63) / 64 * 64)

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

/* Bytes of the per-block tables params_fill writes for these inputs (0 when it borrows all). */
static size_t params_bytes(const cnlp_nbits *q, const tensor *scales, const tensor *zp) {
    size_t blocks = (size_t)(q->n * q->k_blocks), n = 0;
    if (scales->dtype != ONYX_FLOAT) n += ALIGN64(blocks * sizeof(float));
    if (zp && zp->dtype == ONYX_UINT8) n += ALIGN64(blocks);
    else if (zp && zp->dtype != ONYX_FLOAT) n += ALIGN64(blocks * sizeof(float));
    return n;
}

/* The sizes of the weight view, its tables unset. */
static void geometry(const cnlp_nbits *q, nb_weight *w) {
    memset(w, 0, sizeof *w);
    w->k = q->k, w->n = q->n, w->bits = q->bits, w->block = q->block;
    w->k_blocks = q->k_blocks, w->blob = q->blob;
}

/* The weight view over B, with float scales and zero points borrowed where the inputs already
 * are float, else written into mem (params_bytes of it). */
static void params_fill(const cnlp_nbits *q, const tensor *b, const tensor *scales,
                        const tensor *zp, char *mem, nb_weight *w) {
    const int64_t blocks = q->n * q->k_blocks;
    geometry(q, w);
    w->b = b->data;
    if (scales->dtype == ONYX_FLOAT) {
        w->scale = scales->data;
    } else {
        float *s = (float *)mem;
        cnlp_load(scales->data, scales->dtype, 0, s, blocks);
        w->scale = s;
        mem += ALIGN64((size_t)blocks * sizeof(float));
    }
    if (zp && zp->dtype == ONYX_UINT8) {
        const int bits = (int)q->bits, per = 8 / bits, mask = (1 << bits) - 1;
        uint8_t *z = (uint8_t *)mem;
        for (int64_t n = 0; n < q->n; n++)
            for (int64_t kb = 0; kb < q->k_blocks; kb++) {
                uint8_t byte = ((const uint8_t *)zp->data)[n * q->zp_bytes + kb / per];
                z[n * q->k_blocks + kb] = (uint8_t)((byte >> ((kb % per) * bits)) & mask);
            }
        w->zp_u8 = z;
    } else if (zp && zp->dtype == ONYX_FLOAT) {
        w->zp_f = zp->data;
    } else if (zp) {
        float *z = (float *)mem;
        cnlp_load(zp->data, zp->dtype, 0, z, blocks);
        w->zp_f = z;
    }
}

typedef struct nb_params {
    nb_weight w;
    char *mem; /* owned tables, or NULL */
} nb_params;

typedef struct nb_src {
    cnlp_nbits q;
    const tensor *b, *scales, *zp;
} nb_src;

typedef struct nb_key {
    char tag[8];
    const void *b, *scales, *zp;
    int64_t k, n, bits, block;
    int32_t st, zt;
} nb_key;

static onyx_status params_make(void *ctx, void **obj) {
    const nb_src *s = ctx;
    nb_params *p = calloc(1, sizeof *p);
    size_t bytes = params_bytes(&s->q, s->scales, s->zp);
    if (p && bytes) p->mem = aligned_alloc(64, bytes);
    if (!p || (bytes && !p->mem)) {
        free(p);
        return onyx_oom("MatMulNBits block tables");
    }
    params_fill(&s->q, s->b, s->scales, s->zp, p->mem, &p->w);
    *obj = p;
    return ONYX_OK;
}

static void params_free(void *obj) {
    nb_params *p = obj;
    if (p) free(p->mem);
    free(p);
}

/* The weight repacked for the int8 kernels, made through temporary block tables. */
static onyx_status pack_make(void *ctx, void **obj) {
    const nb_src *s = ctx;
    size_t bytes = params_bytes(&s->q, s->scales, s->zp);
    char *mem = bytes ? aligned_alloc(64, bytes) : NULL;
    if (bytes && !mem) return onyx_oom("MatMulNBits block tables");
    nb_weight w;
    params_fill(&s->q, s->b, s->scales, s->zp, mem, &w);
    nbi8_pack *p = NULL;
    onyx_status st = nbi8_pack_make(&w, &p);
    free(mem);
    *obj = p;
    return st;
}

static void pack_free(void *obj) { nbi8_free(obj); }

/* B as the model stores it, from the pack (core/kernel.h kernel_shared_weight): the model's copy
 * of B may then be handed back. */
static onyx_status pack_unpack(const void *obj, void *dst) {
    nbi8_unpack_codes(obj, dst);
    return ONYX_OK;
}

onyx_status nbits_form_prepare(const kernel_prep *p, const cnlp_nbits *q, int64_t level, int b_in,
                               int s_in, int z_in, nbits_form *out) {
    memset(out, 0, sizeof *out);
    const tensor *b = p->n_in > b_in ? p->in_value[b_in] : NULL,
                 *sc = p->n_in > s_in ? p->in_value[s_in] : NULL;
    const tensor *zp = p->n_in > z_in ? p->in_value[z_in] : NULL;
    bool zp_given = p->n_in > z_in && p->in_type[z_in];
    if (b && sc && (zp || !zp_given)) {
        TRY(check_inputs(q, b, sc, zp));
        nb_key key;
        memset(&key, 0, sizeof key);
        memcpy(key.tag, "cnlpnb2", 8);
        key.b = b->data, key.scales = sc->data, key.zp = zp ? zp->data : NULL;
        key.k = q->k, key.n = q->n, key.bits = q->bits, key.block = q->block;
        key.st = sc->dtype, key.zt = zp ? zp->dtype : 0;
        nb_src src = {*q, b, sc, zp};
        void *obj = NULL;
        const nbi8_isa isa = level == 4 ? nbi8_choose() : NBI8_NONE;
        const bool int8 = isa != NBI8_NONE && q->bits == 4 && q->block % 8 == 0 &&
                          q->block <= 8192 && (!zp || zp->dtype == ONYX_UINT8);
        if (int8) {
            memcpy(key.tag, "cnlpnb8", 8);
            TRY(kernel_shared_weight(p, b_in, &key, sizeof key, pack_make, pack_free, pack_unpack,
                                     &src, &obj));
            out->pack = obj, out->isa = isa;
            return ONYX_OK;
        }
        TRY(kernel_shared(p, &key, sizeof key, params_make, params_free, &src, &obj));
        out->w = &((const nb_params *)obj)->w;
    }
    /* the block tables and the per-run path read B as stored */
    return b ? kernel_weight_bytes(p, b_in) : ONYX_OK;
}

typedef struct nb_state {
    nbits_form form; /* shared, borrowed: level 4 runs as an int8 GEMM on form.pack; neither
                        set: the tables are made per run */
    int64_t level;
} nb_state;

onyx_status cpu_cnlp_matmul_nbits_prepare(const kernel_prep *p, void **state) {
    cnlp_nbits q;
    TRY(cnlp_nbits_of(p->node, &q));
    nb_state *st = calloc(1, sizeof *st);
    if (!st) return onyx_oom("MatMulNBits state");
    st->level = attr_int(p->node, "accuracy_level", 0);
    onyx_status s = nbits_form_prepare(p, &q, st->level, 1, 2, 3, &st->form);
    if (s != ONYX_OK) {
        free(st);
        return s;
    }
    *state = st;
    return ONYX_OK;
}

void cpu_cnlp_matmul_nbits_release(void *state) { free(state); }

/* ---- a few rows: dot products over columns */

typedef struct dot_job {
    const nb_weight *w;
    int64_t m;
    const float *ad;       /* float path: deinterleaved rows */
    const int8_t *q;       /* int8 path: quantized rows, their scales and sums */
    const float *qscale;
    const int32_t *qsum;
    float *y;
} dot_job;

static void dot_cols(void *ctx, int64_t b, int64_t e) {
    const dot_job *j = ctx;
    const nb_weight *w = j->w;
    const int64_t kp = w->k_blocks * w->block;
    for (int64_t r0 = 0; r0 < j->m; r0 += NB_ROWS) {
        int64_t rows = j->m - r0 < NB_ROWS ? j->m - r0 : NB_ROWS;
        for (int64_t n = b; n < e; n++) {
            float *y = j->y + r0 * w->n + n;
            if (j->q)
                nb_dot_i8(w, n, j->q + r0 * kp, j->qscale + r0 * w->k_blocks,
                          j->qsum + r0 * w->k_blocks, rows, y, w->n);
            else
                nb_dot_f32(w, n, j->ad + r0 * kp, rows, y, w->n);
        }
    }
}

/* ---- many rows: panels of dequantized columns through sgemm */

/* A panel's product runs on its slot's thread alone where every thread has panels of its own,
 * of at least PANEL_ALONE_COLS columns, and rows up to PANEL_ALONE_ROWS: there sgemm's split of
 * one panel over the threads costs more than it gains (Llama-sized products, 2 threads: 128 rows
 * 5.0 -> 4.1-4.4 ms and 20.0 -> 17.0-17.5, 256 rows 9.7 -> 7.9 and 39.0 -> 31.5). With more rows
 * the split is as fast or 8 % faster; with narrower panels (K = 8192: 64 columns) each product
 * packs A for too few columns; with one panel the other threads would idle. */
#define PANEL_ALONE_ROWS 256
#define PANEL_ALONE_COLS 128

typedef struct panel_job {
    const nb_weight *w;
    const float *a;
    float *y;
    int64_t m, cols, panels, slots;
    bool alone;     /* each product on its slot's thread */
    float *scratch; /* per slot, one panel [cols, k] */
} panel_job;

typedef struct panel_product {
    const panel_job *j;
    const float *panel;
    int64_t n0, cnt;
} panel_product;

static onyx_status multiply_panel(void *ctx) {
    const panel_product *p = ctx;
    const panel_job *j = p->j;
    const int64_t k = j->w->k;
    cpu_sgemm(false, true, j->m, p->cnt, k, 1, j->a, k, p->panel, k, 0, j->y + p->n0, j->w->n);
    return ONYX_OK;
}

/* Slot s takes panels s, s + slots, ...: dequantizes each into its own scratch and multiplies it
 * at once, while it is in cache; the slots run side by side, with no step between them. */
static void panel_slots(void *ctx, int64_t s0, int64_t s1) {
    const panel_job *j = ctx;
    const nb_weight *w = j->w;
    for (int64_t s = s0; s < s1; s++) {
        float *panel = j->scratch + s * j->cols * w->k;
        for (int64_t p = s; p < j->panels; p += j->slots) {
            int64_t n0 = p * j->cols, cnt = w->n - n0 < j->cols ? w->n - n0 : j->cols;
            for (int64_t i = 0; i < cnt; i++) nb_dequant_column(w, n0 + i, panel + i * w->k);
            panel_product pp = {j, panel, n0, cnt};
            /* a one-thread arena that could not be made has run nothing: then as it comes */
            if (!j->alone || parallel_alone(multiply_panel, &pp) != ONYX_OK) multiply_panel(&pp);
        }
    }
}

/* Columns of a panel: PANEL_BYTES of them, but never fewer than PANEL_ALONE_COLS, so that a long
 * K (8192) still multiplies its panels alone (Llama's 8192 x 2048 at 128 rows: 20.3-20.9 ->
 * 18.1-19.4 ms; at 512 rows no slower). */
static int64_t panel_cols(const nb_weight *w) {
    int64_t c = (int64_t)(PANEL_BYTES / ((size_t)w->k * sizeof(float))) / 16 * 16;
    if (c < PANEL_ALONE_COLS) c = PANEL_ALONE_COLS;
    return c < w->n ? c : w->n;
}

static void add_bias(const tensor *bias, int64_t m, int64_t n, float *y) {
    if (!bias) return;
    float bb[256];
    for (int64_t n0 = 0; n0 < n; n0 += 256) {
        int64_t cnt = n - n0 < 256 ? n - n0 : 256;
        cnlp_load(bias->data, bias->dtype, n0, bb, cnt);
        for (int64_t r = 0; r < m; r++) {
            float *yr = y + r * n + n0;
            CPU_SIMD for (int64_t i = 0; i < cnt; i++) yr[i] += bb[i];
        }
    }
}

/* ---- accuracy_level 4 on the repacked weight: every row count */

static onyx_status run_int8(const kernel_call *c, const nb_state *st, const tensor *A,
                            const tensor *bias, tensor *Y, int64_t m) {
    const nbi8_pack *pack = st->form.pack;
    const bool fa = A->dtype == ONYX_FLOAT;
    size_t abytes = fa ? 0 : ALIGN64((size_t)A->numel * sizeof(float));
    size_t ybytes = fa ? 0 : ALIGN64((size_t)Y->numel * sizeof(float));
    char *buf = NULL;
    TRY(kernel_scratch(c, abytes + ybytes + nbi8_scratch_bytes(pack, m) + 64,
                       (void **)&buf));
    const float *a = A->data;
    float *y = Y->data;
    if (!fa) {
        cnlp_load(A->data, A->dtype, 0, (float *)buf, A->numel);
        a = (const float *)buf;
        y = (float *)(buf + abytes);
    }
    if (m > 0) {
        nbi8_matmul(pack, st->form.isa, a, m, y, buf + abytes + ybytes);
        add_bias(bias, m, pack->n, y);
    }
    if (!fa) cnlp_store(Y->data, Y->dtype, 0, y, Y->numel);
    return ONYX_OK;
}

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
    const int64_t m = A->numel / q.k, kp = q.k_blocks * q.block;
    if (!cpu_blas_dims_ok(m, q.n, q.k))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "matrix sizes exceed BLAS's int range");
    if (st->form.pack) return run_int8(c, st, A, bias, Y, m);
    if (!st->form.w) TRY(check_inputs(&q, B, S, Z));
    const bool fa = A->dtype == ONYX_FLOAT, dots = m <= DOT_MAX_ROWS;
    nb_weight wv;
    if (st->form.w) wv = *st->form.w;
    else geometry(&q, &wv); /* the tables come below, in scratch */
    const bool i8 = dots && st->level == 4 && nb_i8_available(&wv);

    /* one scratch region: tables, A and Y as float, then the path's own buffers */
    size_t tbytes = st->form.w ? 0 : params_bytes(&q, S, Z);
    size_t abytes = fa ? 0 : ALIGN64((size_t)A->numel * sizeof(float));
    size_t ybytes = fa ? 0 : ALIGN64((size_t)Y->numel * sizeof(float));
    size_t pbytes;
    const int64_t cols = panel_cols(&wv), panels = (q.n + cols - 1) / cols;
    const int64_t slots = parallel_threads() < panels ? parallel_threads() : panels;
    if (!dots) pbytes = (size_t)(slots * cols) * (size_t)q.k * sizeof(float);
    else if (i8)
        pbytes = ALIGN64((size_t)(m * kp)) + ALIGN64((size_t)(m * q.k_blocks) * sizeof(float)) +
                 ALIGN64((size_t)(m * q.k_blocks) * sizeof(int32_t));
    else pbytes = (size_t)(m * kp) * sizeof(float);
    char *buf = NULL;
    TRY(kernel_scratch(c, tbytes + abytes + ybytes + pbytes + 64, (void **)&buf));
    char *tables = buf, *abuf = tables + tbytes, *ybuf = abuf + abytes, *pbuf = ybuf + ybytes;
    if (!st->form.w) params_fill(&q, B, S, Z, tables, &wv);

    const float *a = A->data;
    float *y = Y->data;
    if (!fa) {
        cnlp_load(A->data, A->dtype, 0, (float *)abuf, A->numel);
        a = (const float *)abuf;
        y = (float *)ybuf;
    }
    if (m > 0) {
        if (dots) {
            dot_job j = {&wv, m, NULL, NULL, NULL, NULL, y};
            if (i8) {
                int8_t *qa = (int8_t *)pbuf;
                float *qs = (float *)(pbuf + ALIGN64((size_t)(m * kp)));
                int32_t *qsum = (int32_t *)((char *)qs + ALIGN64((size_t)(m * q.k_blocks) * 4));
                nb_quantize_rows(&wv, a, m, qa, qs, qsum);
                j.q = qa, j.qscale = qs, j.qsum = qsum;
            } else {
                nb_deinterleave(&wv, a, m, (float *)pbuf);
                j.ad = (const float *)pbuf;
            }
            parallel_for(q.n, cnlp_grain(q.k * m, 1 << 15), dot_cols, &j);
        } else {
            bool alone = m <= PANEL_ALONE_ROWS && cols >= PANEL_ALONE_COLS &&
                         slots == parallel_threads();
            panel_job pj = {&wv, a, y, m, cols, panels, slots, alone, (float *)pbuf};
            parallel_for(slots, 1, panel_slots, &pj);
        }
        add_bias(bias, m, q.n, y);
    }
    if (!fa) cnlp_store(Y->data, Y->dtype, 0, y, Y->numel);
    return ONYX_OK;
}

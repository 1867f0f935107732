/* CPU kernels of com.microsoft Attention, MultiHeadAttention and GroupQueryAttention over one
 * float core, their geometry the plan's (kernel_attention, core/op_params.h): per (batch, head,
 * block of query rows) Q*K^T through BLAS with the scale in alpha (under GQA's causal mask over
 * the keys up to the block's last row only), onnxruntime's masks (padding adds mask_filter_value,
 * causal keys are -inf) or GQA's per-batch causal window (after GQA's optional rotary embedding of
 * Q and K), a softmax per row, then P*V straight into the output.
 * Q/K/V are strided views (packed projections, BSNH inputs, BNSH caches), so nothing is
 * transposed; K/V are copied only where a past cache is concatenated or a present cache is asked
 * for, and not at all where GQA's caller binds one buffer as both past and present (appended in
 * place). Working memory is the run's scratch, so concurrent runs share nothing. */
#include <math.h>

#include "core/parallel.h"
#include "kernels_cpu/common/blas.h"
#include "kernels_cpu/common/vmath.h"
#include "kernels_cpu/contrib_nlp/cnlp_cpu.h"
#include "kernels_cpu/contrib_nlp/kv_quant.h"
#include "kernels_cpu/cpu_kernels.h"
#include "ops/contrib_nlp/contrib_nlp.h"

#define ROWB 64

/* A [B, heads, rows, D] view: element (b, h, r, d) at base + b*s[0] + h*s[1] + r*s[2] + d. */
typedef struct view {
    const float *p;
    int64_t s[3];
} view;

typedef struct core {
    int64_t B, S, T, Nq, Nkv, Dk, Dv, P;
    view q, k, v;
    float *y;
    int64_t ys[3];
    float scale;
    /* Attention / MultiHeadAttention: additive masks as onnxruntime builds them */
    geom_att_mask mask;
    const int32_t *mdata;
    float filter;
    bool causal;       /* keys j > P + i are out (-inf), as onnxruntime 1.30 */
    const float *bias; /* attention_bias [B or 1, N or 1, S, keys], or NULL */
    int64_t bs[3];     /* its batch and head strides (0: broadcast), and its rows' */
    /* GroupQueryAttention: softmax over a window, zeros elsewhere */
    bool gqa, first_prompt, gqa_causal;
    const int32_t *seqlens;
    int64_t window;
    float softcap;
    bool smooth;       /* softmax with one more logit, head_sink's or 0 (smooth_softmax) */
    const float *sink; /* head_sink [Nq], or NULL */
    float *qk;         /* output_qk [B, Nq, S, qk_len], or NULL */
    int qk_mode;       /* 1: the scores (after softcap and bias), 2: the probabilities */
    int64_t qk_len;    /* total_sequence_length */
    int64_t nblk, tasks, nslots;
    float *slots; /* nslots blocks of ROWB * T scores */
} core;

/* Additive mask of row (b, i) over keys [0, T) into row (which holds the scaled scores). */
static void add_mask(const core *x, int64_t b, int64_t h, int64_t i, float *row) {
    const int64_t T = x->T;
    if (x->bias) {
        const float *ab = x->bias + b * x->bs[0] + h * x->bs[1] + i * x->bs[2];
        CPU_SIMD for (int64_t j = 0; j < T; j++) row[j] += ab[j];
    }
    const float f = x->filter;
    switch (x->mask) {
    case GEOM_ATT_MASK_NONE:
    case GEOM_ATT_MASK_UNKNOWN: break; /* a plan's, never a run's (op_params_known) */
    case GEOM_ATT_MASK_END:
    case GEOM_ATT_MASK_END_START: {
        int64_t end = x->mdata[b],
                start = x->mask == GEOM_ATT_MASK_END_START ? x->mdata[b + x->B] : 0;
        if (end < 0) end = 0;
        for (int64_t j = end; j < T; j++) row[j] += f;
        if (start > T) start = T;
        for (int64_t j = 0; j < start && j < end; j++) row[j] += f;
        break;
    }
    case GEOM_ATT_MASK_2D: {
        const int32_t *m = x->mdata + b * T;
        for (int64_t j = 0; j < T; j++)
            if (m[j] <= 0) row[j] += f;
        break;
    }
    case GEOM_ATT_MASK_3D: {
        const int32_t *m = x->mdata + (b * x->S + i) * T;
        for (int64_t j = 0; j < T; j++)
            if (m[j] <= 0) row[j] += f;
        break;
    }
    }
    if (x->causal)
        for (int64_t j = x->P + i + 1; j < T; j++) row[j] = -INFINITY;
}

static void softmax(const cpu_vmath *vm, float *row, int64_t n) {
    if (n > 0) cpu_vm_softmax_row(vm, row, row, n);
}

/* GQA's output_qk row (b, h, i): the window [lo, hi) of row, zeros elsewhere (as onnxruntime) */
static void write_qk(const core *x, int64_t b, int64_t h, int64_t i, const float *row, int64_t lo,
                     int64_t hi) {
    float *o = x->qk + ((b * x->Nq + h) * x->S + i) * x->qk_len;
    memset(o, 0, (size_t)lo * sizeof *o);
    memcpy(o + lo, row + lo, (size_t)(hi - lo) * sizeof *o);
    memset(o + hi, 0, (size_t)(x->qk_len - hi) * sizeof *o);
}

/* c[m, n] = alpha a[m, k] b^T (tb) or a b; one row through gemv, as OpenBLAS's gemm packs the
 * whole of b even for a single row (a decoding step's keys) */
static void mm(bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
               const float *b, int64_t ldb, float *c, int64_t ldc) {
    if (m == 1) {
        memset(c, 0, (size_t)n * sizeof *c); /* and beta 1: some gemv let stale NaN through */
        cpu_sgemv(!tb, tb ? n : k, tb ? k : n, alpha, b, ldb, a, 1, c);
        return;
    }
    cpu_sgemm(false, tb, m, n, k, alpha, a, lda, b, ldb, 0, c, ldc);
}

static void core_slots(void *ctx, int64_t s0, int64_t s1) {
    const core *x = ctx;
    const cpu_vmath *vm = cpu_vmath_get();
    const int64_t group = x->Nq / x->Nkv;
    for (int64_t s = s0; s < s1; s++) {
        float *sc = x->slots + s * ROWB * x->T;
        for (int64_t t = s; t < x->tasks; t += x->nslots) {
            /* every other head takes its blocks last first: a causal block's cost grows with its
             * index, and the slots take tasks in turn, so each slot gets a fair mix of both */
            int64_t blk = t % x->nblk, bh = t / x->nblk, b = bh / x->Nq, h = bh % x->Nq,
                    kh = h / group;
            if (x->gqa_causal && bh % 2) blk = x->nblk - 1 - blk;
            int64_t i0 = blk * ROWB, rb = x->S - i0;
            if (rb > ROWB) rb = ROWB;
            /* keys this block reads: all T, or GQA's valid length for the batch, and under
             * GQA's causal mask only those up to its last row's (half a prompt's products) */
            int64_t nc = x->T, total = 0;
            if (x->gqa) {
                total = (int64_t)x->seqlens[b] + 1;
                nc = total;
                int64_t last = x->first_prompt ? i0 + rb : total - x->S + i0 + rb;
                if (x->gqa_causal && last < nc) nc = last > 0 ? last : 0;
            }
            const float *q = x->q.p + b * x->q.s[0] + h * x->q.s[1] + i0 * x->q.s[2];
            const float *k = x->k.p + b * x->k.s[0] + kh * x->k.s[1];
            const float *v = x->v.p + b * x->v.s[0] + kh * x->v.s[1];
            float *y = x->y + b * x->ys[0] + h * x->ys[1] + i0 * x->ys[2];
            if (nc > 0 && x->Dk > 0)
                mm(true, rb, nc, x->Dk, x->scale, q, x->q.s[2], k, x->k.s[2], sc, nc);
            else
                memset(sc, 0, (size_t)(rb * nc) * sizeof *sc);
            for (int64_t r = 0; r < rb; r++) {
                float *row = sc + r * nc;
                int64_t i = i0 + r;
                if (!x->gqa) {
                    add_mask(x, b, h, i, row);
                    softmax(vm, row, nc);
                    continue;
                }
                int64_t hi = total, lo = 0;
                if (x->gqa_causal) {
                    hi = x->first_prompt ? i + 1 : total - x->S + i + 1;
                    if (hi > total) hi = total;
                    if (x->window > 0 && hi > x->window) lo = hi - x->window;
                }
                if (hi < lo) hi = lo;
                float *w = row + lo;
                if (x->softcap > 0)
                    for (int64_t j = 0; j < hi - lo; j++)
                        w[j] = x->softcap * tanhf(w[j] / x->softcap);
                if (x->bias) {
                    const float *ab = x->bias + b * x->bs[0] + h * x->bs[1] + i * x->bs[2] + lo;
                    CPU_SIMD for (int64_t j = 0; j < hi - lo; j++) w[j] += ab[j];
                }
                if (x->qk_mode == 1) write_qk(x, b, h, i, row, lo, hi);
                if (x->smooth)
                    cpu_vm_softmax_row_sink(vm, w, w, hi - lo, x->sink ? x->sink[h] : 0.0f);
                else
                    softmax(vm, w, hi - lo);
                if (x->qk_mode == 2) write_qk(x, b, h, i, row, lo, hi);
                for (int64_t j = 0; j < lo; j++) row[j] = 0;
                for (int64_t j = hi; j < nc; j++) row[j] = 0;
            }
            if (x->Dv == 0) continue;
            if (nc > 0)
                mm(false, rb, x->Dv, nc, 1, sc, nc, v, x->v.s[2], y, x->ys[2]);
            else
                for (int64_t r = 0; r < rb; r++) memset(y + r * x->ys[2], 0, (size_t)x->Dv * 4);
        }
    }
}

/* Scratch for the score slots, after `before` bytes the caller carves for itself. */
static onyx_status core_scratch(const kernel_call *c, core *x, size_t before, char **base) {
    x->nblk = (x->S + ROWB - 1) / ROWB;
    x->tasks = x->B * x->Nq * x->nblk;
    int64_t th = parallel_threads();
    x->nslots = x->tasks < th ? x->tasks : th;
    if (x->nslots < 1) x->nslots = 1;
    if (!cpu_blas_dims_ok(ROWB, x->T, x->Dk > x->Dv ? x->Dk : x->Dv))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "attention sizes exceed BLAS's int range");
    size_t slot = (size_t)ROWB * (size_t)(x->T > 0 ? x->T : 1) * sizeof(float);
    before = (before + 63) / 64 * 64;
    if ((size_t)x->nslots > (SIZE_MAX / 4 - before) / slot)
        return onyx_error(ONYX_ERR_NO_MEMORY, "attention scratch size overflows");
    TRY(kernel_scratch(c, before + (size_t)x->nslots * slot, (void **)base));
    x->slots = (float *)(*base + before);
    return ONYX_OK;
}

static void core_run(core *x) {
    if (x->tasks > 0) parallel_for(x->nslots, 1, core_slots, x);
}

/* dst [B, N, T, D] = past [B, N, P, D] (NULL: none) then the L rows of src for each (b, h);
 * rows of dst past P + L stay as they are. */
static void fill_cache(float *dst, int64_t T, const float *past, int64_t P, view src, int64_t L,
                       int64_t B, int64_t N, int64_t D) {
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < N; h++) {
            float *d = dst + (b * N + h) * T * D;
            if (past && P > 0) memcpy(d, past + (b * N + h) * P * D, (size_t)(P * D) * 4);
            for (int64_t r = 0; r < L; r++)
                memcpy(d + (P + r) * D, src.p + b * src.s[0] + h * src.s[1] + r * src.s[2],
                       (size_t)D * 4);
        }
}

static void mask_setup(core *x, const geom_attention *d, const tensor *m, const graph_node *n) {
    x->mask = m ? d->mask : GEOM_ATT_MASK_NONE;
    x->mdata = m ? m->data : NULL;
    x->filter = attr_float(n, "mask_filter_value", -10000.0f);
    x->causal = attr_int(n, "unidirectional", 0) != 0 && d->q_len > 1;
}

/* attention_bias [B or 1, N or 1, S, keys] (the schema checked its shape) */
static void bias_setup(core *x, const tensor *ab) {
    if (!ab) return;
    int64_t matrix = ab->dims[2] * ab->dims[3];
    x->bias = ab->data;
    x->bs[0] = ab->dims[0] == 1 ? 0 : ab->dims[1] * matrix;
    x->bs[1] = ab->dims[1] == 1 ? 0 : matrix;
    x->bs[2] = ab->dims[3];
}

/* ---------------------------------------------------------------- Attention */

onyx_status cpu_cnlp_attention(const kernel_call *c) {
    const tensor *X = kernel_input(c, 0);
    const geom_attention *g;
    TRY(kernel_attention(c->params, GEOM_ATT_MS, X ? X->numel : 0, &g));
    const geom_attention d = *g;
    const tensor *W = kernel_input(c, 1), *Bi = kernel_input(c, 2),
                 *M = kernel_input(c, 3), *Past = kernel_input(c, 4), *AB = kernel_input(c, 5);
    tensor *Y = kernel_output(c, 0), *Pres = kernel_output(c, 1);
    const int64_t B = d.batch, S = d.q_len, N = d.q_heads, Dk = d.head, Dv = d.v_head,
                  P = d.past_len, T = d.total_len, In = d.in_hidden;
    const int64_t Hq = N * Dk, Wn = 2 * Hq + N * Dv, rows = B * S;
    core x = {.B = B,
              .S = S,
              .T = T,
              .Nq = N,
              .Nkv = N,
              .Dk = Dk,
              .Dv = Dv,
              .P = P,
              .y = Y->data,
              .scale = cnlp_att_scale(c->node, Dk)};
    x.ys[0] = S * N * Dv, x.ys[1] = Dv, x.ys[2] = N * Dv;
    if (Pres && Dk != Dv)
        return onyx_error(ONYX_ERR_SHAPE, "present needs equal Q/K and V head sizes");
    mask_setup(&x, &d, M, c->node);
    bias_setup(&x, AB);
    bool cache = Past || Pres;
    size_t qkv_bytes = (size_t)(rows * Wn) * 4,
           cache_bytes = cache && !Pres ? (size_t)(2 * B * N * T * Dk) * 4 : 0;
    char *buf;
    TRY(core_scratch(c, &x, ((qkv_bytes + 63) / 64 * 64) + cache_bytes, &buf));
    float *qkv = (float *)buf;
    if (!cpu_blas_dims_ok(rows, Wn, In))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "attention sizes exceed BLAS's int range");
    if (rows > 0 && Wn > 0) {
        if (In > 0)
            cpu_sgemm(false, false, rows, Wn, In, 1, X->data, In, W->data, Wn, 0, qkv, Wn);
        else
            memset(qkv, 0, qkv_bytes);
        if (Bi) {
            const float *bb = Bi->data;
            for (int64_t r = 0; r < rows; r++) {
                float *q = qkv + r * Wn;
                CPU_SIMD for (int64_t j = 0; j < Wn; j++) q[j] += bb[j];
            }
        }
    }
    view vq = {qkv, {S * Wn, Dk, Wn}}, vk = {qkv + Hq, {S * Wn, Dk, Wn}},
         vv = {qkv + 2 * Hq, {S * Wn, Dv, Wn}};
    x.q = vq;
    if (cache) {
        float *kc = Pres ? Pres->data : (float *)(buf + (qkv_bytes + 63) / 64 * 64);
        float *vc = kc + B * N * T * Dk;
        const float *pk = Past ? Past->data : NULL, *pv = Past ? pk + B * N * P * Dk : NULL;
        fill_cache(kc, T, pk, P, vk, S, B, N, Dk);
        fill_cache(vc, T, pv, P, vv, S, B, N, Dv);
        x.k = (view){kc, {N * T * Dk, T * Dk, Dk}};
        x.v = (view){vc, {N * T * Dv, T * Dv, Dv}};
    } else {
        x.k = vk;
        x.v = vv;
    }
    core_run(&x);
    return ONYX_OK;
}

/* ---------------------------------------------------------------- MultiHeadAttention */

onyx_status cpu_cnlp_mha(const kernel_call *c) {
    const tensor *Q = kernel_input(c, 0);
    const geom_attention *g;
    TRY(kernel_attention(c->params, GEOM_ATT_MHA, Q ? Q->numel : 0, &g));
    const geom_attention d = *g;
    const tensor *K = kernel_input(c, 1), *V = kernel_input(c, 2),
                 *Bi = kernel_input(c, 3), *M = kernel_input(c, 4), *AB = kernel_input(c, 5),
                 *PK = kernel_input(c, 6), *PV = kernel_input(c, 7);
    tensor *Y = kernel_output(c, 0), *OK_ = kernel_output(c, 1), *OV = kernel_output(c, 2);
    if (kernel_output(c, 3)) return onyx_error(ONYX_ERR_UNSUPPORTED, "output qk is not supported");
    const int64_t B = d.batch, S = d.q_len, L = d.kv_len, N = d.q_heads, Dk = d.head, Dv = d.v_head,
                  P = d.past_len, T = d.total_len;
    core x = {.B = B,
              .S = S,
              .T = T,
              .Nq = N,
              .Nkv = N,
              .Dk = Dk,
              .Dv = Dv,
              .P = P,
              .y = Y->data,
              .scale = cnlp_att_scale(c->node, Dk)};
    x.ys[0] = S * N * Dv, x.ys[1] = Dv, x.ys[2] = N * Dv;
    mask_setup(&x, &d, M, c->node);
    bias_setup(&x, AB);
    /* views of the inputs as given */
    view vq = {Q->data, {S * N * Dk, Dk, N * Dk}}, vk, vv;
    if (d.kv_bnsh) {
        vk = (view){K->data, {N * L * Dk, L * Dk, Dk}};
        vv = (view){V->data, {N * L * Dv, L * Dv, Dv}};
    } else {
        vk = (view){K->data, {L * N * Dk, Dk, N * Dk}};
        vv = (view){V->data, {L * N * Dv, Dv, N * Dv}};
    }
    /* scratch: biased copies of Q, K, V (same layouts), then K/V caches when built here; K and
     * V given as BNSH are already projected, so onnxruntime adds the bias to Q only */
    size_t nq = (size_t)(B * S * N * Dk), nk = (size_t)(B * L * N * Dk),
           nv = (size_t)(B * L * N * Dv);
    int nbias = Bi ? (d.kv_bnsh ? 1 : 3) : 0;
    size_t biased = Bi ? (nq + (nbias == 3 ? nk + nv : 0)) * 4 : 0;
    bool cache = PK || OK_ || OV;
    size_t cbytes = cache ? (size_t)(B * N * T * (Dk + Dv)) * 4 : 0;
    char *buf;
    TRY(core_scratch(c, &x, biased + cbytes, &buf));
    if (Bi) {
        float *fq = (float *)buf, *fk = fq + nq, *fv = fk + nk;
        const float *bb = Bi->data;
        const float *src[3] = {Q->data, K->data, V->data};
        float *dst[3] = {fq, fk, fv};
        const float *bias3[3] = {bb, bb + N * Dk, bb + 2 * N * Dk};
        size_t cnt[3] = {nq, nk, nv};
        int64_t width[3] = {N * Dk, N * Dk, N * Dv};
        for (int a = 0; a < nbias; a++)
            for (size_t e = 0; e < cnt[a]; e++)
                dst[a][e] = src[a][e] + bias3[a][(int64_t)e % width[a]];
        vq.p = fq;
        if (nbias == 3) vk.p = fk, vv.p = fv;
    }
    x.q = vq;
    if (cache) {
        float *kc = OK_ ? OK_->data : (float *)(buf + biased);
        float *vc = OV ? OV->data : (float *)(buf + biased) + B * N * T * Dk;
        fill_cache(kc, T, PK ? PK->data : NULL, P, vk, L, B, N, Dk);
        fill_cache(vc, T, PV ? PV->data : NULL, P, vv, L, B, N, Dv);
        x.k = (view){kc, {N * T * Dk, T * Dk, Dk}};
        x.v = (view){vc, {N * T * Dv, T * Dv, Dv}};
    } else {
        x.k = vk;
        x.v = vv;
    }
    core_run(&x);
    return ONYX_OK;
}

/* ---------------------------------------------------------------- GroupQueryAttention */

/* do_rotary: Q and the new K rotated into qr [B, S, Nq, D] and kr [B, S, Nkv, D], which become
 * their views. Positions as onnxruntime: the first prompt counts from position_ids[0] (else 0),
 * later tokens from each batch's past length (or position_ids). */
static onyx_status gqa_rotary(const kernel_call *c, const geom_attention *d, bool first,
                              const int32_t *seqlens, view *q, view *k, float *qr, float *kr) {
    const tensor *cs = kernel_input(c, 7), *sn = kernel_input(c, 8), *pos = kernel_input(c, 9);
    const int64_t B = d->batch, S = d->q_len, Nq = d->q_heads, Nkv = d->kv_heads, D = d->head,
                  half = d->rot / 2;
    bool inter = attr_int(c->node, "rotary_interleaved", 0) != 0;
    const int64_t *pv = pos ? pos->data : NULL;
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < S; s++) {
            int64_t p = first ? (pv ? pv[0] : 0) + s
                        : pv  ? pv[b * S + s]
                              : (int64_t)seqlens[b] + 1 - S + s;
            if (p < 0 || p >= d->max_pos)
                return onyx_error(ONYX_ERR_RUNTIME,
                                  "position %lld is outside the %lld rows of "
                                  "the cos/sin caches",
                                  (long long)p, (long long)d->max_pos);
            const float *co = (const float *)cs->data + p * half;
            const float *si = (const float *)sn->data + p * half;
            for (int64_t h = 0; h < Nq; h++)
                cnlp_rotate(q->p + b * q->s[0] + h * q->s[1] + s * q->s[2],
                            qr + ((b * S + s) * Nq + h) * D, co, si, d->rot, D, inter);
            for (int64_t h = 0; h < Nkv; h++)
                cnlp_rotate(k->p + b * k->s[0] + h * k->s[1] + s * k->s[2],
                            kr + ((b * S + s) * Nkv + h) * D, co, si, d->rot, D, inter);
        }
    *q = (view){qr, {S * Nq * D, D, Nq * D}};
    *k = (view){kr, {S * Nkv * D, D, Nkv * D}};
    return ONYX_OK;
}

/* sliding_window_cache=1 (onnxruntime's contract): rows [0, L) of the window-sized buffers hold
 * the L most recent positions in order, L a function of the tokens so far T alone: all of them
 * while they fit the capacity C, then G = C - W + 1 positions evicted at once, so
 * min(T, W) <= L <= min(T, C). */
static int64_t window_resident(int64_t T, int64_t C, int64_t W) {
    if (T <= C) return T;
    int64_t G = C - W + 1;
    return T - G * ((T - C + G - 1) / G);
}

/* The windowed cache: per batch, the past's resident rows then the new ones form the keys this
 * step reads (positions T - S - Lp .. T - 1), attention runs over them with the window counted
 * from their end, and the last L(T) of them become the present buffers' first rows. The past is
 * read whole into scratch before the present is written, so a present bound to the past's own
 * buffer (KF_CACHE_IN_PLACE) comes out right too. */
static onyx_status gqa_windowed(const kernel_call *c, core *x, const geom_attention *d,
                                const int32_t *seqlens, bool first, view vk, view vv,
                                char *buf) {
    const tensor *PK = kernel_input(c, 3), *PV = kernel_input(c, 4);
    tensor *OK_ = kernel_output(c, 1), *OV = kernel_output(c, 2);
    const int64_t B = d->batch, S = d->q_len, Nkv = d->kv_heads, D = d->head, C = d->past_len,
                  W = d->window_cache, V = x->T;
    int32_t *rows = (int32_t *)buf; /* per batch: the keys read, minus one (as seqlens_k) */
    float *kc = (float *)(buf + ((size_t)B * 4 + 63) / 64 * 64);
    float *vc = kc + B * Nkv * V * D;
    for (int64_t b = 0; b < B; b++) {
        int64_t T = (int64_t)seqlens[b] + 1, past = first ? 0 : T - S,
                lp = window_resident(past, C, W), end = first ? T : lp + S;
        rows[b] = (int32_t)(end - 1);
        for (int64_t h = 0; h < Nkv; h++) {
            float *kd = kc + (b * Nkv + h) * V * D, *vd = vc + (b * Nkv + h) * V * D;
            if (lp > 0) {
                memcpy(kd, (const float *)PK->data + (b * Nkv + h) * C * D, (size_t)(lp * D) * 4);
                memcpy(vd, (const float *)PV->data + (b * Nkv + h) * C * D, (size_t)(lp * D) * 4);
            }
            for (int64_t r = 0; r < S; r++) {
                memcpy(kd + (lp + r) * D, vk.p + b * vk.s[0] + h * vk.s[1] + r * vk.s[2],
                       (size_t)D * 4);
                memcpy(vd + (lp + r) * D, vv.p + b * vv.s[0] + h * vv.s[1] + r * vv.s[2],
                       (size_t)D * 4);
            }
        }
    }
    x->seqlens = rows;
    x->k = (view){kc, {Nkv * V * D, V * D, D}};
    x->v = (view){vc, {Nkv * V * D, V * D, D}};
    core_run(x);
    /* present: rows [0, L(T)) the most recent positions, the rest zero (unspecified there) */
    for (int64_t b = 0; b < B; b++) {
        int64_t T = (int64_t)seqlens[b] + 1, keep = window_resident(T, C, W),
                end = (int64_t)rows[b] + 1;
        for (int64_t h = 0; h < Nkv; h++) {
            const float *ks = kc + ((b * Nkv + h) * V + end - keep) * D,
                        *vs = vc + ((b * Nkv + h) * V + end - keep) * D;
            float *ko = OK_ ? (float *)OK_->data + (b * Nkv + h) * C * D : NULL,
                  *vo = OV ? (float *)OV->data + (b * Nkv + h) * C * D : NULL;
            if (ko) {
                memcpy(ko, ks, (size_t)(keep * D) * 4);
                memset(ko + keep * D, 0, (size_t)((C - keep) * D) * 4);
            }
            if (vo) {
                memcpy(vo, vs, (size_t)(keep * D) * 4);
                memset(vo + keep * D, 0, (size_t)((C - keep) * D) * 4);
            }
        }
    }
    return ONYX_OK;
}

/* Both caches of the present (keys and values), each dst [B, N, T, row]: per batch, the past's
 * valid rows (of past [B, N, P, row], NULL: none) then the S new rows of src after them. Where dst
 * is the past's own buffer (the caller binds one buffer as both, KF_CACHE_IN_PLACE; then P == T)
 * only the new rows are written: no copy of the cache per token. Otherwise the past's rows are
 * copied and the rows after the new ones zeroed. A row is D floats, or D codes of a quantized
 * cache (cnlp_kv_quant), the new rows quantized as written and then every valid row dequantized
 * into the float cache `flt` [B, N, T, D] the attention reads, as onnxruntime attends over the
 * codes. The (cache, b, h) blocks are shared among the threads: a prompt's present is megabytes a
 * layer, and the first one of a length writes pages new to the process, which cost microseconds
 * each (docs/BENCHMARKS.md, "LLM generation"). */
typedef struct {
    uint8_t *dst[2];
    const uint8_t *past[2];
    view src[2];
    const int32_t *seqlens;
    bool first;
    int bits;              /* 0: a float cache */
    bool per_channel;      /* the quantized cache's scales */
    const float *scale[2]; /* k_scale and v_scale */
    float *flt[2];
    int64_t P, B, N, S, T, D;
} gqa_appends;

static void gqa_append_blocks(void *ctx, int64_t i0, int64_t i1) {
    const gqa_appends *a = ctx;
    const int64_t D = a->D, T = a->T, S = a->S;
    const size_t row = a->bits ? cnlp_kv_row_bytes(a->bits, D) : (size_t)D * sizeof(float);
    for (int64_t i = i0; i < i1; i++) {
        int64_t w = i / (a->B * a->N), b = i / a->N % a->B, h = i % a->N;
        const uint8_t *past = a->past[w];
        const float *scale = a->bits ? a->scale[w] + (a->per_channel ? h * D : 0) : NULL;
        view src = a->src[w];
        int64_t at = a->first ? 0 : (int64_t)a->seqlens[b] + 1 - S; /* the past rows still valid */
        uint8_t *d = a->dst[w] + (size_t)((b * a->N + h) * T) * row;
        if (a->dst[w] != past) {
            if (past && at > 0)
                memcpy(d, past + (size_t)((b * a->N + h) * a->P) * row, (size_t)at * row);
            memset(d + (size_t)(at + S) * row, 0, (size_t)(T - at - S) * row);
        }
        for (int64_t r = 0; r < S; r++) {
            const float *x = src.p + b * src.s[0] + h * src.s[1] + r * src.s[2];
            uint8_t *o = d + (size_t)(at + r) * row;
            if (a->bits)
                cnlp_kv_quantize_row(a->bits, x, o, D, scale, a->per_channel);
            else
                memcpy(o, x, row);
        }
        if (!a->bits) continue;
        float *f = a->flt[w] + (b * a->N + h) * T * D;
        for (int64_t r = 0; r < at + S; r++)
            cnlp_kv_dequantize_row(a->bits, d + (size_t)r * row, f + r * D, D, scale,
                                   a->per_channel);
    }
}

static onyx_status gqa_float(const kernel_call *c) {
    const tensor *Q = kernel_input(c, 0), *K = kernel_input(c, 1), *V = kernel_input(c, 2),
                 *PK = kernel_input(c, 3), *PV = kernel_input(c, 4), *SL = kernel_input(c, 5),
                 *TS = kernel_input(c, 6);
    if (!SL || !TS || TS->numel != 1 || TS->dtype != ONYX_INT32)
        return onyx_error(ONYX_ERR_SHAPE, "total_sequence_length must be one int32");
    int64_t total = ((const int32_t *)TS->data)[0];
    /* the plan's geometry; the present buffers' length from this run's total */
    const geom_attention *g;
    TRY(kernel_attention(c->params, GEOM_ATT_GQA, Q ? Q->numel : 0, &g));
    geom_attention d;
    geom_msg m;
    GEOM_TRY(m, geom_attention_gqa_total(g, total, &d, &m));
    const bool windowed = d.window_cache > 0;
    tensor *Y = kernel_output(c, 0), *OK_ = kernel_output(c, 1), *OV = kernel_output(c, 2),
           *QK = kernel_output(c, 3);
    const tensor *AB = kernel_input(c, 10), *SK = kernel_input(c, 11), *KS = kernel_input(c, 12),
                 *VS = kernel_input(c, 13);
    cnlp_kv_quant kq;
    TRY(cnlp_gqa_kv_quant(c->node, &kq));
    if (kq.bits && (!OK_ || !OV || !KS || !VS))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "a quantized KV cache needs both present "
                          "outputs, k_scale and v_scale");
    const int64_t B = d.batch, S = d.q_len, Nq = d.q_heads, Nkv = d.kv_heads, D = d.head,
                  P = d.past_len, T = d.total_len;
    if (AB && (AB->rank != 4 || (AB->dims[0] != 1 && AB->dims[0] != B) ||
               (AB->dims[1] != 1 && AB->dims[1] != Nq) || AB->dims[2] != S ||
               AB->dims[3] != total))
        return onyx_error(ONYX_ERR_SHAPE, "attention_bias must be [%lld or 1, %lld or 1, %lld, "
                          "%lld]", (long long)B, (long long)Nq, (long long)S, (long long)total);
    /* the scales are read per kv head and column: checked against this run's tensors as
     * head_sink is, whatever dims the plan knew */
    for (int i = 0; kq.bits && i < 2; i++) {
        const tensor *sc = i ? VS : KS;
        int64_t want = kq.per_channel ? Nkv * D : 1;
        if (sc->dtype != ONYX_FLOAT || sc->numel != want)
            return onyx_error(ONYX_ERR_SHAPE, "%s must be float of %lld values", i ? "v_scale"
                              : "k_scale", (long long)want);
    }
    if (SK && SK->numel != Nq)
        return onyx_error(ONYX_ERR_SHAPE, "head_sink has %lld values, expected num_heads %lld",
                          (long long)SK->numel, (long long)Nq);
    if (SL->dtype != ONYX_INT32 || SL->numel != B) /* data of this run, one per row */
        return onyx_error(ONYX_ERR_SHAPE, "seqlens_k must be int32 of %lld values", (long long)B);
    const int32_t *seqlens = SL->data;
    bool first = S == total;
    /* a windowed cache holds at most its capacity T of the past, whatever their count; the
     * bias's and output_qk's rows are total_sequence_length long */
    int64_t room = windowed ? INT32_MAX : AB || QK ? total : T;
    for (int64_t b = 0; b < B; b++) {
        int64_t tb = (int64_t)seqlens[b] + 1, past = first ? 0 : tb - S;
        if (tb < 1 || tb > room || past < 0 || past + S > room || (!first && !windowed && past > P))
            return onyx_error(ONYX_ERR_SHAPE,
                              "seqlens_k[%lld] = %lld does not fit sequence "
                              "length %lld, total_sequence_length %lld and a past of %lld",
                              (long long)b, (long long)seqlens[b], (long long)S, (long long)total,
                              (long long)P);
    }
    core x = {.B = B,
              .S = S,
              .T = T,
              .Nq = Nq,
              .Nkv = Nkv,
              .Dk = D,
              .Dv = D,
              .y = Y->data,
              .scale = cnlp_att_scale(c->node, D),
              .gqa = true,
              .first_prompt = first,
              .gqa_causal = attr_int(c->node, "causal", 1) != 0,
              .seqlens = seqlens,
              .window = attr_int(c->node, "local_window_size", -1),
              .softcap = attr_float(c->node, "softcap", 0.0f),
              .smooth = SK || attr_int(c->node, "smooth_softmax", -1) == 1,
              .sink = SK ? SK->data : NULL,
              .qk = QK ? QK->data : NULL,
              .qk_mode = QK ? (int)attr_int(c->node, "qk_output", 0) : 0,
              .qk_len = total};
    x.ys[0] = S * Nq * D, x.ys[1] = D, x.ys[2] = Nq * D;
    bias_setup(&x, AB);
    int64_t qw = d.qkv_packed ? (Nq + 2 * Nkv) * D : Nq * D;
    x.q = (view){Q->data, {S * qw, D, qw}};
    view vk, vv;
    if (d.qkv_packed) {
        vk = (view){(const float *)Q->data + Nq * D, {S * qw, D, qw}};
        vv = (view){(const float *)Q->data + (Nq + Nkv) * D, {S * qw, D, qw}};
    } else {
        vk = (view){K->data, {S * Nkv * D, D, Nkv * D}};
        vv = (view){V->data, {S * Nkv * D, D, Nkv * D}};
    }
    if (windowed) { /* the keys read: the past's resident rows (at most T) and the new ones */
        x.T = first ? S : T + S;
        x.seqlens = NULL;
    }
    size_t cache = (size_t)(B * Nkv * T * D) * 4;
    /* float caches the present outputs do not hold: absent ones, or a quantized pair's codes */
    size_t own = ((OK_ && !kq.bits ? 0 : cache) + (OV && !kq.bits ? 0 : cache) + 63) / 64 * 64;
    if (windowed)
        own = ((size_t)B * 4 + 63) / 64 * 64 + (((size_t)(B * Nkv * x.T * D) * 8 + 63) / 64 * 64);
    bool rotary = attr_int(c->node, "do_rotary", 0) != 0;
    size_t rq = rotary ? ((size_t)(B * S * Nq * D) * 4 + 63) / 64 * 64 : 0;
    size_t rk = rotary ? (size_t)(B * S * Nkv * D) * 4 : 0;
    char *buf;
    TRY(core_scratch(c, &x, own + rq + rk, &buf));
    float *kc = OK_ && !kq.bits ? OK_->data : (float *)buf;
    float *vc = OV && !kq.bits ? OV->data : (float *)(buf + (OK_ && !kq.bits ? 0 : cache));
    if (rotary)
        TRY(gqa_rotary(c, &d, first, seqlens, &x.q, &vk, (float *)(buf + own),
                       (float *)(buf + own + rq)));
    if (windowed) return gqa_windowed(c, &x, &d, seqlens, first, vk, vv, buf);
    const void *pk = PK ? PK->data : NULL, *pv = PV ? PV->data : NULL;
    void *ko = OK_ ? OK_->data : kc, *vo = OV ? OV->data : vc;
    if ((ko == pk || vo == pv) && P != T)
        return onyx_error(ONYX_ERR_SHAPE,
                          "present shares the past's buffer but holds %lld rows, not its %lld",
                          (long long)T, (long long)P);
    gqa_appends ap = {.dst = {(uint8_t *)ko, (uint8_t *)vo}, .past = {pk, pv}, .src = {vk, vv},
                      .seqlens = seqlens, .first = first, .bits = kq.bits,
                      .per_channel = kq.per_channel, .scale = {KS ? KS->data : NULL,
                                                               VS ? VS->data : NULL},
                      .flt = {kc, vc}, .P = P, .B = B, .N = Nkv, .S = S, .T = T, .D = D};
    /* a block of fewer than ~16 KiB is not worth a hand-over; a quantized one dequantizes its
     * whole cache */
    int64_t blocks = 2 * B * Nkv;
    parallel_for(blocks, S * D >= 4096 || (kq.bits && !first) ? 1 : blocks, gqa_append_blocks,
                 &ap);
    x.k = (view){kc, {Nkv * T * D, T * D, D}};
    x.v = (view){vc, {Nkv * T * D, T * D, D}};
    core_run(&x);
    return ONYX_OK;
}

/* float16 and bfloat16, as onnxruntime's CPU kernel computes them: in float. What reaches this
 * kernel so is a device session's fallback (a CPU-only session runs such a model as its float
 * twin, core/rules/half.c): onnxruntime-genai's float16 CUDA export where CUDA's kernel declines
 * a node (a windowed cache). The float kernel runs on float copies of the inputs, its outputs
 * rounded back; a present bound over its past is over the past's copy too, so that it is
 * appended in place there, and the whole cache is rounded back (exactly: its other rows came
 * from float16). */
#define GQA_HALF_IN 16
#define GQA_HALF_OUT 4

static onyx_status gqa_half(const kernel_call *c) {
    if (c->n_in > GQA_HALF_IN || c->n_out > GQA_HALF_OUT)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "GroupQueryAttention: %d inputs, %d outputs",
                          c->n_in, c->n_out);
    onyx_value in_v[GQA_HALF_IN], out_v[GQA_HALF_OUT];
    onyx_value *in[GQA_HALF_IN] = {0}, *out[GQA_HALF_OUT] = {0};
    float *owned[GQA_HALF_IN + GQA_HALF_OUT] = {0};
    int n_owned = 0;
    onyx_status st = ONYX_OK;
    for (int i = 0; i < c->n_in && st == ONYX_OK; i++) {
        in[i] = c->in[i];
        const tensor *t = kernel_input(c, i);
        if (!t || (t->dtype != ONYX_FLOAT16 && t->dtype != ONYX_BFLOAT16)) continue;
        float *f = malloc((size_t)(t->numel > 0 ? t->numel : 1) * sizeof *f);
        if (!f) {
            st = onyx_oom("GroupQueryAttention in float");
            break;
        }
        owned[n_owned++] = f;
        cnlp_load(t->data, t->dtype, 0, f, t->numel);
        in_v[i] = *c->in[i];
        in_v[i].t.dtype = ONYX_FLOAT;
        in_v[i].t.data = f;
        in_v[i].t.nbytes = (size_t)t->numel * sizeof *f;
        in_v[i].t.owns = false;
        in[i] = &in_v[i];
    }
    for (int o = 0; o < c->n_out && st == ONYX_OK; o++) {
        const tensor *t = kernel_output(c, o);
        if (!t) continue;
        out_v[o] = *c->out[o];
        out_v[o].t.dtype = ONYX_FLOAT;
        out_v[o].t.nbytes = (size_t)t->numel * sizeof(float);
        out_v[o].t.owns = false;
        out[o] = &out_v[o];
        const tensor *past = (o == 1 || o == 2) && o + 2 < c->n_in ? kernel_input(c, o + 2)
                                                                    : NULL;
        if (past && past->data == t->data && in[o + 2] != c->in[o + 2]) {
            out_v[o].t.data = in[o + 2]->t.data; /* in place over the past's copy */
            continue;
        }
        float *f = malloc((size_t)(t->numel > 0 ? t->numel : 1) * sizeof *f);
        if (!f) {
            st = onyx_oom("GroupQueryAttention in float");
            break;
        }
        owned[n_owned++] = f;
        out_v[o].t.data = f;
    }
    if (st == ONYX_OK) {
        kernel_call fc = *c;
        fc.in = in;
        fc.out = out;
        st = gqa_float(&fc);
    }
    for (int o = 0; o < c->n_out && st == ONYX_OK; o++)
        if (out[o]) {
            tensor *t = kernel_output(c, o);
            cnlp_store(t->data, t->dtype, 0, out[o]->t.data, t->numel);
        }
    for (int i = 0; i < n_owned; i++) free(owned[i]);
    return st;
}

onyx_status cpu_cnlp_gqa(const kernel_call *c) {
    const tensor *Q = kernel_input(c, 0);
    if (Q && (Q->dtype == ONYX_FLOAT16 || Q->dtype == ONYX_BFLOAT16)) return gqa_half(c);
    return gqa_float(c);
}

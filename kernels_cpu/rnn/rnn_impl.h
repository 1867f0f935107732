/* The RNN/GRU/LSTM computation in one real type, included by kernels_cpu/rnn/rnn.c once per type
 * with RT (float or double), RT_DTYPE (its onyx_dtype), RT_GEMM (cpu_sgemm / cpu_dgemm) and
 * RNN_FN(name) (the name with the type's suffix) defined. */

/* n elements of a float-family tensor from element off, as RT. */
static void RNN_FN(load)(onyx_dtype dt, const void *src, int64_t off, RT *dst, int64_t n) {
    const float *f = src;
    const double *d = src;
    const uint16_t *h = src;
    switch (dt) {
    case ONYX_FLOAT: CPU_SIMD for (int64_t i = 0; i < n; i++) dst[i] = (RT)f[off + i]; break;
    case ONYX_DOUBLE: CPU_SIMD for (int64_t i = 0; i < n; i++) dst[i] = (RT)d[off + i]; break;
    case ONYX_FLOAT16:
        CPU_SIMD for (int64_t i = 0; i < n; i++) dst[i] = cpu_fp16_to_float(h[off + i]);
        break;
    default:
        CPU_SIMD for (int64_t i = 0; i < n; i++) dst[i] = cpu_bf16_to_float(h[off + i]);
        break;
    }
}

static void RNN_FN(store)(onyx_dtype dt, void *dst, int64_t off, const RT *src, int64_t n) {
    float *f = dst;
    double *d = dst;
    uint16_t *h = dst;
    switch (dt) {
    case ONYX_FLOAT: CPU_SIMD for (int64_t i = 0; i < n; i++) f[off + i] = (float)src[i]; break;
    case ONYX_DOUBLE: CPU_SIMD for (int64_t i = 0; i < n; i++) d[off + i] = (double)src[i]; break;
    case ONYX_FLOAT16:
        CPU_SIMD for (int64_t i = 0; i < n; i++) h[off + i] = cpu_float_to_fp16((float)src[i]);
        break;
    default:
        CPU_SIMD for (int64_t i = 0; i < n; i++) h[off + i] = cpu_float_to_bf16((float)src[i]);
        break;
    }
}

/* x = act(clip(x)) over n elements; clip < 0 means none. */
static void RNN_FN(activate)(const rnn_act *a, RT *x, int64_t n, RT clip) {
    if (clip >= 0)
        CPU_SIMD for (int64_t i = 0; i < n; i++)
            x[i] = x[i] < -clip ? -clip : x[i] > clip ? clip : x[i];
    const RT al = (RT)a->alpha, be = (RT)a->beta;
    switch (a->kind) {
    case RNN_ACT_RELU: for (int64_t i = 0; i < n; i++) x[i] = x[i] > 0 ? x[i] : 0; break;
    case RNN_ACT_TANH: CPU_SIMD for (int64_t i = 0; i < n; i++) x[i] = RT_TANH(x[i]); break;
    case RNN_ACT_SIGMOID: CPU_SIMD for (int64_t i = 0; i < n; i++) x[i] = RT_SIGMOID(x[i]); break;
    case RNN_ACT_AFFINE: for (int64_t i = 0; i < n; i++) x[i] = al * x[i] + be; break;
    case RNN_ACT_LEAKYRELU:
        for (int64_t i = 0; i < n; i++) x[i] = x[i] >= 0 ? x[i] : al * x[i];
        break;
    case RNN_ACT_THRESHOLDEDRELU:
        for (int64_t i = 0; i < n; i++) x[i] = x[i] > al ? x[i] : 0;
        break;
    case RNN_ACT_SCALEDTANH:
        CPU_SIMD for (int64_t i = 0; i < n; i++) x[i] = al * RT_TANH(be * x[i]);
        break;
    case RNN_ACT_HARDSIGMOID:
        for (int64_t i = 0; i < n; i++) {
            RT v = al * x[i] + be;
            x[i] = v < 0 ? 0 : v > 1 ? 1 : v;
        }
        break;
    case RNN_ACT_ELU:
        for (int64_t i = 0; i < n; i++) x[i] = x[i] >= 0 ? x[i] : al * (RT_EXP(x[i]) - 1);
        break;
    case RNN_ACT_SOFTSIGN: for (int64_t i = 0; i < n; i++) x[i] = x[i] / (1 + RT_FABS(x[i])); break;
    case RNN_ACT_SOFTPLUS:
        /* log(1 + e^x) without overflowing e^x */
        for (int64_t i = 0; i < n; i++)
            x[i] = x[i] > 0 ? x[i] + RT_LOG1P(RT_EXP(-x[i])) : RT_LOG1P(RT_EXP(x[i]));
        break;
    }
}

/* The whole layer: every direction, every step. s is scratch of rnn_scratch_elems() RTs. */
static void RNN_FN(layer)(const rnn_job *j, RT *s) {
    const rnn_attrs *a = &j->a;
    const int64_t seq = j->seq, batch = j->batch, I = j->in, H = j->H, nd = a->num_dir;
    const int64_t GH = a->gates * H;
    const onyx_dtype dt = j->dt;
    const bool native = dt == RT_DTYPE;
    const RT clip = a->has_clip ? (RT)a->clip : (RT)-1;

    RT *xsbuf = s;
    s += rnn_need_x(j) ? seq * batch * I : 0;
    RT *xw = s;
    s += seq * batch * GH;
    RT *hr = s;
    s += batch * GH;
    RT *h = s, *c = s + batch * H, *tmp = s + 2 * batch * H;
    s += 3 * batch * H;
    RT *bsum = s, *rbh = s + GH;
    s += GH + H;
    RT *wbuf = s; /* W, R, B, P of one direction when converted */

    const RT *xs = xsbuf;
    if (!rnn_need_x(j)) {
        xs = j->X->data;
    } else {
        for (int64_t t = 0; t < seq; t++)
            for (int64_t b = 0; b < batch; b++)
                RNN_FN(load)(dt, j->X->data, (a->layout ? b * seq + t : t * batch + b) * I,
                         xsbuf + (t * batch + b) * I, I);
    }

    for (int64_t d = 0; d < nd; d++) {
        const bool rev = nd == 2 ? d == 1 : a->reverse;
        const rnn_act *act = a->act[d];
        const RT *w, *r, *bias = NULL, *p = NULL;
        if (native) {
            w = (const RT *)j->W->data + d * GH * I;
            r = (const RT *)j->R->data + d * GH * H;
            if (j->B) bias = (const RT *)j->B->data + d * 2 * GH;
            if (j->P) p = (const RT *)j->P->data + d * 3 * H;
        } else {
            RT *q = wbuf;
            RNN_FN(load)(dt, j->W->data, d * GH * I, q, GH * I);
            w = q;
            q += GH * I;
            RNN_FN(load)(dt, j->R->data, d * GH * H, q, GH * H);
            r = q;
            q += GH * H;
            if (j->B) RNN_FN(load)(dt, j->B->data, d * 2 * GH, q, 2 * GH), bias = q;
            q += 2 * GH;
            if (j->P) RNN_FN(load)(dt, j->P->data, d * 3 * H, q, 3 * H), p = q;
        }
        /* Wb + Rb, except GRU's Rbh, which sits inside the reset gate's product */
        for (int64_t k = 0; k < GH; k++) bsum[k] = bias ? bias[k] + bias[GH + k] : 0;
        for (int64_t k = 0; k < H; k++) rbh[k] = 0;
        if (a->cell == RNN_CELL_GRU && bias)
            for (int64_t k = 0; k < H; k++) {
                bsum[2 * H + k] = bias[2 * H + k];
                rbh[k] = bias[GH + 2 * H + k];
            }

        /* the input projection of every step in one product */
        RT_GEMM(false, true, seq * batch, GH, I, 1, xs, I, w, I, 0, xw, GH);

        for (int64_t b = 0; b < batch; b++) {
            int64_t off = (a->layout ? b * nd + d : d * batch + b) * H;
            if (j->h0) RNN_FN(load)(dt, j->h0->data, off, h + b * H, H);
            else for (int64_t k = 0; k < H; k++) h[b * H + k] = 0;
            if (j->c0) RNN_FN(load)(dt, j->c0->data, off, c + b * H, H);
            else for (int64_t k = 0; k < H; k++) c[b * H + k] = 0;
        }

        const bool gru_split = a->cell == RNN_CELL_GRU && !a->linear_before_reset;
        for (int64_t st = 0; st < seq; st++) {
            bool any = false;
            for (int64_t b = 0; b < batch && !any; b++) any = st < rnn_len(j, b);
            if (!any) break;
            RT_GEMM(false, true, batch, gru_split ? 2 * H : GH, H, 1, h, H, r, H, 0, hr, GH);
            if (gru_split) {
                /* z and r first: the candidate's product needs r (.) H */
                for (int64_t b = 0; b < batch; b++) {
                    RT *tb = tmp + b * H;
                    if (st >= rnn_len(j, b)) {
                        for (int64_t k = 0; k < H; k++) tb[k] = 0;
                        continue;
                    }
                    int64_t t = rev ? rnn_len(j, b) - 1 - st : st;
                    const RT *gx = xw + (t * batch + b) * GH;
                    RT *gr = hr + b * GH;
                    for (int64_t k = 0; k < 2 * H; k++) gr[k] += gx[k] + bsum[k];
                    RNN_FN(activate)(&act[0], gr, 2 * H, clip);
                    for (int64_t k = 0; k < H; k++) tb[k] = gr[H + k] * h[b * H + k];
                }
                RT_GEMM(false, true, batch, H, H, 1, tmp, H, r + 2 * H * H, H, 0, hr + 2 * H, GH);
            }
            for (int64_t b = 0; b < batch; b++) {
                int64_t len = rnn_len(j, b);
                if (st >= len) continue;
                int64_t t = rev ? len - 1 - st : st;
                const RT *gx = xw + (t * batch + b) * GH;
                RT *gr = hr + b * GH, *hb = h + b * H, *cb = c + b * H;
                switch (a->cell) {
                case RNN_CELL_RNN:
                    for (int64_t k = 0; k < H; k++) gr[k] += gx[k] + bsum[k];
                    RNN_FN(activate)(&act[0], gr, H, clip);
                    memcpy(hb, gr, (size_t)H * sizeof *hb);
                    break;
                case RNN_CELL_GRU: {
                    RT *z = gr, *rg = gr + H, *hh = gr + 2 * H;
                    if (gru_split) {
                        for (int64_t k = 0; k < H; k++)
                            hh[k] += gx[2 * H + k] + bsum[2 * H + k] + rbh[k];
                    } else {
                        for (int64_t k = 0; k < 2 * H; k++) gr[k] += gx[k] + bsum[k];
                        RNN_FN(activate)(&act[0], gr, 2 * H, clip);
                        for (int64_t k = 0; k < H; k++)
                            hh[k] = gx[2 * H + k] + rg[k] * (hh[k] + rbh[k]) + bsum[2 * H + k];
                    }
                    RNN_FN(activate)(&act[1], hh, H, clip);
                    for (int64_t k = 0; k < H; k++) hb[k] = (1 - z[k]) * hh[k] + z[k] * hb[k];
                    break;
                }
                case RNN_CELL_LSTM: {
                    RT *gi = gr, *go = gr + H, *gf = gr + 2 * H, *gc = gr + 3 * H;
                    for (int64_t k = 0; k < GH; k++) gr[k] += gx[k] + bsum[k];
                    if (p)
                        for (int64_t k = 0; k < H; k++) {
                            gi[k] += p[k] * cb[k];
                            gf[k] += p[2 * H + k] * cb[k];
                        }
                    RNN_FN(activate)(&act[0], gi, H, clip);
                    if (a->input_forget) for (int64_t k = 0; k < H; k++) gf[k] = 1 - gi[k];
                    else RNN_FN(activate)(&act[0], gf, H, clip);
                    RNN_FN(activate)(&act[1], gc, H, clip);
                    for (int64_t k = 0; k < H; k++) cb[k] = gf[k] * cb[k] + gi[k] * gc[k];
                    if (p) for (int64_t k = 0; k < H; k++) go[k] += p[H + k] * cb[k];
                    RNN_FN(activate)(&act[0], go, H, clip);
                    /* h(C): tmp is free in LSTM */
                    RT *hc = tmp + b * H;
                    memcpy(hc, cb, (size_t)H * sizeof *hc);
                    RNN_FN(activate)(&act[2], hc, H, (RT)-1);
                    for (int64_t k = 0; k < H; k++) hb[k] = go[k] * hc[k];
                    break;
                }
                }
                if (j->Y) {
                    int64_t yrow = a->layout ? (b * seq + t) * nd + d : (t * nd + d) * batch + b;
                    RNN_FN(store)(dt, j->Y->data, yrow * H, hb, H);
                }
            }
        }
        for (int64_t b = 0; b < batch; b++) {
            int64_t off = (a->layout ? b * nd + d : d * batch + b) * H;
            /* an empty sequence has no last state: zeros, as onnxruntime gives */
            if (rnn_len(j, b) == 0) {
                for (int64_t k = 0; k < H; k++) h[b * H + k] = c[b * H + k] = 0;
            }
            if (j->Yh) RNN_FN(store)(dt, j->Yh->data, off, h + b * H, H);
            if (j->Yc) RNN_FN(store)(dt, j->Yc->data, off, c + b * H, H);
        }
    }
}

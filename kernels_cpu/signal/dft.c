/* DFT and STFT on the CPU over a small FFT of our own (no FFT library in the dependency set):
 * iterative radix-2 for power-of-two lengths, Bluestein's chirp-z through a power-of-two FFT for
 * the rest, all in double. Plans are made in prepare when sizes are static (else in the run's
 * scratch); the per-thread line buffers a run writes are always its scratch (kernel_scratch). */
#include "core/parallel.h"
#include "ops/signal/signal_common.h"
#include "kernels_cpu/cpu_kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- FFT */

typedef struct fft_plan {
    int64_t n;      /* transform length */
    int64_t m;      /* power-of-two length actually transformed (n itself when n is one) */
    bool bluestein;
    double *tw;     /* m/2 complex twiddles exp(-2 pi i k / m) */
    double *chirp;  /* bluestein: n complex exp(-pi i k^2 / n) */
    double *filt;   /* bluestein: FFT of the conjugate chirp, m complex */
} fft_plan;

/* Where plan tables go: the heap (arena NULL) or a bump region of a run's scratch. */
typedef struct fft_arena {
    double *base;
    size_t used, cap; /* doubles */
} fft_arena;

static double *fft_alloc(fft_arena *a, size_t n) {
    if (!a) return malloc((n ? n : 1) * sizeof(double));
    n = (n + 7) / 8 * 8; /* keeps every table 64-byte aligned */
    if (a->cap - a->used < n) return NULL;
    double *p = a->base + a->used;
    a->used += n;
    return p;
}

/* The power-of-two length a plan for length n transforms (n itself, or at least 2n - 1). */
static int64_t fft_pow2_len(int64_t n) {
    int64_t m = 1;
    bool pow2 = (n & (n - 1)) == 0;
    while (m < (pow2 ? n : 2 * n - 1)) m <<= 1;
    return m;
}

static void fft_plan_free(fft_plan *p, bool heap) {
    if (heap) {
        free(p->tw);
        free(p->chirp);
        free(p->filt);
    }
    memset(p, 0, sizeof *p);
}

static void fft_pow2(const fft_plan *p, double *a) {
    int64_t m = p->m;
    for (int64_t i = 1, j = 0; i < m; i++) {
        int64_t bit = m >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            double t0 = a[2 * i], t1 = a[2 * i + 1];
            a[2 * i] = a[2 * j];
            a[2 * i + 1] = a[2 * j + 1];
            a[2 * j] = t0;
            a[2 * j + 1] = t1;
        }
    }
    for (int64_t len = 2; len <= m; len <<= 1) {
        int64_t half = len >> 1, step = m / len;
        for (int64_t s = 0; s < m; s += len)
            for (int64_t k = 0; k < half; k++) {
                double wr = p->tw[2 * k * step], wi = p->tw[2 * k * step + 1];
                double *u = a + 2 * (s + k), *v = a + 2 * (s + k + half);
                double vr = v[0] * wr - v[1] * wi, vi = v[0] * wi + v[1] * wr;
                v[0] = u[0] - vr;
                v[1] = u[1] - vi;
                u[0] += vr;
                u[1] += vi;
            }
    }
}

static onyx_status fft_plan_make(fft_plan *p, int64_t n, fft_arena *arena) {
    memset(p, 0, sizeof *p);
    p->n = n;
    bool pow2 = (n & (n - 1)) == 0;
    int64_t m = fft_pow2_len(n);
    p->m = m;
    p->bluestein = !pow2;
    p->tw = fft_alloc(arena, (size_t)(m / 2 + 1) * 2);
    if (!p->tw) goto oom;
    for (int64_t k = 0; k < m / 2 + 1; k++) {
        double ang = -2.0 * M_PI * (double)k / (double)m;
        p->tw[2 * k] = cos(ang);
        p->tw[2 * k + 1] = sin(ang);
    }
    if (!p->bluestein) return ONYX_OK;
    p->chirp = fft_alloc(arena, (size_t)n * 2);
    p->filt = fft_alloc(arena, (size_t)m * 2);
    if (!p->chirp || !p->filt) goto oom;
    memset(p->filt, 0, (size_t)m * 2 * sizeof(double));
    /* k^2 mod 2n keeps the angle small and exact for long transforms */
    uint64_t sq = 0, n2 = 2 * (uint64_t)n;
    for (int64_t k = 0; k < n; k++) {
        double ang = -M_PI * (double)sq / (double)n;
        p->chirp[2 * k] = cos(ang);
        p->chirp[2 * k + 1] = sin(ang);
        sq = (sq + 2 * (uint64_t)k + 1) % n2;
    }
    for (int64_t k = 0; k < n; k++) {
        p->filt[2 * k] = p->chirp[2 * k];
        p->filt[2 * k + 1] = -p->chirp[2 * k + 1];
        if (k) {
            p->filt[2 * (m - k)] = p->chirp[2 * k];
            p->filt[2 * (m - k) + 1] = -p->chirp[2 * k + 1];
        }
    }
    fft_pow2(p, p->filt);
    return ONYX_OK;
oom:
    fft_plan_free(p, !arena);
    return onyx_oom("FFT plan");
}

/* Doubles of scratch fft_exec needs. */
static size_t fft_scratch(const fft_plan *p) { return p->bluestein ? (size_t)p->m * 2 : 0; }

/* In-place forward transform of n complex values (interleaved re, im). */
static void fft_exec(const fft_plan *p, double *x, double *scratch) {
    if (!p->bluestein) {
        fft_pow2(p, x);
        return;
    }
    int64_t n = p->n, m = p->m;
    double *a = scratch;
    memset(a, 0, (size_t)m * 2 * sizeof(double));
    for (int64_t k = 0; k < n; k++) {
        double cr = p->chirp[2 * k], ci = p->chirp[2 * k + 1];
        a[2 * k] = x[2 * k] * cr - x[2 * k + 1] * ci;
        a[2 * k + 1] = x[2 * k] * ci + x[2 * k + 1] * cr;
    }
    fft_pow2(p, a);
    /* pointwise product, then the inverse FFT as conj(FFT(conj)) */
    for (int64_t k = 0; k < m; k++) {
        double ar = a[2 * k], ai = a[2 * k + 1], br = p->filt[2 * k], bi = p->filt[2 * k + 1];
        a[2 * k] = ar * br - ai * bi;
        a[2 * k + 1] = -(ar * bi + ai * br);
    }
    fft_pow2(p, a);
    double inv_m = 1.0 / (double)m;
    for (int64_t k = 0; k < n; k++) {
        double cr = a[2 * k] * inv_m, ci = -a[2 * k + 1] * inv_m;
        double wr = p->chirp[2 * k], wi = p->chirp[2 * k + 1];
        x[2 * k] = cr * wr - ci * wi;
        x[2 * k + 1] = cr * wi + ci * wr;
    }
}

/* ---- element access for the float types */

static double getf(const tensor *t, int64_t i) {
    switch (t->dtype) {
    case ONYX_FLOAT: return ((const float *)t->data)[i];
    case ONYX_DOUBLE: return ((const double *)t->data)[i];
    case ONYX_FLOAT16: return fp16_to_float(((const uint16_t *)t->data)[i]);
    default: return bf16_to_float(((const uint16_t *)t->data)[i]);
    }
}

static void putf(tensor *t, int64_t i, double v) {
    switch (t->dtype) {
    case ONYX_FLOAT: ((float *)t->data)[i] = (float)v; break;
    case ONYX_DOUBLE: ((double *)t->data)[i] = v; break;
    case ONYX_FLOAT16: ((uint16_t *)t->data)[i] = float_to_fp16((float)v); break;
    default: ((uint16_t *)t->data)[i] = float_to_bf16((float)v); break;
    }
}

/* ---- state shared by DFT and STFT: a plan for one length and scratch per thread slot. Real
 * forward transforms of even length n run as one complex transform of n/2 points (even samples
 * as real parts, odd ones as imaginary parts), then untangle: about half the work. */

typedef struct fft_state {
    bool ready;
    bool heap;        /* tables on the heap (prepared), not in a run's scratch */
    int64_t n;        /* transform length */
    bool real;        /* real forward input, n even: `plan` has n/2 points */
    fft_plan plan;
    double *rtw;      /* real: n/2+1 complex exp(-2 pi i k / n) */
    size_t per_slot;  /* doubles per thread slot: line buffer (2n), packed half (n), plan scratch */
} fft_state;

static void fft_state_free(fft_state *s) {
    if (!s) return;
    fft_plan_free(&s->plan, s->heap);
    if (s->heap) free(s->rtw);
    memset(s, 0, sizeof *s);
}

/* Doubles of the tables fft_state_make puts in an arena for length n; false when too many. */
static bool fft_table_doubles(int64_t n, bool real, size_t *out) {
    if (n < 1 || n > ((int64_t)1 << 40)) return false;
    real = real && n % 2 == 0;
    int64_t pn = real ? n / 2 : n, m = fft_pow2_len(pn);
    size_t r8 = 8, t = ((size_t)(m / 2 + 1) * 2 + r8 - 1) / r8 * r8;
    if ((pn & (pn - 1)) != 0)
        t += ((size_t)pn * 2 + r8 - 1) / r8 * r8 + ((size_t)m * 2 + r8 - 1) / r8 * r8;
    if (real) t += ((size_t)(n / 2 + 1) * 2 + r8 - 1) / r8 * r8;
    *out = t;
    return true;
}

static onyx_status fft_state_make(fft_state *s, int64_t n, bool real, fft_arena *arena) {
    memset(s, 0, sizeof *s);
    s->n = n;
    s->real = real && n % 2 == 0;
    s->heap = !arena;
    TRY(fft_plan_make(&s->plan, s->real ? n / 2 : n, arena));
    if (s->real) {
        s->rtw = fft_alloc(arena, (size_t)(n / 2 + 1) * 2);
        if (!s->rtw) {
            fft_state_free(s);
            return onyx_oom("FFT plan");
        }
        for (int64_t k = 0; k <= n / 2; k++) {
            double ang = -2.0 * M_PI * (double)k / (double)n;
            s->rtw[2 * k] = cos(ang);
            s->rtw[2 * k + 1] = sin(ang);
        }
    }
    /* rounded to 8 doubles so that every slot starts 64-byte aligned */
    s->per_slot = (3 * (size_t)n + fft_scratch(&s->plan) + 7) / 8 * 8;
    s->ready = true;
    return ONYX_OK;
}

/* Forward transform of the n complex values in buf (whose imaginary parts are 0 when s->real),
 * in place; work holds n + plan-scratch doubles. */
static void fft_forward(const fft_state *s, double *buf, double *work) {
    if (!s->real) {
        fft_exec(&s->plan, buf, work);
        return;
    }
    int64_t n = s->n, h = n / 2;
    double *z = work, *scratch = work + n;
    for (int64_t k = 0; k < h; k++) {
        z[2 * k] = buf[4 * k];
        z[2 * k + 1] = buf[4 * k + 2];
    }
    fft_exec(&s->plan, z, scratch);
    for (int64_t k = 0; k <= h; k++) {
        int64_t a = k == h ? 0 : k, b = k == 0 ? 0 : h - k;
        double zr = z[2 * a], zi = z[2 * a + 1], cr = z[2 * b], ci = -z[2 * b + 1];
        double er = (zr + cr) / 2, ei = (zi + ci) / 2;    /* spectrum of the even samples */
        double orr = (zi - ci) / 2, oi = -(zr - cr) / 2;  /* and of the odd ones */
        double wr = s->rtw[2 * k], wi = s->rtw[2 * k + 1];
        buf[2 * k] = er + wr * orr - wi * oi;
        buf[2 * k + 1] = ei + wr * oi + wi * orr;
    }
    for (int64_t k = h + 1; k < n; k++) {
        buf[2 * k] = buf[2 * (n - k)];
        buf[2 * k + 1] = -buf[2 * (n - k) + 1];
    }
}

/* Splits `lines` into one block per scratch slot and calls fn on each. */
typedef struct block_job {
    const fft_state *s;
    double *slots;        /* the run's scratch: `nslots` slots of s->per_slot doubles */
    int64_t nslots;
    int64_t lines, blocks;
    void (*line)(const struct block_job *j, int64_t line, double *buf, double *scratch);
    const void *ctx;
} block_job;

static void block_range(void *ctx, int64_t b, int64_t e) {
    const block_job *j = ctx;
    for (int64_t blk = b; blk < e; blk++) {
        double *buf = j->slots + (size_t)blk * j->s->per_slot;
        double *scratch = buf + 2 * j->s->n;
        int64_t lo = j->lines * blk / j->blocks, hi = j->lines * (blk + 1) / j->blocks;
        for (int64_t l = lo; l < hi; l++) j->line(j, l, buf, scratch);
    }
}

static void run_blocks(block_job *j, int64_t work_per_line) {
    int64_t blocks = j->nslots;
    int64_t want = j->lines * work_per_line / 16384 + 1; /* small jobs stay on one thread */
    if (blocks > want) blocks = want;
    if (blocks > j->lines) blocks = j->lines;
    if (blocks < 1) return;
    j->blocks = blocks;
    parallel_for(blocks, 1, block_range, j);
}

/* The state for a length-n transform and the run's slot buffers, both from the prepared state
 * when it fits (its tables are only read) and else with the tables too in the run's scratch. */
static onyx_status fft_setup(const kernel_call *c, int64_t n, bool real, fft_state *local,
                             block_job *j) {
    const fft_state *s = c->state;
    bool fits = s && s->ready && s->n == n && s->real == (real && n % 2 == 0);
    size_t tables = 0;
    if (!fits && !fft_table_doubles(n, real, &tables)) return onyx_oom("FFT plan");
    int64_t slots = parallel_threads();
    if (slots < 1) slots = 1;
    /* a slot's doubles, as fft_state_make sizes them (the Bluestein scratch at most 2 * 2n) */
    size_t per_slot = fits ? s->per_slot : (3 * (size_t)n + 2 * (size_t)fft_pow2_len(2 * n) + 7) / 8 * 8;
    if (per_slot > (SIZE_MAX / sizeof(double) - tables) / (size_t)slots)
        return onyx_oom("FFT scratch");
    void *mem;
    TRY(kernel_scratch(c, (tables + (size_t)slots * per_slot) * sizeof(double), &mem));
    if (!fits) {
        fft_arena arena = {mem, 0, tables};
        TRY(fft_state_make(local, n, real, &arena));
        s = local;
    }
    j->s = s;
    j->slots = (double *)mem + tables;
    j->nslots = slots;
    return ONYX_OK;
}

/* ---- DFT */

typedef struct dft_ctx {
    const tensor *X;
    tensor *Y;
    ops_dft_plan p;
    int64_t L, Lout, inner, cin, cout;
} dft_ctx;

static void dft_line(const block_job *j, int64_t line, double *buf, double *scratch) {
    const dft_ctx *d = j->ctx;
    const fft_plan *fp = &j->s->plan;
    int64_t n = j->s->n, o = line / d->inner, i = line % d->inner;
    int64_t in_base = o * d->L * d->inner + i, out_base = o * d->Lout * d->inner + i;
    memset(buf, 0, (size_t)n * 2 * sizeof(double));
    if (d->p.inverse && d->p.onesided) {
        /* irfft: rebuild the Hermitian spectrum from its first n/2+1 values */
        int64_t half = n / 2 + 1, take = d->L < half ? d->L : half;
        for (int64_t k = 0; k < take; k++) {
            int64_t at = (in_base + k * d->inner) * d->cin;
            buf[2 * k] = getf(d->X, at);
            buf[2 * k + 1] = d->cin == 2 ? getf(d->X, at + 1) : 0.0;
        }
        for (int64_t k = half; k < n; k++) {
            buf[2 * k] = buf[2 * (n - k)];
            buf[2 * k + 1] = -buf[2 * (n - k) + 1];
        }
    } else {
        int64_t take = d->L < n ? d->L : n;
        for (int64_t k = 0; k < take; k++) {
            int64_t at = (in_base + k * d->inner) * d->cin;
            buf[2 * k] = getf(d->X, at);
            buf[2 * k + 1] = d->cin == 2 ? getf(d->X, at + 1) : 0.0;
        }
    }
    if (d->p.inverse) {
        for (int64_t k = 0; k < n; k++) buf[2 * k + 1] = -buf[2 * k + 1];
        fft_exec(fp, buf, scratch);
        double inv = 1.0 / (double)n;
        for (int64_t k = 0; k < n; k++) {
            buf[2 * k] *= inv;
            buf[2 * k + 1] *= -inv;
        }
    } else {
        fft_forward(j->s, buf, scratch);
    }
    for (int64_t k = 0; k < d->Lout; k++) {
        int64_t at = (out_base + k * d->inner) * d->cout;
        putf(d->Y, at, buf[2 * k]);
        if (d->cout == 2) putf(d->Y, at + 1, buf[2 * k + 1]);
    }
}

static onyx_status dft_plan_from(const graph_node *node, const tensor *X, const tensor *len,
                                 const tensor *axis, ops_dft_plan *p) {
    return ops_dft_plan_make(node, X->rank, X->dims, len, node->version >= 20 ? axis : NULL, p);
}

onyx_status cpu_dft_prepare(const kernel_prep *p, void **state) {
    fft_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("DFT state");
    *state = s;
    const type_info *x = p->in_type[0];
    if (!x || !type_is_static(x)) return ONYX_OK;
    for (int i = 1; i < p->n_in; i++)
        if (p->in_type[i] && !p->in_value[i]) return ONYX_OK;
    tensor shape;
    memset(&shape, 0, sizeof shape);
    shape.rank = x->rank;
    memcpy(shape.dims, x->dims, sizeof shape.dims);
    ops_dft_plan dp;
    onyx_status st = dft_plan_from(p->node, &shape, p->n_in > 1 ? p->in_value[1] : NULL,
                                   p->n_in > 2 ? p->in_value[2] : NULL, &dp);
    if (st == ONYX_OK) st = fft_state_make(s, dp.length, dp.real_in && !dp.inverse, NULL);
    if (st != ONYX_OK) {
        cpu_fft_release(s);
        *state = NULL;
    }
    return st;
}

onyx_status cpu_dft_run(const kernel_call *c) {
    const tensor *X = kernel_input(c, 0);
    tensor *Y = kernel_output(c, 0);
    dft_ctx d;
    memset(&d, 0, sizeof d);
    TRY(dft_plan_from(c->node, X, kernel_input(c, 1), kernel_input(c, 2), &d.p));
    if (!shape_equal(Y->rank, Y->dims, X->rank, d.p.out_dims))
        return onyx_error(ONYX_ERR_SHAPE, "output shape does not match the transform");
    d.X = X;
    d.Y = Y;
    d.L = X->dims[d.p.axis];
    d.Lout = Y->dims[d.p.axis];
    d.cin = X->dims[X->rank - 1];
    d.cout = Y->dims[Y->rank - 1];
    int64_t outer = 1;
    d.inner = 1;
    for (int i = 0; i < d.p.axis; i++) outer *= X->dims[i];
    for (int i = d.p.axis + 1; i < X->rank - 1; i++) d.inner *= X->dims[i];
    if (Y->numel == 0) return ONYX_OK;
    fft_state local;
    block_job j = {.lines = outer * d.inner, .line = dft_line, .ctx = &d};
    TRY(fft_setup(c, d.p.length, d.p.real_in && !d.p.inverse, &local, &j));
    run_blocks(&j, d.p.length * 8);
    return ONYX_OK;
}

void cpu_fft_release(void *state) {
    fft_state_free(state);
    free(state);
}

/* ---- STFT */

typedef struct stft_ctx {
    const tensor *X, *W;
    tensor *Y;
    ops_stft_plan p;
} stft_ctx;

static void stft_line(const block_job *j, int64_t line, double *buf, double *scratch) {
    const stft_ctx *d = j->ctx;
    const ops_stft_plan *p = &d->p;
    int64_t b = line / p->frames, f = line % p->frames, n = p->frame_length;
    int64_t cin = p->real_in ? 1 : 2;
    for (int64_t k = 0; k < n; k++) {
        int64_t at = (b * p->length + f * p->step + k) * cin;
        double w = d->W ? getf(d->W, k) : 1.0;
        buf[2 * k] = getf(d->X, at) * w;
        buf[2 * k + 1] = cin == 2 ? getf(d->X, at + 1) * w : 0.0;
    }
    fft_forward(j->s, buf, scratch);
    for (int64_t k = 0; k < p->bins; k++) {
        int64_t at = ((b * p->frames + f) * p->bins + k) * 2;
        putf(d->Y, at, buf[2 * k]);
        putf(d->Y, at + 1, buf[2 * k + 1]);
    }
}

onyx_status cpu_stft_prepare(const kernel_prep *p, void **state) {
    fft_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("STFT state");
    *state = s;
    const type_info *x = p->in_type[0];
    if (!x || !type_is_static(x) || !p->in_value[1]) return ONYX_OK;
    if (p->n_in > 3 && p->in_type[3] && !p->in_value[3]) return ONYX_OK;
    tensor win;
    memset(&win, 0, sizeof win);
    const type_info *wt = p->n_in > 2 ? p->in_type[2] : NULL;
    if (wt) {
        if (!type_is_static(wt) || wt->rank != 1) return ONYX_OK;
        win.rank = 1;
        win.dims[0] = wt->dims[0];
    }
    ops_stft_plan sp;
    TRY(ops_stft_plan_make(p->node, x->rank, x->dims, p->in_value[1], wt ? &win : NULL,
                           p->n_in > 3 ? p->in_value[3] : NULL, &sp));
    return fft_state_make(s, sp.frame_length, sp.real_in, NULL);
}

onyx_status cpu_stft_run(const kernel_call *c) {
    const tensor *X = kernel_input(c, 0);
    tensor *Y = kernel_output(c, 0);
    stft_ctx d;
    memset(&d, 0, sizeof d);
    d.X = X;
    d.W = kernel_input(c, 2);
    d.Y = Y;
    TRY(ops_stft_plan_make(c->node, X->rank, X->dims, kernel_input(c, 1), d.W, kernel_input(c, 3), &d.p));
    if (d.W && d.W->dtype != X->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "window has type %s, expected %s",
                          onyx_dtype_name(d.W->dtype), onyx_dtype_name(X->dtype));
    int64_t want[4] = {d.p.batch, d.p.frames, d.p.bins, 2};
    if (!shape_equal(Y->rank, Y->dims, 4, want))
        return onyx_error(ONYX_ERR_SHAPE, "output shape does not match the frames");
    if (Y->numel == 0) return ONYX_OK;
    fft_state local;
    block_job j = {.lines = d.p.batch * d.p.frames, .line = stft_line, .ctx = &d};
    TRY(fft_setup(c, d.p.frame_length, d.p.real_in, &local, &j));
    run_blocks(&j, d.p.frame_length * 8);
    return ONYX_OK;
}

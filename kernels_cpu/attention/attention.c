/* CPU kernels of Attention and FlexAttention: Q*K^T and P*V per (batch, head, block of query rows)
 * through BLAS with the scale folded into alpha, over the keys the causal band and v25's sliding
 * window leave the block; softcap, masks and a numerically stable softmax fused in one pass over
 * each score row. float16/bfloat16 compute in float (rounded once, at the output), double in
 * double. The geometry is the plan's (kernel_attention, core/op_params.h). Working memory is the
 * run context's scratch (kernel_scratch), kept across runs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/exec_run.h"
#include "core/fuse_chain.h"
#include "core/parallel.h"
#include "ops/attention/attention_common.h"
#include "kernels_cpu/common/blas.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/vmath.h"

/* Query rows per task: rows = SCORE_BLOCK / total length (or / the value head, where that is
 * longer: the task's output block), at least MIN_ROWS (products big enough for BLAS), few enough
 * that every thread gets a task (long sequences of few heads split across threads), and the rows
 * of a head shared evenly among its blocks. Bigger blocks run the products faster (each packs K
 * and V once for more rows) than the softmax loses when its block leaves the L2 cache: 6 heads
 * of 1500 positions took 22.0 ms in blocks of 64K scores, 19.3 ms in blocks of 1M (500 rows),
 * and shorter sequences take a whole head per task either way (ViT's 197 positions ran 1.5x
 * slower in blocks of 64 rows). A causal block computes keys up to its last row's, so causal
 * blocks (is_causal, or a mask that closes most keys to the first row) stay small. The blocks
 * of all threads together stay within SCORE_BUDGET (16 MB). */
#define MIN_ROWS 64
#define SCORE_BLOCK ((int64_t)1024 * 1024)
#define SCORE_BLOCK_CAUSAL ((int64_t)64 * 1024)
#define SCORE_BUDGET ((int64_t)4 * 1024 * 1024)
#define ALIGN 64

/* ---------------------------------------------------------------- element conversions */

static double ld_f64(const void *p, onyx_dtype t, int64_t i) {
    switch (t) {
    case ONYX_FLOAT16: return cpu_fp16_to_float(((const uint16_t *)p)[i]);
    case ONYX_BFLOAT16: return cpu_bf16_to_float(((const uint16_t *)p)[i]);
    case ONYX_BOOL: return ((const uint8_t *)p)[i] != 0;
#define LD_CASE(D, T)                                                                              \
    case D: return (double)((const T *)p)[i];
        CPU_FOR_NUMERIC(LD_CASE)
#undef LD_CASE
    default: return 0;
    }
}

/* n elements from src (dtype sd) into dst (dtype dd), for the float family and (as sources)
 * integers; the common float <-> half pairs take vectorized loops. */
static void cvt(void *dst, onyx_dtype dd, const void *src, onyx_dtype sd, int64_t n) {
    if (n <= 0) return;
    if (dd == sd) {
        memcpy(dst, src, (size_t)n * dtype_size(dd));
        return;
    }
    float *df = dst;
    const float *sf = src;
    uint16_t *dh = dst;
    const uint16_t *sh = src;
    if (dd == ONYX_FLOAT && sd == ONYX_FLOAT16) {
        CPU_SIMD for (int64_t i = 0; i < n; i++) df[i] = cpu_fp16_to_float(sh[i]);
    } else if (dd == ONYX_FLOAT && sd == ONYX_BFLOAT16) {
        CPU_SIMD for (int64_t i = 0; i < n; i++) df[i] = cpu_bf16_to_float(sh[i]);
    } else if (dd == ONYX_FLOAT16 && sd == ONYX_FLOAT) {
        CPU_SIMD for (int64_t i = 0; i < n; i++) dh[i] = cpu_float_to_fp16(sf[i]);
    } else if (dd == ONYX_BFLOAT16 && sd == ONYX_FLOAT) {
        CPU_SIMD for (int64_t i = 0; i < n; i++) dh[i] = cpu_float_to_bf16(sf[i]);
    } else {
        for (int64_t i = 0; i < n; i++) {
            double v = ld_f64(src, sd, i);
            switch (dd) {
            case ONYX_FLOAT: df[i] = (float)v; break;
            case ONYX_DOUBLE: ((double *)dst)[i] = v; break;
            case ONYX_FLOAT16: dh[i] = cpu_float_to_fp16((float)v); break;
            case ONYX_BFLOAT16: dh[i] = cpu_float_to_bf16((float)v); break;
            default: break;
            }
        }
    }
}

static void *at(const void *base, onyx_dtype t, int64_t elem) {
    return (char *)base + elem * (int64_t)dtype_size(t);
}

/* A mask row as additive bias in dtype fd: bool true -> 0, false -> -inf; numbers as they are. */
static void mask_row(void *dst, onyx_dtype fd, const tensor *m, int64_t off, int64_t n) {
    if (m->dtype != ONYX_BOOL) {
        cvt(dst, fd, at(m->data, m->dtype, off), m->dtype, n);
        return;
    }
    const uint8_t *p = (const uint8_t *)m->data + off;
    if (fd == ONYX_FLOAT)
        for (int64_t j = 0; j < n; j++) ((float *)dst)[j] = p[j] ? 0.0f : -INFINITY;
    else
        for (int64_t j = 0; j < n; j++) ((double *)dst)[j] = p[j] ? 0.0 : -INFINITY;
}

/* dst[B, H, P+S, D] (dtype dd) = past[B, H, P, D] (NULL: P = 0) followed by the S rows of each
 * (b, h) of src, whose row r of head h in batch b starts at element b*sb + h*sh + r*sr. */
static void fill_cache(void *dst, onyx_dtype dd, const tensor *past, const void *src,
                       onyx_dtype sd, int64_t sb, int64_t sh, int64_t sr, int64_t B, int64_t H,
                       int64_t P, int64_t S, int64_t D) {
    int64_t T = P + S;
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++) {
            int64_t row0 = (b * H + h) * T;
            if (past)
                cvt(at(dst, dd, row0 * D), dd, at(past->data, past->dtype, (b * H + h) * P * D),
                    past->dtype, P * D);
            for (int64_t r = 0; r < S; r++)
                cvt(at(dst, dd, (row0 + P + r) * D), dd, at(src, sd, b * sb + h * sh + r * sr), sd,
                    D);
        }
}

/* ---------------------------------------------------------------- scratch */

/* The run context's scratch (64-byte aligned, as the regions below assume), at least one byte so
 * that region offsets always apply to a real buffer. */
static onyx_status scratch_of(const kernel_call *c, size_t n, char **out) {
    void *b;
    TRY(kernel_scratch(c, n ? n : 1, &b));
    *out = b;
    return ONYX_OK;
}

/* Byte offsets of the scratch regions; `total` 0 means nothing needed. Fails on overflow. */
typedef struct att_layout {
    size_t q, k, v, slots, slot_bytes, bias, out, total;
    int64_t nslots, rows; /* rows: query rows per task */
} att_layout;

static bool region(size_t *total, size_t *off, int64_t elems, size_t esz) {
    if (elems < 0 || (uint64_t)elems > (SIZE_MAX / 2) / esz) return false;
    *off = *total;
    size_t n = ((size_t)elems * esz + ALIGN - 1) / ALIGN * ALIGN;
    if (*total > SIZE_MAX / 2 - n) return false;
    *total += n;
    return true;
}

static bool mul_ok(int64_t *acc, int64_t v) {
    return v >= 0 && !__builtin_mul_overflow(*acc, v, acc);
}

static onyx_dtype compute_type(onyx_dtype t) { return t == ONYX_DOUBLE ? ONYX_DOUBLE : ONYX_FLOAT; }

/* A single query position (decoding) with grouped heads: the query heads sharing a kv head
 * become the rows of one product, so K and V are read once per group instead of once per head. */
static bool heads_as_rows(const geom_attention *d) {
    return d->q_len == 1 && d->kv_heads > 0 && d->q_heads > d->kv_heads;
}

/* rows per (batch, head), or per (batch, kv head) when heads are the rows */
static int64_t head_rows(const geom_attention *d) {
    return heads_as_rows(d) ? d->q_heads / d->kv_heads : d->q_len;
}

static int64_t row_units(const geom_attention *d) {
    return d->batch * (heads_as_rows(d) ? d->kv_heads : d->q_heads);
}

static int64_t block_rows(const geom_attention *d, int threads, bool banded) {
    int64_t rows = head_rows(d), units = row_units(d);
    int64_t width = d->total_len > d->v_head ? d->total_len : d->v_head; /* also bounds out */
    int64_t block = banded ? SCORE_BLOCK_CAUSAL : SCORE_BLOCK;
    if (threads > 0 && SCORE_BUDGET / threads < block)
        block = SCORE_BUDGET / threads > SCORE_BLOCK_CAUSAL ? SCORE_BUDGET / threads
                                                           : SCORE_BLOCK_CAUSAL;
    int64_t r = width > 0 ? block / width : rows;
    if (r < MIN_ROWS) r = MIN_ROWS;
    if (units > 0 && units < threads) { /* split each unit's rows across the threads */
        int64_t parts = (threads + units - 1) / units, share = (rows + parts - 1) / parts;
        if (r > share) r = share;
    }
    if (r > rows) r = rows;
    if (r < 1) return 1;
    int64_t blocks = (rows + r - 1) / r; /* as few as r allows, of equal rows */
    return (rows + blocks - 1) / blocks;
}

static int64_t row_blocks(const geom_attention *d, int64_t rows_per_task) {
    return (head_rows(d) + rows_per_task - 1) / rows_per_task;
}

static int64_t task_count(const geom_attention *d, int64_t rows_per_task) {
    return row_units(d) * row_blocks(d, rows_per_task);
}

/* Attention's scratch: float copies of Q/K/V where they need converting or concatenating with
 * a past cache (K/V go straight into present_* when that has the compute type), and per slot
 * (one per thread) a score block, a bias row and an output block. */
static bool att_layout_of(const geom_attention *d, onyx_dtype qt, onyx_dtype vt, bool past,
                          bool present_k, bool present_v, bool banded, int threads,
                          att_layout *L) {
    onyx_dtype fd = compute_type(qt);
    size_t fsz = dtype_size(fd);
    memset(L, 0, sizeof *L);
    int64_t qn = d->batch, kn = d->batch, vn = d->batch;
    if (!mul_ok(&qn, d->q_heads) || !mul_ok(&qn, d->q_len) || !mul_ok(&qn, d->head) ||
        !mul_ok(&kn, d->kv_heads) || !mul_ok(&kn, d->total_len) || !mul_ok(&kn, d->head) ||
        !mul_ok(&vn, d->kv_heads) || !mul_ok(&vn, d->total_len) || !mul_ok(&vn, d->v_head))
        return false;
    size_t unused = 0;
    if (!region(&L->total, qt != fd ? &L->q : &unused, qt != fd ? qn : 0, fsz)) return false;
    bool need_k = (past || qt != fd) && !(present_k && qt == fd);
    bool need_v = (past || vt != fd) && !(present_v && vt == fd);
    if (!region(&L->total, &L->k, need_k ? kn : 0, fsz)) return false;
    if (!region(&L->total, &L->v, need_v ? vn : 0, fsz)) return false;
    L->rows = block_rows(d, threads, banded);
    int64_t tasks = task_count(d, L->rows);
    L->nslots = tasks < threads ? tasks : threads;
    if (L->nslots < 1) L->nslots = 1;
    size_t slot = 0;
    int64_t sc = L->rows, out = L->rows;
    if (!mul_ok(&sc, d->total_len) || !mul_ok(&out, d->v_head)) return false;
    if (!region(&slot, &unused, sc, fsz) || !region(&slot, &L->bias, d->total_len, fsz) ||
        !region(&slot, &L->out, out, fsz))
        return false;
    L->slot_bytes = slot;
    if ((uint64_t)L->nslots > (SIZE_MAX / 4) / (slot ? slot : 1)) return false;
    L->slots = L->total;
    L->total += (size_t)L->nslots * slot;
    return true;
}

/* The softmax's passes over a score row: float through vmath's vector paths (NaN anywhere makes
 * the max NaN, and the row NaN as the reference has it), double in plain loops. */
static float att_max_f32(const float *row, int64_t n) { return cpu_vmath_get()->max(row, n); }
static float att_expsum_f32(float *row, int64_t n, float mx) {
    return cpu_vmath_get()->exp_sum(row, row, n, mx);
}
static void att_scale_f32(float *row, int64_t n, float a) {
    cpu_vmath_get()->affine(row, row, n, a, 0);
}
static double att_max_f64(const double *row, int64_t n) {
    double mx = -INFINITY;
    for (int64_t j = 0; j < n; j++) mx = row[j] > mx || isnan(row[j]) ? row[j] : mx;
    return mx;
}
static double att_expsum_f64(double *row, int64_t n, double mx) {
    double sum = 0;
    for (int64_t j = 0; j < n; j++) {
        row[j] = exp(row[j] - mx);
        sum += row[j];
    }
    return sum;
}
static void att_scale_f64(double *row, int64_t n, double a) {
    for (int64_t j = 0; j < n; j++) row[j] *= a;
}

/* ---------------------------------------------------------------- Attention */

typedef struct att_ctx {
    geom_attention d;
    onyx_dtype fd;
    const void *q, *k, *v; /* in the compute type */
    int64_t qs[3], ks[3], vs[3], ys[3]; /* element strides of batch, head, row */
    void *y;
    onyx_dtype yt;
    void *qk;
    onyx_dtype qkt;
    int mode;
    const tensor *mask;
    int64_t ms[3], mlen;
    bool mbcast;
    const int64_t *nonpad;
    bool causal;
    int64_t left, right;  /* v25's window sides; -1: unbounded (set both, 0 is a window) */
    double scale, softcap;
    bool hr;              /* heads_as_rows */
    bool zero_masked;     /* the Attention op: a row its bias masks out entirely is 0, not the
                             NaN of a spelled-out Softmax (a fused chain keeps that) */
    bool nan_zero;        /* probabilities that are NaN count as 0 (a fused chain's) */
    bool kt_rows;         /* k points at K^T: rows of Dk elements are its columns (ks[2]: the
                             distance between K^T's rows); else at K's rows */
    int64_t rows, nblk, tasks, nslots; /* rows: query rows per task */
    char *slots;
    size_t slot_bytes, off_bias, off_out;
} att_ctx;

/* strides of [B, H, S, D] (4-D) or [B, S, H*D] (3-D) */
static void view_strides(bool packed, int64_t H, int64_t S, int64_t D, int64_t *s) {
    s[0] = H * S * D;
    s[1] = packed ? D : S * D;
    s[2] = packed ? H * D : D;
}

static void store_qk(const att_ctx *x, const void *row, int64_t b, int64_t h, int64_t i) {
    int64_t T = x->d.total_len;
    cvt(at(x->qk, x->qkt, ((b * x->d.q_heads + h) * x->d.q_len + i) * T), x->qkt, row, x->fd, T);
}

/* Whether mask element j of a row masks its column out: -inf (or false), or so far below any
 * score (< -1e30, as torch.finfo(float).min) that exp gives 0 for it all the same. */
static bool masked_out(const tensor *m, int64_t j) {
    return m->dtype == ONYX_BOOL ? !((const uint8_t *)m->data)[j]
                                 : ((const float *)m->data)[j] <= -1e30f;
}

/* Whether mask m (rows of mlen keys; bcast: one value a row) closes most keys to its first query
 * row (of the first batch and head): a causal band, best computed in small blocks of rows, which
 * stop at their last row's key. */
static bool banded_mask(const tensor *m, int64_t mlen, bool bcast) {
    if (!m || bcast || mlen < 2 || m->numel < mlen ||
        (m->dtype != ONYX_FLOAT && m->dtype != ONYX_BOOL))
        return false;
    int64_t j = mlen - 1;
    while (j >= 0 && masked_out(m, j)) j--;
    return j >= 0 && j + 1 < mlen / 2;
}

/* How many of the first nc columns a task's rows (i0.. or, hr, heads hb..) need computed: past
 * the last column some row's mask leaves open (a causal mask's diagonal, a key padding mask's
 * last key) every row's probability is 0, so the products stop there. nc itself when a row is
 * masked out entirely (a fused chain's softmax keeps its NaN row, one of values below -1e30 its
 * uniform row) or when the mask is of another type or broadcast along the keys. */
static int64_t open_columns(const att_ctx *x, int64_t b, int64_t hb, int64_t i0, int64_t rb,
                            int64_t nc) {
    const tensor *m = x->mask;
    if (x->mbcast || (m->dtype != ONYX_FLOAT && m->dtype != ONYX_BOOL)) return nc;
    int64_t len = x->mlen < nc ? x->mlen : nc, open = 0; /* columns past mlen are -inf */
    /* Last row first (a causal mask's widest), each scanned back only to the columns open so
     * far, and from the front for one open column when none is past them: linear in the
     * block, where scanning every row's closed tail was quadratic (GPT-2: 1 ms a run). */
    for (int64_t r = rb - 1; r >= 0 && open < nc; r--) {
        int64_t h = x->hr ? hb + r : hb, i = x->hr ? 0 : i0 + r;
        int64_t off = b * x->ms[0] + h * x->ms[1] + i * x->ms[2], j = len - 1;
        while (j >= open && masked_out(m, off + j)) j--;
        if (j >= open) {
            open = j + 1;
            continue;
        }
        int64_t k = 0;
        while (k < open && masked_out(m, off + k)) k++;
        if (k == open) return nc; /* masked out entirely */
    }
    return open;
}

static int64_t sat_add(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* The keys [*lo, *hi) that query position i of batch b may see past the causal band, the window
 * and the valid lengths (hi <= lo: none), before the mask. Both bounds are aligned at the
 * position's absolute place p = i + offset: offset is past_sequence_length with a past cache,
 * nonpad_kv_seqlen - q_sequence_length with an external one (the two never come together), else
 * 0. Saturating: a nonpad_kv_seqlen or window of any size lands outside [0, total]. */
static void row_keys(const att_ctx *x, int64_t b, int64_t i, int64_t *lo, int64_t *hi) {
    int64_t off = x->nonpad ? sat_add(x->nonpad[b], -x->d.q_len) : x->d.past_len;
    int64_t p = sat_add(i, off), a = 0, e = x->d.total_len;
    if (x->left >= 0 && sat_add(p, -x->left) > a) a = sat_add(p, -x->left);
    if (x->causal && sat_add(p, 1) < e) e = sat_add(p, 1);
    if (x->right >= 0 && sat_add(sat_add(p, x->right), 1) < e) e = sat_add(sat_add(p, x->right), 1);
    if (x->nonpad && x->nonpad[b] < e) e = x->nonpad[b];
    *lo = a;
    *hi = e > a ? e : a;
}

/* Whether bias[lo, hi) is -inf throughout: with the causal band and the window, a row the mask
 * leaves no key (the reference's guard looks at the bias, not at the scores). */
#define DEFINE_ALL_NEGINF(N, F)                                                                    \
    static bool N##_all_neginf(const F *bias, int64_t lo, int64_t hi) {                            \
        for (int64_t j = lo; j < hi; j++)                                                          \
            if (bias[j] != (F)-INFINITY) return false;                                             \
        return true;                                                                               \
    }
DEFINE_ALL_NEGINF(f32, float)
DEFINE_ALL_NEGINF(f64, double)

#define DEFINE_ATT(N, F, GEMM, GEMV, MAX, EXPSUM, SCALE, TANH)                                     \
    /* softmax over row[0, n) with n >= 1; a row of -inf only (max -inf) is 0 where zero_empty     \
     * (the Attention op), else NaN as a spelled-out Softmax makes it */                          \
    static void N##_softmax(F *row, int64_t n, bool zero_empty) {                                  \
        F mx = MAX(row, n);                                                                        \
        if (mx == -INFINITY) {                                                                     \
            for (int64_t j = 0; j < n; j++) row[j] = zero_empty ? 0 : (F)NAN;                      \
            return;                                                                                \
        }                                                                                          \
        SCALE(row, n, 1 / EXPSUM(row, n, mx));                                                     \
    }                                                                                              \
    /* C[m, n] = alpha A[m, k] B^T (tb) or A B, with gemv for one row (OpenBLAS's gemm packs the  \
     * whole other operand even then) */                                                          \
    static void N##_mm(bool tb, int64_t m, int64_t n, int64_t k, F alpha, const F *a, int64_t lda, \
                       const F *b, int64_t ldb, F *c, int64_t ldc) {                               \
        if (m == 1) {                                                                              \
            memset(c, 0, (size_t)n * sizeof(F)); /* not beta 0: some gemv let NaN through */      \
            GEMV(!tb, tb ? n : k, tb ? k : n, alpha, b, ldb, a, 1, c);                             \
            return;                                                                                \
        }                                                                                          \
        GEMM(false, tb, m, n, k, alpha, a, lda, b, ldb, 0, c, ldc);                                \
    }                                                                                              \
    static void N##_att_slots(void *vctx, int64_t s0, int64_t s1) {                                \
        const att_ctx *x = vctx;                                                                   \
        const geom_attention *d = &x->d;                                                           \
        const int64_t T = d->total_len, Dk = d->head, Dv = d->v_head,                              \
                      group = d->q_heads / d->kv_heads;                                            \
        const F cap = (F)x->softcap;                                                               \
        for (int64_t s = s0; s < s1; s++) {                                                        \
            char *slot = x->slots + (size_t)s * x->slot_bytes;                                     \
            F *sc = (F *)slot, *bias = (F *)(slot + x->off_bias), *ob = (F *)(slot + x->off_out);  \
            /* strided, not contiguous: causal blocks grow with the row index */                  \
            for (int64_t t = s; t < x->tasks; t += x->nslots) {                                    \
                /* rows r of the task are query positions i0 + r of head hb, or (hr) position 0   \
                 * of heads hb + r */                                                              \
                int64_t blk = t % x->nblk, bh = t / x->nblk, b, hb, kh, i0, rb;                    \
                if (x->hr) {                                                                       \
                    b = bh / d->kv_heads;                                                          \
                    kh = bh % d->kv_heads;                                                         \
                    hb = kh * group + blk * x->rows;                                             \
                    i0 = 0;                                                                        \
                    rb = group - blk * x->rows;                                                  \
                } else {                                                                           \
                    b = bh / d->q_heads;                                                           \
                    hb = bh % d->q_heads;                                                          \
                    kh = hb / group;                                                               \
                    i0 = blk * x->rows;                                                          \
                    rb = d->q_len - i0;                                                            \
                }                                                                                  \
                if (rb > x->rows) rb = x->rows;                                                \
                int64_t q_ld = x->hr ? x->qs[1] : x->qs[2], y_ld = x->hr ? x->ys[1] : x->ys[2];    \
                const F *q = (const F *)x->q + b * x->qs[0] + hb * x->qs[1] + i0 * x->qs[2];       \
                const F *k = (const F *)x->k + b * x->ks[0] + kh * x->ks[1];                       \
                const F *v = (const F *)x->v + b * x->vs[0] + kh * x->vs[1];                       \
                /* keys [c0, c0 + nc): those no row of the block may attend to are never          \
                 * computed (unless the Q*K^T output wants them); a row's keys only move right    \
                 * with its position, so the first row bounds them below and the last above */    \
                int64_t c0 = 0, nc = T;                                                            \
                if (!x->qk) {                                                                      \
                    int64_t lo, hi, lo1, hi1;                                                      \
                    row_keys(x, b, i0, &lo, &hi);                                                  \
                    row_keys(x, b, x->hr ? 0 : i0 + rb - 1, &lo1, &hi1);                           \
                    c0 = lo < T ? lo : T;                                                          \
                    nc = (hi1 < T ? hi1 : T) - c0;                                                 \
                    if (x->mask && nc > 1) nc = open_columns(x, b, hb, i0, rb, c0 + nc) - c0;      \
                    if (nc < 0) nc = 0;                                                            \
                }                                                                                  \
                if (nc > 0 && Dk > 0)                                                              \
                    N##_mm(!x->kt_rows, rb, nc, Dk, (F)x->scale, q, q_ld,                          \
                           k + (x->kt_rows ? c0 : c0 * x->ks[2]), x->ks[2], sc, nc);               \
                else                                                                               \
                    memset(sc, 0, (size_t)(rb * nc) * sizeof(F));                                  \
                for (int64_t r = 0; r < rb; r++) {                                                 \
                    F *row = sc + r * nc;                                                          \
                    int64_t h = x->hr ? hb + r : hb, i = x->hr ? 0 : i0 + r, lo, hi;               \
                    row_keys(x, b, i, &lo, &hi); /* then relative to c0, within the block's */     \
                    lo = lo < c0 ? 0 : lo - c0 < nc ? lo - c0 : nc;                                \
                    hi = hi < c0 + lo ? lo : hi - c0 < nc ? hi - c0 : nc;                          \
                    if (x->qk && x->mode == 0) store_qk(x, row, b, h, i);                          \
                    if (cap > 0)                                                                   \
                        for (int64_t j = 0; j < nc; j++) row[j] = cap * TANH(row[j] / cap);        \
                    if (x->qk && x->mode == 1) store_qk(x, row, b, h, i);                          \
                    bool empty = hi <= lo;                                                         \
                    if (x->mask) {                                                                 \
                        int64_t moff = b * x->ms[0] + h * x->ms[1] + i * x->ms[2], m;              \
                        if (x->mbcast) {                                                           \
                            m = 1;                                                                 \
                        } else {                                                                   \
                            m = x->mlen - c0 < nc ? x->mlen - c0 : nc;                             \
                            moff += c0;                                                            \
                        }                                                                          \
                        if (m > 0) mask_row(bias, x->fd, x->mask, moff, m);                        \
                        F fill = x->mbcast ? bias[0] : (F)-INFINITY;                               \
                        for (int64_t j = m > 0 ? m : 0; j < nc; j++) bias[j] = fill;               \
                        CPU_SIMD for (int64_t j = 0; j < nc; j++) row[j] += bias[j];               \
                        if (x->zero_masked && !empty) empty = N##_all_neginf(bias, lo, hi);        \
                    }                                                                              \
                    if (x->qk && x->mode == 2) {                                                   \
                        for (int64_t j = 0; j < lo; j++) row[j] = -INFINITY;                       \
                        for (int64_t j = hi; j < nc; j++) row[j] = -INFINITY;                      \
                        store_qk(x, row, b, h, i);                                                 \
                    }                                                                              \
                    if (empty && x->zero_masked) { /* no key left: the reference's zero row */     \
                        memset(row, 0, (size_t)nc * sizeof(F));                                    \
                    } else if (empty) { /* (a fused chain has no band: nc == 0 only) */            \
                        for (int64_t j = 0; j < nc; j++) row[j] = NAN;                             \
                    } else {                                                                       \
                        N##_softmax(row + lo, hi - lo, x->zero_masked);                            \
                        memset(row, 0, (size_t)lo * sizeof(F));                                    \
                        memset(row + hi, 0, (size_t)(nc - hi) * sizeof(F));                        \
                    }                                                                              \
                    if (x->qk && x->mode == 3) store_qk(x, row, b, h, i);                          \
                    if (x->nan_zero && nc > 0 && isnan(row[0])) /* NaN anywhere: all the row */    \
                        memset(row, 0, (size_t)nc * sizeof(F));                                    \
                }                                                                                  \
                if (Dv == 0) continue;                                                             \
                bool direct = x->yt == x->fd;                                                      \
                F *out = direct ? (F *)x->y + b * x->ys[0] + hb * x->ys[1] + i0 * x->ys[2] : ob;   \
                int64_t ldo = direct ? y_ld : Dv;                                                  \
                if (nc > 0)                                                                        \
                    N##_mm(false, rb, Dv, nc, 1, sc, nc, v + c0 * x->vs[2], x->vs[2], out, ldo);   \
                else                                                                               \
                    for (int64_t r = 0; r < rb; r++)                                               \
                        memset(out + r * ldo, 0, (size_t)Dv * sizeof(F));                         \
                if (!direct) {                                                                     \
                    int64_t y0 = b * x->ys[0] + hb * x->ys[1] + i0 * x->ys[2];                     \
                    for (int64_t r = 0; r < rb; r++)                                               \
                        cvt(at(x->y, x->yt, y0 + r * y_ld), x->yt, ob + r * Dv, x->fd, Dv);        \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

DEFINE_ATT(f32, float, cpu_sgemm, cpu_sgemv, att_max_f32, att_expsum_f32, att_scale_f32, tanhf)
DEFINE_ATT(f64, double, cpu_dgemm, cpu_dgemv, att_max_f64, att_expsum_f64, att_scale_f64, tanh)

/* ---------------------------------------------------------------- Attention spelled out */

/* The geometry of an attention chain the fusion pass made (core/fuse.h): Q, K^T, V and the
 * output as strided views of the fused step's tensors (from element offset[i] of each), the
 * mask's strides. */
typedef struct att_fused {
    geom_attention d;
    int64_t qs[3], ks[3], vs[3], ys[3], ms[3], mlen;
    int64_t offset[4]; /* Q, K^T, output, V: fuse_chain's view order */
    bool kt_rows, mbcast, nan_zero;
    float scale;
} att_fused;

/* The (batch, head, row) strides of a rank-3 ([heads, rows, cols], batch 1) or rank-4 view. */
static void batch_head_row(const int64_t *strides, int rank, int64_t *s) {
    s[0] = rank == 4 ? strides[0] : 0;
    s[1] = strides[rank - 3];
    s[2] = strides[rank - 2];
}

/* A fused chain (core/fuse.h) as this kernel reads it, into *f, its geometry the plan's (the
 * fusion pass resolved it from these views): NULL where it applies, else why not. */
static const char *chain_geometry(const kernel_prep *p, att_fused *f) {
    const fuse_chain *fc = p->fused;
    const geom_attention *g = op_params_attention(p->params);
    if (!g || g->form != GEOM_ATT_CHAIN) return "the plan handed no geometry of a chain";
    int r = fc->view_rank[0];
    for (int i = 1; i < 4; i++)
        if (fc->view_rank[i] != r) r = 0;
    if (r != 3 && r != 4) return "views not all of rank 3 or all of rank 4";
    const int64_t *qd = fc->view_dims[0], *kd = fc->view_dims[1], *vd = fc->view_dims[3];
    if (qd[r - 3] != g->q_heads || qd[r - 2] != g->q_len || qd[r - 1] != g->head ||
        kd[r - 1] != g->total_len || vd[r - 1] != g->v_head)
        return "the plan's geometry is for other views";
    const int64_t *kst = fc->view_strides[1];
    *f = (att_fused){.d = *g, .scale = fc->in_scale, .nan_zero = fc->nan_to_zero};
    memcpy(f->offset, fc->view_offset, sizeof f->offset);
    batch_head_row(fc->view_strides[0], r, f->qs);
    batch_head_row(kst, r, f->ks);
    batch_head_row(fc->view_strides[3], r, f->vs);
    batch_head_row(fc->view_strides[2], r, f->ys);
    /* K^T [.., Dk, T]: K's rows are its columns, a column apart (kst[r - 1]) when its own rows
     * are not contiguous */
    f->kt_rows = kst[r - 2] != 1;
    f->ks[2] = f->kt_rows ? kst[r - 2] : kst[r - 1];
    int64_t S = g->q_len, T = g->total_len, Dk = g->head, Dv = g->v_head;
    if (fc->view_strides[0][r - 1] != 1 || fc->view_strides[3][r - 1] != 1 ||
        fc->view_strides[2][r - 1] != 1 || (f->kt_rows && kst[r - 1] != 1))
        return "views' rows are not contiguous";
    if (p->n_in > 3 && p->in_type[3]) { /* the mask, broadcast to [B, H, S, T] ([H, S, T]) */
        const type_info *m = p->in_type[3];
        int64_t md[4] = {1, 1, 1, 1}, st[4];
        for (int i = 0; i < m->rank; i++) md[r - m->rank + i] = m->dims[i];
        st[r - 1] = 1;
        for (int i = r - 2; i >= 0; i--) st[i] = st[i + 1] * md[i + 1];
        int64_t ms[4] = {0};
        for (int i = 0; i < r; i++) ms[i] = md[i] == 1 ? 0 : st[i];
        f->ms[0] = r == 4 ? ms[0] : 0;
        f->ms[1] = ms[r - 3];
        f->ms[2] = ms[r - 2];
        f->mlen = md[r - 1];
        f->mbcast = f->mlen == 1 && T > 1;
    }
    if (!cpu_blas_dims_ok(S, T, Dk > Dv ? Dk : Dv)) return "sizes exceed BLAS's int range";
    return NULL;
}

bool cpu_attention_takes_chain(const kernel_prep *p) {
    att_fused f;
    return p->fused && p->fused->attention && !chain_geometry(p, &f);
}

onyx_status cpu_attention_prepare(const kernel_prep *p, void **state) {
    const fuse_chain *fc = p->fused;
    *state = NULL;
    if (!fc || !fc->attention) return ONYX_OK;
    att_fused f;
    const char *refused = chain_geometry(p, &f);
    if (refused) return onyx_error(ONYX_ERR_UNSUPPORTED, "fused attention: %s", refused);
    att_fused *out = malloc(sizeof *out);
    if (!out) return onyx_oom("fused attention");
    *out = f;
    *state = out;
    return ONYX_OK;
}

void cpu_attention_release(void *state) { free(state); }

static onyx_status fused_run(const kernel_call *c, const att_fused *f) {
    const tensor *Q = kernel_input(c, 0), *K = kernel_input(c, 1), *V = kernel_input(c, 2),
                 *M = kernel_input(c, 3);
    tensor *Y = kernel_output(c, 0);
    if (!Q || !K || !V || Q->dtype != ONYX_FLOAT || K->dtype != ONYX_FLOAT ||
        V->dtype != ONYX_FLOAT || Y->dtype != ONYX_FLOAT || (M && M->dtype != ONYX_FLOAT))
        return onyx_error(ONYX_ERR_SHAPE, "fused attention takes float tensors");
    if (Y->numel == 0) return ONYX_OK;
    int threads = parallel_threads();
    att_layout L;
    if (!att_layout_of(&f->d, ONYX_FLOAT, ONYX_FLOAT, false, false, false,
                       banded_mask(M, f->mlen, f->mbcast), threads, &L))
        return onyx_error(ONYX_ERR_NO_MEMORY, "attention scratch size overflows");
    char *buf;
    TRY(scratch_of(c, L.total, &buf));
    att_ctx x = {.d = f->d, .fd = ONYX_FLOAT, .q = (const float *)Q->data + f->offset[0],
                 .k = (const float *)K->data + f->offset[1],
                 .v = (const float *)V->data + f->offset[3],
                 .y = (float *)Y->data + f->offset[2], .yt = ONYX_FLOAT, .qkt = ONYX_FLOAT,
                 .mask = M, .mlen = f->mlen, .mbcast = f->mbcast, .left = -1, .right = -1,
                 .scale = f->scale,
                 .kt_rows = f->kt_rows, .nan_zero = f->nan_zero, .rows = L.rows, .nslots = L.nslots,
                 .slots = buf + L.slots, .slot_bytes = L.slot_bytes, .off_bias = L.bias,
                 .off_out = L.out};
    memcpy(x.qs, f->qs, sizeof x.qs);
    memcpy(x.ks, f->ks, sizeof x.ks);
    memcpy(x.vs, f->vs, sizeof x.vs);
    memcpy(x.ys, f->ys, sizeof x.ys);
    memcpy(x.ms, f->ms, sizeof x.ms);
    x.nblk = row_blocks(&f->d, L.rows);
    x.tasks = task_count(&f->d, L.rows);
    if (x.tasks > 0) parallel_for(x.nslots, 1, f32_att_slots, &x);
    return ONYX_OK;
}

/* Working memory comes from kernel_scratch, so Attention keeps no state but a fused chain's
 * geometry: concurrent runs share nothing they write. */
onyx_status cpu_attention_run(const kernel_call *c) {
    if (c->state) return fused_run(c, c->state);
    const tensor *Q = kernel_input(c, 0), *K = kernel_input(c, 1), *V = kernel_input(c, 2),
                 *M = kernel_input(c, 3), *PK = kernel_input(c, 4), *PV = kernel_input(c, 5),
                 *NP = kernel_input(c, 6);
    tensor *Y = kernel_output(c, 0), *PKo = kernel_output(c, 1), *PVo = kernel_output(c, 2),
           *QK = kernel_output(c, 3);
    const graph_node *n = c->node;
    if (!Q || !K || !V) return onyx_error(ONYX_ERR_SHAPE, "Q, K and V must be tensors");
    const geom_attention *g;
    TRY(kernel_attention(c->params, GEOM_ATT_ONNX, Q->numel, &g));
    const geom_attention d = *g;
    if (NP && (NP->dtype != ONYX_INT64 || NP->rank != 1 || NP->dims[0] != d.batch))
        return onyx_error(ONYX_ERR_SHAPE, "nonpad_kv_seqlen must be int64 of shape [%lld]",
                          (long long)d.batch);
    if (NP && PK) /* no offset for the causal band and the window (ops/attention/attention.c) */
        return onyx_error(ONYX_ERR_INVALID_MODEL, "nonpad_kv_seqlen cannot be combined with "
                          "past_key and past_value");
    int64_t left = attr_int(n, "left_window_size", -1);
    int64_t right = attr_int(n, "right_window_size", -1);
    if (left < -1 || right < -1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "window sizes %lld and %lld, expected -1 or >= 0",
                          (long long)left, (long long)right);
    if (Y->numel == 0 && !PKo && !PVo && !QK) return ONYX_OK;

    att_ctx x = {.d = d, .fd = compute_type(Q->dtype)};
    int threads = parallel_threads();
    att_layout L;
    bool causal = attr_int(n, "is_causal", 0) != 0;
    int64_t mlen = M && M->rank > 0 ? M->dims[M->rank - 1] : 1;
    bool banded = causal || left >= 0 || right >= 0 ||
                  (M && !QK && banded_mask(M, mlen, n->version < 24 && mlen == 1 &&
                                                                 d.total_len > 1));
    if (!att_layout_of(&d, Q->dtype, V->dtype, PK != NULL, PKo != NULL, PVo != NULL, banded,
                       threads, &L))
        return onyx_error(ONYX_ERR_NO_MEMORY, "attention scratch size overflows");
    char *buf;
    TRY(scratch_of(c, L.total, &buf));

    int64_t qs[3], ks[3], vs[3], cache_k[3], cache_v[3];
    view_strides(d.packed, d.q_heads, d.q_len, d.head, qs);
    view_strides(d.packed, d.kv_heads, d.kv_len, d.head, ks);
    view_strides(d.packed, d.kv_heads, d.kv_len, d.v_head, vs);
    view_strides(false, d.kv_heads, d.total_len, d.head, cache_k);
    view_strides(false, d.kv_heads, d.total_len, d.v_head, cache_v);

    /* Q in the compute type, same layout */
    x.q = Q->data;
    memcpy(x.qs, qs, sizeof qs);
    if (Q->dtype != x.fd) {
        x.q = buf + L.q;
        cvt(buf + L.q, x.fd, Q->data, Q->dtype, Q->numel);
    }
    /* K and V: the tensors themselves, or [B, Hkv, total, D] caches in the compute type */
    const tensor *srcs[2] = {K, V}, *pasts[2] = {PK, PV};
    tensor *presents[2] = {PKo, PVo};
    const void **views[2] = {&x.k, &x.v};
    int64_t *vstr[2] = {x.ks, x.vs}, *sstr[2] = {ks, vs}, *cstr[2] = {cache_k, cache_v};
    size_t offs[2] = {L.k, L.v};
    int64_t dims_d[2] = {d.head, d.v_head};
    for (int i = 0; i < 2; i++) {
        const tensor *src = srcs[i];
        tensor *pres = presents[i];
        int64_t *ss = sstr[i];
        if (pasts[i] || src->dtype != x.fd) {
            bool into_present = pres && pres->dtype == x.fd;
            void *dst = into_present ? pres->data : buf + offs[i];
            fill_cache(dst, x.fd, pasts[i], src->data, src->dtype, ss[0], ss[1], ss[2], d.batch,
                       d.kv_heads, d.past_len, d.kv_len, dims_d[i]);
            if (pres && !into_present)
                fill_cache(pres->data, pres->dtype, pasts[i], src->data, src->dtype, ss[0], ss[1],
                           ss[2], d.batch, d.kv_heads, d.past_len, d.kv_len, dims_d[i]);
            *views[i] = dst;
            memcpy(vstr[i], cstr[i], 3 * sizeof(int64_t));
        } else {
            *views[i] = src->data;
            memcpy(vstr[i], ss, 3 * sizeof(int64_t));
            if (pres)
                fill_cache(pres->data, pres->dtype, NULL, src->data, src->dtype, ss[0], ss[1],
                           ss[2], d.batch, d.kv_heads, 0, d.kv_len, dims_d[i]);
        }
    }

    x.y = Y->data;
    x.yt = Y->dtype;
    view_strides(d.packed, d.q_heads, d.q_len, d.v_head, x.ys);
    x.qk = QK ? QK->data : NULL;
    x.qkt = QK ? QK->dtype : ONYX_FLOAT;
    x.mode = (int)attr_int(n, "qk_matmul_output_mode", 0);
    if (M) {
        /* align the mask's dims to [B, Hq, Sq, total]; broadcast dims read with stride 0 */
        int64_t md[4] = {1, 1, 1, 1}, st[4];
        for (int i = 0; i < M->rank; i++) md[4 - M->rank + i] = M->dims[i];
        st[3] = 1;
        for (int i = 2; i >= 0; i--) st[i] = st[i + 1] * md[i + 1];
        for (int i = 0; i < 3; i++) x.ms[i] = md[i] == 1 ? 0 : st[i];
        x.mask = M;
        x.mlen = md[3];
        x.mbcast = n->version < 24 && md[3] == 1 && d.total_len > 1;
    }
    x.nonpad = NP ? NP->data : NULL;
    x.causal = causal;
    x.left = left;
    x.right = right;
    x.zero_masked = true;
    x.scale = node_attr(n, "scale") ? attr_float(n, "scale", 0)
                                     : (d.head > 0 ? 1.0 / sqrt((double)d.head) : 1.0);
    x.softcap = attr_float(n, "softcap", 0);
    x.hr = heads_as_rows(&d);
    x.rows = L.rows;
    x.nblk = row_blocks(&d, L.rows);
    x.tasks = task_count(&d, L.rows);
    x.nslots = L.nslots;
    x.slots = buf + L.slots;
    x.slot_bytes = L.slot_bytes;
    x.off_bias = L.bias;
    x.off_out = L.out;
    if (x.tasks == 0) return ONYX_OK;
    for (int i = 0; i < 2; i++)
        if (!cpu_blas_dims_ok(L.rows, d.total_len, dims_d[i]))
            return onyx_error(ONYX_ERR_UNSUPPORTED, "attention sizes exceed BLAS's int range");
    parallel_for(x.nslots, 1, x.fd == ONYX_DOUBLE ? f64_att_slots : f32_att_slots, &x);
    return ONYX_OK;
}

/* ---------------------------------------------------------------- FlexAttention */

/* The modifier subgraphs see the whole (B, Hq, L, S) tensor, so scores live in one buffer
 * between the phases: Q*K^T, score_mod, softmax, prob_mod, P*V. The buffers come from
 * kernel_scratch and the modifiers' values live on the run's stack, so the state (shared by
 * concurrent runs) is only the subgraphs. */
typedef struct flex_state {
    subgraph *mod[2]; /* score_mod, prob_mod; NULL when absent */
} flex_state;

typedef struct flex_ctx {
    geom_attention d;
    const void *q, *k, *v; /* compute type, 4-D contiguous */
    void *sc, *y;
    double scale;
} flex_ctx;

typedef struct flex_layout {
    size_t q, k, v, sc, y, half, total;
} flex_layout;

#define DEFINE_FLEX(N, F, GEMM)                                                                    \
    static void N##_flex_scores(void *vctx, int64_t bh0, int64_t bh1) {                            \
        const flex_ctx *x = vctx;                                                                  \
        const geom_attention *d = &x->d;                                                           \
        int64_t L = d->q_len, S = d->kv_len, E = d->head, group = d->q_heads / d->kv_heads;        \
        for (int64_t bh = bh0; bh < bh1; bh++) {                                                   \
            int64_t kv = (bh / d->q_heads) * d->kv_heads + (bh % d->q_heads) / group;              \
            F *sc = (F *)x->sc + bh * L * S;                                                       \
            if (E == 0) {                                                                          \
                memset(sc, 0, (size_t)(L * S) * sizeof(F));                                        \
                continue;                                                                          \
            }                                                                                      \
            GEMM(false, true, L, S, E, (F)x->scale, (const F *)x->q + bh * L * E, E,               \
                 (const F *)x->k + kv * S * E, E, 0, sc, S);                                       \
        }                                                                                          \
    }                                                                                              \
    static void N##_flex_softmax(void *vctx, int64_t r0, int64_t r1) {                             \
        const flex_ctx *x = vctx;                                                                  \
        int64_t S = x->d.kv_len;                                                                   \
        for (int64_t r = r0; r < r1; r++) N##_softmax((F *)x->sc + r * S, S, false);               \
    }                                                                                              \
    static void N##_flex_out(void *vctx, int64_t bh0, int64_t bh1) {                               \
        const flex_ctx *x = vctx;                                                                  \
        const geom_attention *d = &x->d;                                                           \
        int64_t L = d->q_len, S = d->kv_len, Dv = d->v_head, group = d->q_heads / d->kv_heads;     \
        for (int64_t bh = bh0; bh < bh1; bh++) {                                                   \
            int64_t kv = (bh / d->q_heads) * d->kv_heads + (bh % d->q_heads) / group;              \
            F *y = (F *)x->y + bh * L * Dv;                                                        \
            if (S == 0) {                                                                          \
                memset(y, 0, (size_t)(L * Dv) * sizeof(F));                                        \
                continue;                                                                          \
            }                                                                                      \
            GEMM(false, false, L, Dv, S, 1, (const F *)x->sc + bh * L * S, S,                      \
                 (const F *)x->v + kv * S * Dv, Dv, 0, y, Dv);                                     \
        }                                                                                          \
    }

DEFINE_FLEX(f32, float, cpu_sgemm)
DEFINE_FLEX(f64, double, cpu_dgemm)

/* The softmax precision: the attribute, else float (double for double inputs). */
static onyx_dtype flex_precision(const graph_node *n, onyx_dtype qt) {
    int64_t sp = attr_int(n, "softmax_precision", 0);
    if (node_attr(n, "softmax_precision") && sp > 0 && sp < 32 &&
        dtype_in((onyx_dtype)sp, OPS_ATT_FLOATS))
        return (onyx_dtype)sp;
    return qt == ONYX_DOUBLE ? ONYX_DOUBLE : ONYX_FLOAT;
}

static bool flex_layout_of(const graph_node *n, const geom_attention *d, onyx_dtype qt,
                           bool has_mod, flex_layout *L) {
    onyx_dtype sp = flex_precision(n, qt), fd = compute_type(sp);
    size_t fsz = dtype_size(fd), unused = 0;
    memset(L, 0, sizeof *L);
    int64_t qn = d->batch, kn = d->batch, vn = d->batch, sn = d->batch, yn = d->batch;
    if (!mul_ok(&qn, d->q_heads) || !mul_ok(&qn, d->q_len) || !mul_ok(&qn, d->head) ||
        !mul_ok(&kn, d->kv_heads) || !mul_ok(&kn, d->kv_len) || !mul_ok(&kn, d->head) ||
        !mul_ok(&vn, d->kv_heads) || !mul_ok(&vn, d->kv_len) || !mul_ok(&vn, d->v_head) ||
        !mul_ok(&sn, d->q_heads) || !mul_ok(&sn, d->q_len) || !mul_ok(&sn, d->kv_len) ||
        !mul_ok(&yn, d->q_heads) || !mul_ok(&yn, d->q_len) || !mul_ok(&yn, d->v_head))
        return false;
    bool conv = qt != fd;
    return region(&L->total, conv ? &L->q : &unused, conv ? qn : 0, fsz) &&
           region(&L->total, conv ? &L->k : &unused, conv ? kn : 0, fsz) &&
           region(&L->total, conv ? &L->v : &unused, conv ? vn : 0, fsz) &&
           region(&L->total, &L->sc, sn, fsz) &&
           region(&L->total, conv ? &L->y : &unused, conv ? yn : 0, fsz) &&
           region(&L->total, &L->half, has_mod && sp != fd ? sn : 0, dtype_size(sp));
}

void cpu_flex_attention_release(void *state) {
    flex_state *s = state;
    if (!s) return;
    for (int i = 0; i < 2; i++) subgraph_free(s->mod[i]);
    free(s);
}

onyx_status cpu_flex_attention_prepare(const kernel_prep *p, void **state) {
    static const char *const names[2] = {"score_mod", "prob_mod"};
    onyx_status st = ONYX_OK;
    flex_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("FlexAttention state");
    for (int i = 0; i < 2; i++) {
        const graph *g = attr_graph(p->node, names[i]);
        if (!g) continue;
        if (g->n_inputs != 1 || g->n_outputs != 1) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL, "%s has %d inputs and %d outputs, expected 1 "
                            "and 1", names[i], g->n_inputs, g->n_outputs);
            goto done;
        }
        CHECK(subgraph_create(g, p->env, &s->mod[i]));
    }
    *state = s;
    s = NULL;
done:
    cpu_flex_attention_release(s);
    return st;
}

/* Runs modifier i over the scores (in the compute type fd at sc) in precision sp, through
 * `half` when sp is a half type, and reads its result back into sc. */
static onyx_status flex_mod(const kernel_call *c, const flex_state *s, int i,
                            const geom_attention *d, void *sc, onyx_dtype fd, onyx_dtype sp,
                            void *half) {
    static const char *const names[2] = {"score_mod", "prob_mod"};
    int64_t dims[4] = {d->batch, d->q_heads, d->q_len, d->kv_len};
    tensor t = {0};
    TRY(tensor_set_shape(&t, sp, 4, dims));
    t.data = sp == fd ? sc : half;
    if (sp != fd) cvt(half, sp, sc, fd, t.numel);
    onyx_value in = {.kind = ONYX_VALUE_NONE}, out = {.kind = ONYX_VALUE_NONE};
    value_borrow_tensor(&in, &t);
    const onyx_value *ins[1] = {&in};
    onyx_value *outs[1] = {&out};
    onyx_status st = subgraph_run(s->mod[i], c->frame, ins, outs);
    if (st != ONYX_OK) {
        onyx_error_prefix(st, "%s", names[i]);
        goto done;
    }
    const onyx_value *o = &out;
    if (o->kind != ONYX_VALUE_TENSOR || o->t.dtype != sp ||
        !shape_equal(o->t.rank, o->t.dims, 4, dims)) {
        char buf[64];
        type_info ti;
        type_init(&ti);
        if (o->kind == ONYX_VALUE_TENSOR) type_set_tensor(&ti, o->t.dtype, o->t.rank, o->t.dims);
        st = onyx_error(ONYX_ERR_SHAPE, "%s returned %s, expected %s [%lld,%lld,%lld,%lld]",
                        names[i], type_str(&ti, buf, sizeof buf), onyx_dtype_name(sp),
                        (long long)dims[0], (long long)dims[1], (long long)dims[2],
                        (long long)dims[3]);
        goto done;
    }
    cvt(sc, fd, o->t.data, sp, t.numel);
done:
    value_clear(&out);
    value_clear(&in);
    return st;
}

onyx_status cpu_flex_attention_run(const kernel_call *c) {
    const flex_state *s = c->state;
    if (!s) return onyx_error(ONYX_ERR_RUNTIME, "kernel state missing (prepare was not run)");
    const tensor *Q = kernel_input(c, 0), *K = kernel_input(c, 1), *V = kernel_input(c, 2);
    tensor *Y = kernel_output(c, 0);
    const graph_node *n = c->node;
    if (!Q || !K || !V) return onyx_error(ONYX_ERR_SHAPE, "Q, K and V must be tensors");
    const geom_attention *g;
    TRY(kernel_attention(c->params, GEOM_ATT_ONNX, Q->numel, &g));
    const geom_attention d = *g;
    if (K->dtype != Q->dtype || V->dtype != Q->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "Q, K and V have types %s, %s and %s, expected one",
                          onyx_dtype_name(Q->dtype), onyx_dtype_name(K->dtype),
                          onyx_dtype_name(V->dtype));
    if (Y->numel == 0) return ONYX_OK;
    onyx_dtype sp = flex_precision(n, Q->dtype), fd = compute_type(sp);
    flex_layout L;
    if (!flex_layout_of(n, &d, Q->dtype, s->mod[0] || s->mod[1], &L))
        return onyx_error(ONYX_ERR_NO_MEMORY, "FlexAttention scratch size overflows");
    if (!cpu_blas_dims_ok(d.q_len, d.kv_len, d.head > d.v_head ? d.head : d.v_head))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "attention sizes exceed BLAS's int range");
    char *buf;
    TRY(scratch_of(c, L.total, &buf));
    flex_ctx x = {.d = d, .q = Q->data, .k = K->data, .v = V->data, .sc = buf + L.sc,
                  .y = Y->data};
    if (Q->dtype != fd) {
        cvt(buf + L.q, fd, Q->data, Q->dtype, Q->numel);
        cvt(buf + L.k, fd, K->data, K->dtype, K->numel);
        cvt(buf + L.v, fd, V->data, V->dtype, V->numel);
        x.q = buf + L.q;
        x.k = buf + L.k;
        x.v = buf + L.v;
        x.y = buf + L.y;
    }
    x.scale = node_attr(n, "scale") ? attr_float(n, "scale", 0)
                                     : (d.head > 0 ? 1.0 / sqrt((double)d.head) : 1.0);
    bool dbl = fd == ONYX_DOUBLE;
    int64_t bh = d.batch * d.q_heads, rows = bh * d.q_len;
    parallel_for(bh, 1, dbl ? f64_flex_scores : f32_flex_scores, &x);
    if (s->mod[0]) TRY(flex_mod(c, s, 0, &d, x.sc, fd, sp, buf + L.half));
    parallel_for(rows, 16384 / (d.kv_len + 1) + 1, dbl ? f64_flex_softmax : f32_flex_softmax, &x);
    if (s->mod[1]) TRY(flex_mod(c, s, 1, &d, x.sc, fd, sp, buf + L.half));
    parallel_for(bh, 1, dbl ? f64_flex_out : f32_flex_out, &x);
    if (x.y != Y->data) cvt(Y->data, Y->dtype, x.y, fd, Y->numel);
    return ONYX_OK;
}

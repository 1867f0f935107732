/* CPU kernels of the Reduce* ops and ArgMax/ArgMin. The input is collapsed into alternating
 * kept/reduced blocks; the innermost block is either reduced along contiguous rows (vectorizable
 * lanes) or kept, in which case whole rows are accumulated into a chunk of outputs, so that no
 * layout needs a transpose. */
#include <math.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"

typedef enum reduce_op {
    R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LSE, R_SUMSQ,
} reduce_op;

/* Outputs of an inner-kept reduction are accumulated in chunks of at most this many, on the
 * stack; long chunks keep each row read long and contiguous (few TLB misses on strided rows). */
#define CHUNK 2048
/* Fewest columns per chunk when a block is split further to feed the threads. */
#define MIN_CHUNK 64
/* A single contiguous reduction at least this long is split across the threads. */
#define SPLIT_MIN 65536
#define MAX_PARTS 64
/* Elements of work below which a task is not worth a thread. */
#define GRAIN_WORK 32768

/* The input as up to ONYX_MAX_RANK collapsed dims: kept dims (outer, indexing outputs), reduced
 * dims, and the contiguous innermost block. */
typedef struct rplan {
    reduce_op op;
    const void *x;
    void *y;
    int64_t inner;       /* length of the innermost block */
    bool inner_red;      /* whether the innermost block is reduced */
    int nk, nr;          /* outer kept / outer reduced dims (the inner block excluded) */
    int64_t kdim[ONYX_MAX_RANK], kstr[ONYX_MAX_RANK];
    int64_t rdim[ONYX_MAX_RANK], rstr[ONYX_MAX_RANK];
    int64_t nouter, nred; /* products of kdim and rdim */
    int64_t count;       /* elements reduced into each output */
    int64_t chunk, nchunks; /* inner-kept: columns per chunk, chunks per inner block */
} rplan;

static int64_t plan_offset(int n, const int64_t *dim, const int64_t *str, int64_t idx) {
    int64_t off = 0;
    for (int i = n - 1; i >= 0; i--) {
        off += (idx % dim[i]) * str[i];
        idx /= dim[i];
    }
    return off;
}

/* Advances an odometer over n dims; *off follows the input offset. */
static inline void odo_next(int n, const int64_t *dim, const int64_t *str, int64_t *cnt,
                            int64_t *off) {
    for (int d = n - 1; d >= 0; d--) {
        *off += str[d];
        if (++cnt[d] < dim[d]) return;
        *off -= str[d] * dim[d];
        cnt[d] = 0;
    }
}

/* A single contiguous reduction split in parts: phase 0/1 are log-sum-exp's max and sum passes
 * (into d), phase 2 every other op (into acc, of the type's accumulator). */
typedef struct rsplit {
    const rplan *p;
    int64_t parts;
    void *acc;
    double *d;
    double mx;
    int phase;
} rsplit;

static void reverse_dims(int n, int64_t *dim, int64_t *str) {
    for (int i = 0, j = n - 1; i < j; i++, j--) {
        int64_t t = dim[i];
        dim[i] = dim[j];
        dim[j] = t;
        t = str[i];
        str[i] = str[j];
        str[j] = t;
    }
}

/* Builds the plan for reducing x (dims with mask) into y. An empty reduction (a reduced dim of
 * size 0) becomes rows of length 0, which yield the op's identity. */
static void plan_build(rplan *p, const tensor *x, const bool *mask, int64_t out_numel) {
    int64_t dim[ONYX_MAX_RANK];
    bool red[ONYX_MAX_RANK];
    int n = 0;
    p->count = 1;
    for (int i = 0; i < x->rank; i++) {
        if (mask[i]) p->count *= x->dims[i];
        if (x->dims[i] == 1) continue;
        if (n > 0 && red[n - 1] == mask[i]) {
            dim[n - 1] *= x->dims[i];
        } else {
            dim[n] = x->dims[i];
            red[n++] = mask[i];
        }
    }
    p->nk = p->nr = 0;
    p->nouter = p->nred = 1;
    if (p->count == 0 || n == 0) {
        p->inner = p->count == 0 ? 0 : 1;
        p->inner_red = true;
        p->nouter = out_numel;
        p->kdim[0] = out_numel;
        p->kstr[0] = p->inner;
        p->nk = 1;
        return;
    }
    p->inner = dim[n - 1];
    p->inner_red = red[n - 1];
    int64_t s = p->inner;
    for (int i = n - 2; i >= 0; i--) {
        if (red[i]) {
            p->rdim[p->nr] = dim[i];
            p->rstr[p->nr++] = s;
            p->nred *= dim[i];
        } else {
            p->kdim[p->nk] = dim[i];
            p->kstr[p->nk++] = s;
            p->nouter *= dim[i];
        }
        s *= dim[i];
    }
    /* collected innermost first; the odometers want outermost first */
    reverse_dims(p->nk, p->kdim, p->kstr);
    reverse_dims(p->nr, p->rdim, p->rstr);
}

/* ---- per-type primitives: load into the accumulator type, wrap-around integer arithmetic,
 * NaN-propagating max/min, saturating conversion from double */

#define FLOAT_PRIMS(N, T, ACC, LD, ST)                                                             \
    static inline ACC N##_ld(T v) { return LD(v); }                                                \
    static inline T N##_st(ACC a) { return ST(a); }                                                \
    static inline ACC N##_add(ACC a, ACC b) { return a + b; }                                      \
    static inline ACC N##_mul(ACC a, ACC b) { return a * b; }                                      \
    static inline ACC N##_abs(ACC a) { return a < 0 ? -a : a; }                                    \
    static inline bool N##_isnan(ACC a) { return isnan(a); }                                       \
    static inline ACC N##_lo(void) { return -INFINITY; }                                           \
    static inline ACC N##_hi(void) { return INFINITY; }                                            \
    static inline T N##_fromd(double d) { return ST((ACC)d); }

/* Signed integers accumulate in int64 through uint64 so that overflow wraps as ONNX does. */
#define SINT_PRIMS(N, T)                                                                           \
    static inline int64_t N##_ld(T v) { return v; }                                                \
    static inline T N##_st(int64_t a) { return (T)a; }                                             \
    static inline int64_t N##_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); } \
    static inline int64_t N##_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); } \
    static inline int64_t N##_abs(int64_t a) { return a < 0 ? (int64_t)(0 - (uint64_t)a) : a; }   \
    static inline bool N##_isnan(int64_t a) { (void)a; return false; }                             \
    static inline int64_t N##_hi(void) { return (int64_t)((UINT64_C(1) << (8 * sizeof(T) - 1)) - 1); } \
    static inline int64_t N##_lo(void) { return -N##_hi() - 1; }                                   \
    static inline T N##_fromd(double d) {                                                          \
        if (isnan(d)) return 0;                                                                    \
        if (d <= (double)N##_lo()) return (T)N##_lo();                                             \
        if (d >= (double)N##_hi()) return (T)N##_hi();                                             \
        return (T)d;                                                                               \
    }

#define UINT_PRIMS(N, T)                                                                           \
    static inline uint64_t N##_ld(T v) { return v; }                                               \
    static inline T N##_st(uint64_t a) { return (T)a; }                                            \
    static inline uint64_t N##_add(uint64_t a, uint64_t b) { return a + b; }                       \
    static inline uint64_t N##_mul(uint64_t a, uint64_t b) { return a * b; }                       \
    static inline uint64_t N##_abs(uint64_t a) { return a; }                                       \
    static inline bool N##_isnan(uint64_t a) { (void)a; return false; }                            \
    static inline uint64_t N##_lo(void) { return 0; }                                              \
    static inline uint64_t N##_hi(void) { return (T)~(T)0; }                                       \
    static inline T N##_fromd(double d) {                                                          \
        if (!(d > 0)) return 0;                                                                    \
        if (d >= (double)N##_hi()) return (T)N##_hi();                                             \
        return (T)d;                                                                               \
    }


/* ---- the reduction template over one element type */

#define DEFINE_REDUCE(N, T, ACC)                                                                   \
    static inline ACC N##_max(ACC a, ACC b) { return (b > a || N##_isnan(b)) ? b : a; }            \
    static inline ACC N##_min(ACC a, ACC b) { return (b < a || N##_isnan(b)) ? b : a; }            \
    static inline ACC N##_sq(ACC a) { return N##_mul(a, a); }                                      \
    static inline ACC N##_identity(reduce_op op) {                                                 \
        switch (op) {                                                                              \
        case R_PROD: return 1;                                                                     \
        case R_MAX: return N##_lo();                                                               \
        case R_MIN: return N##_hi();                                                               \
        default: return 0;                                                                         \
        }                                                                                          \
    }                                                                                              \
    /* Folds one contiguous row into acc; eight lanes keep the adds independent (vectorizable,  \
     * and more accurate than one running sum). */                                                 \
    static ACC N##_row(reduce_op op, const T *x, int64_t n, ACC acc) {                            \
        ACC l[8];                                                                                  \
        for (int k = 0; k < 8; k++) l[k] = N##_identity(op);                                       \
        int64_t i = 0;                                                                             \
        switch (op) {                                                                              \
        case R_SUM: case R_MEAN: case R_LOGSUM:                                                    \
            for (; i + 8 <= n; i += 8)                                                             \
                CPU_SIMD                                                                           \
                for (int k = 0; k < 8; k++) l[k] = N##_add(l[k], N##_ld(x[i + k]));                \
            for (; i < n; i++) l[0] = N##_add(l[0], N##_ld(x[i]));                                 \
            break;                                                                                 \
        case R_SUMSQ: case R_L2:                                                                   \
            for (; i + 8 <= n; i += 8)                                                             \
                CPU_SIMD                                                                           \
                for (int k = 0; k < 8; k++) l[k] = N##_add(l[k], N##_sq(N##_ld(x[i + k])));       \
            for (; i < n; i++) l[0] = N##_add(l[0], N##_sq(N##_ld(x[i])));                         \
            break;                                                                                 \
        case R_L1:                                                                                 \
            for (; i + 8 <= n; i += 8)                                                             \
                CPU_SIMD                                                                           \
                for (int k = 0; k < 8; k++) l[k] = N##_add(l[k], N##_abs(N##_ld(x[i + k])));      \
            for (; i < n; i++) l[0] = N##_add(l[0], N##_abs(N##_ld(x[i])));                        \
            break;                                                                                 \
        case R_PROD:                                                                               \
            for (; i + 8 <= n; i += 8)                                                             \
                CPU_SIMD                                                                           \
                for (int k = 0; k < 8; k++) l[k] = N##_mul(l[k], N##_ld(x[i + k]));                \
            for (; i < n; i++) l[0] = N##_mul(l[0], N##_ld(x[i]));                                 \
            for (int k = 0; k < 8; k++) acc = N##_mul(acc, l[k]);                                  \
            return acc;                                                                            \
        case R_MAX:                                                                                \
            for (; i + 8 <= n; i += 8)                                                             \
                CPU_SIMD                                                                           \
                for (int k = 0; k < 8; k++) l[k] = N##_max(l[k], N##_ld(x[i + k]));                \
            for (; i < n; i++) l[0] = N##_max(l[0], N##_ld(x[i]));                                 \
            for (int k = 0; k < 8; k++) acc = N##_max(acc, l[k]);                                  \
            return acc;                                                                            \
        case R_MIN:                                                                                \
            for (; i + 8 <= n; i += 8)                                                             \
                CPU_SIMD                                                                           \
                for (int k = 0; k < 8; k++) l[k] = N##_min(l[k], N##_ld(x[i + k]));                \
            for (; i < n; i++) l[0] = N##_min(l[0], N##_ld(x[i]));                                 \
            for (int k = 0; k < 8; k++) acc = N##_min(acc, l[k]);                                  \
            return acc;                                                                            \
        case R_LSE: break;                                                                         \
        }                                                                                          \
        for (int k = 0; k < 8; k++) acc = N##_add(acc, l[k]);                                      \
        return acc;                                                                                \
    }                                                                                              \
    /* Folds a row elementwise into acc[0..n) (inner-kept layouts). */                             \
    static void N##_rows(reduce_op op, const T *x, int64_t n, ACC *acc) {                         \
        switch (op) {                                                                              \
        case R_SUM: case R_MEAN: case R_LOGSUM:                                                    \
            CPU_SIMD                                                                               \
            for (int64_t j = 0; j < n; j++) acc[j] = N##_add(acc[j], N##_ld(x[j]));                \
            break;                                                                                 \
        case R_SUMSQ: case R_L2:                                                                   \
            CPU_SIMD                                                                               \
            for (int64_t j = 0; j < n; j++) acc[j] = N##_add(acc[j], N##_sq(N##_ld(x[j])));        \
            break;                                                                                 \
        case R_L1:                                                                                 \
            CPU_SIMD                                                                               \
            for (int64_t j = 0; j < n; j++) acc[j] = N##_add(acc[j], N##_abs(N##_ld(x[j])));       \
            break;                                                                                 \
        case R_PROD:                                                                               \
            CPU_SIMD                                                                               \
            for (int64_t j = 0; j < n; j++) acc[j] = N##_mul(acc[j], N##_ld(x[j]));                \
            break;                                                                                 \
        case R_MAX:                                                                                \
            CPU_SIMD                                                                               \
            for (int64_t j = 0; j < n; j++) acc[j] = N##_max(acc[j], N##_ld(x[j]));                \
            break;                                                                                 \
        case R_MIN:                                                                                \
            CPU_SIMD                                                                               \
            for (int64_t j = 0; j < n; j++) acc[j] = N##_min(acc[j], N##_ld(x[j]));                \
            break;                                                                                 \
        case R_LSE: break;                                                                         \
        }                                                                                          \
    }                                                                                              \
    static T N##_finish(reduce_op op, ACC a, int64_t count) {                                      \
        switch (op) {                                                                              \
        case R_MEAN: return N##_fromd((double)a / (double)count);                                  \
        case R_L2: return N##_fromd(sqrt((double)a));                                              \
        case R_LOGSUM: return N##_fromd(log((double)a));                                           \
        default: return N##_st(a);                                                                 \
        }                                                                                          \
    }                                                                                              \
    /* log-sum-exp in double around the largest finite element (inf and nan pass through). */    \
    static void N##_lse_max(const T *x, int64_t n, double *mx) {                                   \
        for (int64_t j = 0; j < n; j++) {                                                          \
            double v = (double)N##_ld(x[j]);                                                       \
            if (!isinf(v) && (v > *mx || isnan(v))) *mx = v;                                       \
        }                                                                                          \
    }                                                                                              \
    static void N##_lse_sum(const T *x, int64_t n, double mx, double *s) {                         \
        for (int64_t j = 0; j < n; j++) *s += exp((double)N##_ld(x[j]) - mx);                      \
    }                                                                                              \
    static void N##_outer_red(void *ctx, int64_t b, int64_t e) {                                  \
        const rplan *p = ctx;                                                                      \
        const T *x = p->x;                                                                         \
        T *y = p->y;                                                                               \
        for (int64_t o = b; o < e; o++) {                                                          \
            const T *xo = x + plan_offset(p->nk, p->kdim, p->kstr, o);                             \
            int64_t cnt[ONYX_MAX_RANK] = {0}, off = 0;                                             \
            if (p->op == R_LSE) {                                                                  \
                double mx = -INFINITY, s = 0;                                                      \
                for (int64_t r = 0; r < p->nred; r++) {                                            \
                    N##_lse_max(xo + off, p->inner, &mx);                                          \
                    odo_next(p->nr, p->rdim, p->rstr, cnt, &off);                                  \
                }                                                                                  \
                if (isinf(mx)) mx = 0;                                                             \
                for (int64_t r = 0; r < p->nred; r++) {                                            \
                    N##_lse_sum(xo + off, p->inner, mx, &s);                                       \
                    odo_next(p->nr, p->rdim, p->rstr, cnt, &off);                                  \
                }                                                                                  \
                y[o] = N##_fromd(mx + log(s));                                                     \
                continue;                                                                          \
            }                                                                                      \
            ACC acc = N##_identity(p->op);                                                         \
            for (int64_t r = 0; r < p->nred; r++) {                                                \
                acc = N##_row(p->op, xo + off, p->inner, acc);                                     \
                odo_next(p->nr, p->rdim, p->rstr, cnt, &off);                                      \
            }                                                                                      \
            y[o] = N##_finish(p->op, acc, p->count);                                               \
        }                                                                                          \
    }                                                                                              \
    static void N##_outer_keep(void *ctx, int64_t b, int64_t e) {                                 \
        const rplan *p = ctx;                                                                      \
        const T *x = p->x;                                                                         \
        T *y = p->y;                                                                               \
        for (int64_t t = b; t < e; t++) {                                                          \
            int64_t q = t / p->nchunks, j0 = (t % p->nchunks) * p->chunk;                          \
            int64_t len = p->inner - j0 < p->chunk ? p->inner - j0 : p->chunk;                     \
            const T *xq = x + plan_offset(p->nk, p->kdim, p->kstr, q) + j0;                        \
            T *yq = y + q * p->inner + j0;                                                         \
            int64_t cnt[ONYX_MAX_RANK] = {0}, off = 0;                                             \
            if (p->op == R_LSE) {                                                                  \
                double mx[CHUNK], s[CHUNK];                                                        \
                for (int64_t j = 0; j < len; j++) mx[j] = -INFINITY, s[j] = 0;                     \
                for (int64_t r = 0; r < p->nred; r++) {                                            \
                    for (int64_t j = 0; j < len; j++) N##_lse_max(xq + off + j, 1, &mx[j]);        \
                    odo_next(p->nr, p->rdim, p->rstr, cnt, &off);                                  \
                }                                                                                  \
                for (int64_t j = 0; j < len; j++)                                                  \
                    if (isinf(mx[j])) mx[j] = 0;                                                   \
                for (int64_t r = 0; r < p->nred; r++) {                                            \
                    for (int64_t j = 0; j < len; j++) N##_lse_sum(xq + off + j, 1, mx[j], &s[j]);  \
                    odo_next(p->nr, p->rdim, p->rstr, cnt, &off);                                  \
                }                                                                                  \
                for (int64_t j = 0; j < len; j++) yq[j] = N##_fromd(mx[j] + log(s[j]));           \
                continue;                                                                          \
            }                                                                                      \
            ACC acc[CHUNK];                                                                        \
            for (int64_t j = 0; j < len; j++) acc[j] = N##_identity(p->op);                        \
            for (int64_t r = 0; r < p->nred; r++) {                                                \
                N##_rows(p->op, xq + off, len, acc);                                               \
                odo_next(p->nr, p->rdim, p->rstr, cnt, &off);                                      \
            }                                                                                      \
            for (int64_t j = 0; j < len; j++) yq[j] = N##_finish(p->op, acc[j], p->count);         \
        }                                                                                          \
    }                                                                                              \
    static ACC N##_combine(reduce_op op, ACC a, ACC b) {                                           \
        switch (op) {                                                                              \
        case R_PROD: return N##_mul(a, b);                                                         \
        case R_MAX: return N##_max(a, b);                                                          \
        case R_MIN: return N##_min(a, b);                                                          \
        default: return N##_add(a, b);                                                             \
        }                                                                                          \
    }                                                                                              \
    static void N##_split_task(void *ctx, int64_t b, int64_t e) {                                 \
        rsplit *s = ctx;                                                                           \
        const rplan *p = s->p;                                                                     \
        const T *x = p->x;                                                                         \
        for (int64_t k = b; k < e; k++) {                                                          \
            int64_t i0 = p->inner * k / s->parts, i1 = p->inner * (k + 1) / s->parts;              \
            if (s->phase == 0) {                                                                   \
                s->d[k] = -INFINITY;                                                               \
                N##_lse_max(x + i0, i1 - i0, &s->d[k]);                                            \
            } else if (s->phase == 1) {                                                            \
                s->d[k] = 0;                                                                       \
                N##_lse_sum(x + i0, i1 - i0, s->mx, &s->d[k]);                                     \
            } else {                                                                               \
                ((ACC *)s->acc)[k] = N##_row(p->op, x + i0, i1 - i0, N##_identity(p->op));         \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    /* one long contiguous reduction: partial results per thread, combined here */                \
    static void N##_split(const rplan *p, int64_t parts) {                                        \
        ACC acc[MAX_PARTS];                                                                        \
        double d[MAX_PARTS];                                                                       \
        rsplit s = {.p = p, .parts = parts, .acc = acc, .d = d, .phase = 2};                       \
        if (p->op == R_LSE) {                                                                      \
            s.phase = 0;                                                                           \
            parallel_for(parts, 1, N##_split_task, &s);                                            \
            double mx = -INFINITY;                                                                 \
            for (int64_t k = 0; k < parts; k++)                                                    \
                if (d[k] > mx || isnan(d[k])) mx = d[k];                                           \
            s.mx = isinf(mx) ? 0 : mx;                                                             \
            s.phase = 1;                                                                           \
            parallel_for(parts, 1, N##_split_task, &s);                                            \
            double sum = 0;                                                                        \
            for (int64_t k = 0; k < parts; k++) sum += d[k];                                       \
            *(T *)p->y = N##_fromd(s.mx + log(sum));                                               \
            return;                                                                                \
        }                                                                                          \
        parallel_for(parts, 1, N##_split_task, &s);                                                \
        ACC a = N##_identity(p->op);                                                               \
        for (int64_t k = 0; k < parts; k++) a = N##_combine(p->op, a, acc[k]);                     \
        *(T *)p->y = N##_finish(p->op, a, p->count);                                               \
    }

/* ---- ArgMax / ArgMin: [outer, n, inner] around the axis; the first (or with select_last_index
 * the last) extreme wins, and NaN counts as the extreme as numpy's argmax has it. */

typedef struct aplan {
    const void *x;
    int64_t *y;
    int64_t n, inner, nchunks;
    bool is_max, last;
} aplan;

#define DEFINE_ARG(N, T, ACC)                                                                      \
    static inline bool N##_take(ACC v, ACC best, bool is_max, bool last) {                         \
        if (N##_isnan(v)) return last || !N##_isnan(best);                                         \
        if (N##_isnan(best)) return false;                                                         \
        if (is_max) return last ? v >= best : v > best;                                            \
        return last ? v <= best : v < best;                                                        \
    }                                                                                              \
    /* contiguous rows (inner == 1): the extreme by the vectorized row reduction, then its first  \
     * (or last) position, NaN first */                                                           \
    static void N##_arg_rows(const aplan *p, int64_t b, int64_t e) {                               \
        const int64_t n = p->n;                                                                    \
        for (int64_t o = b; o < e; o++) {                                                          \
            const T *xr = (const T *)p->x + o * n;                                                 \
            ACC ext = p->is_max ? N##_row(R_MAX, xr, n, N##_lo()) : N##_row(R_MIN, xr, n, N##_hi()); \
            int64_t r = 0;                                                                         \
            if (N##_isnan(ext)) {                                                                  \
                if (p->last)                                                                       \
                    for (r = n - 1; r > 0 && !N##_isnan(N##_ld(xr[r])); r--) {}                    \
                else                                                                               \
                    for (r = 0; r < n - 1 && !N##_isnan(N##_ld(xr[r])); r++) {}                    \
            } else if (p->last) {                                                                  \
                for (r = n - 1; r > 0 && N##_ld(xr[r]) != ext; r--) {}                             \
            } else {                                                                               \
                for (r = 0; r < n - 1 && N##_ld(xr[r]) != ext; r++) {}                             \
            }                                                                                      \
            p->y[o] = r;                                                                           \
        }                                                                                          \
    }                                                                                              \
    static void N##_arg(void *ctx, int64_t b, int64_t e) {                                        \
        const aplan *p = ctx;                                                                      \
        const T *x = p->x;                                                                         \
        if (p->inner == 1) {                                                                       \
            N##_arg_rows(p, b, e);                                                                 \
            return;                                                                                \
        }                                                                                          \
        for (int64_t t = b; t < e; t++) {                                                          \
            int64_t o = t / p->nchunks, j0 = (t % p->nchunks) * CHUNK;                             \
            int64_t len = p->inner - j0 < CHUNK ? p->inner - j0 : CHUNK;                           \
            const T *xo = x + o * p->n * p->inner + j0;                                            \
            ACC best[CHUNK];                                                                       \
            int64_t *idx = p->y + o * p->inner + j0;                                               \
            for (int64_t j = 0; j < len; j++) best[j] = N##_ld(xo[j]), idx[j] = 0;                 \
            for (int64_t r = 1; r < p->n; r++) {                                                   \
                const T *xr = xo + r * p->inner;                                                   \
                for (int64_t j = 0; j < len; j++) {                                                \
                    ACC v = N##_ld(xr[j]);                                                         \
                    if (N##_take(v, best[j], p->is_max, p->last)) best[j] = v, idx[j] = r;         \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

FLOAT_PRIMS(f32, float, float, cpu_f32_ld, cpu_f32_st)
FLOAT_PRIMS(f64, double, double, cpu_f64_ld, cpu_f64_st)
FLOAT_PRIMS(f16, uint16_t, float, cpu_f16_ld, cpu_f16_st)
FLOAT_PRIMS(bf16, uint16_t, float, cpu_bf16_ld, cpu_bf16_st)
DEFINE_REDUCE(f32, float, float)
DEFINE_REDUCE(f64, double, double)
DEFINE_REDUCE(f16, uint16_t, float)
DEFINE_REDUCE(bf16, uint16_t, float)
DEFINE_ARG(f32, float, float)
DEFINE_ARG(f64, double, double)
DEFINE_ARG(f16, uint16_t, float)
DEFINE_ARG(bf16, uint16_t, float)

#define STAMP_SINT(D, T) SINT_PRIMS(D, T) DEFINE_REDUCE(D, T, int64_t) DEFINE_ARG(D, T, int64_t)
#define STAMP_UINT(D, T) UINT_PRIMS(D, T) DEFINE_REDUCE(D, T, uint64_t) DEFINE_ARG(D, T, uint64_t)
CPU_FOR_SINTS(STAMP_SINT)
CPU_FOR_UINTS(STAMP_UINT)

typedef struct reduce_fns {
    void (*outer_red)(void *, int64_t, int64_t);
    void (*outer_keep)(void *, int64_t, int64_t);
    void (*split)(const rplan *, int64_t);
} reduce_fns;

static bool reduce_pick(onyx_dtype d, reduce_fns *f) {
    switch (d) {
#define FNS(N) (reduce_fns){N##_outer_red, N##_outer_keep, N##_split}
    case ONYX_FLOAT: *f = FNS(f32); return true;
    case ONYX_DOUBLE: *f = FNS(f64); return true;
    case ONYX_FLOAT16: *f = FNS(f16); return true;
    case ONYX_BFLOAT16: *f = FNS(bf16); return true;
    /* bool max/min is or/and over bytes 0/1 */
    case ONYX_BOOL: *f = FNS(ONYX_UINT8); return true;
#define PICK(D, T) case D: *f = FNS(D); return true;
    CPU_FOR_INTS(PICK)
#undef PICK
#undef FNS
    default: return false;
    }
}

static onyx_status reduce_run(const kernel_call *c, reduce_op op) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    const geom_axis_set *axes; /* as the schema resolved them (per run for an axes input) */
    TRY(kernel_axes(c->params, x->rank, &axes));
    reduce_fns f;
    if (!reduce_pick(x->dtype, &f) || (x->dtype == ONYX_BOOL && op != R_MAX && op != R_MIN))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, which this reduction "
                          "does not take", onyx_dtype_name(x->dtype));
    /* inference refuses these already; this holds where the type was not known at prepare */
    if ((op == R_LOGSUM || op == R_LSE) && c->node->version >= 28 && !dtype_is_float(x->dtype))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s; %s-%d takes float types only",
                          onyx_dtype_name(x->dtype), c->node->op_type, c->node->version);
    if (y->numel == 0) return ONYX_OK;
    rplan p;
    plan_build(&p, x, axes->mask, y->numel);
    p.op = op;
    p.x = x->data;
    p.y = y->data;
    int64_t per = p.count > 0 ? p.count : 1, threads = parallel_threads();
    if (p.inner_red && p.nouter == 1 && p.nr == 0 && p.inner >= SPLIT_MIN && threads > 1) {
        f.split(&p, threads < MAX_PARTS ? threads : MAX_PARTS);
    } else if (p.inner_red) {
        parallel_for(p.nouter, GRAIN_WORK / per + 1, f.outer_red, &p);
    } else {
        /* split the inner block further while there are fewer tasks than twice the threads */
        int64_t want = (2 * threads + p.nouter - 1) / p.nouter;
        p.chunk = (p.inner + want - 1) / want;
        if (p.chunk < MIN_CHUNK) p.chunk = MIN_CHUNK;
        if (p.chunk > CHUNK) p.chunk = CHUNK;
        p.nchunks = (p.inner + p.chunk - 1) / p.chunk;
        int64_t len = p.inner < p.chunk ? p.inner : p.chunk;
        parallel_for(p.nouter * p.nchunks, GRAIN_WORK / (per * len) + 1, f.outer_keep, &p);
    }
    return ONYX_OK;
}

#define REDUCE_RUN(fn, op)                                                                         \
    onyx_status fn(const kernel_call *c) { return reduce_run(c, op); }
REDUCE_RUN(cpu_reduce_sum, R_SUM)
REDUCE_RUN(cpu_reduce_mean, R_MEAN)
REDUCE_RUN(cpu_reduce_max, R_MAX)
REDUCE_RUN(cpu_reduce_min, R_MIN)
REDUCE_RUN(cpu_reduce_prod, R_PROD)
REDUCE_RUN(cpu_reduce_l1, R_L1)
REDUCE_RUN(cpu_reduce_l2, R_L2)
REDUCE_RUN(cpu_reduce_log_sum, R_LOGSUM)
REDUCE_RUN(cpu_reduce_log_sum_exp, R_LSE)
REDUCE_RUN(cpu_reduce_sum_square, R_SUMSQ)

static onyx_status arg_run(const kernel_call *c, bool is_max) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    void (*fn)(void *, int64_t, int64_t) = NULL;
    switch (x->dtype) {
    case ONYX_FLOAT: fn = f32_arg; break;
    case ONYX_DOUBLE: fn = f64_arg; break;
    case ONYX_FLOAT16: fn = f16_arg; break;
    case ONYX_BFLOAT16: fn = bf16_arg; break;
#define PICK(D, T) case D: fn = D##_arg; break;
    CPU_FOR_INTS(PICK)
#undef PICK
    default:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, expected a numeric type",
                          onyx_dtype_name(x->dtype));
    }
    int axis;
    TRY(kernel_axis(c->params, x->rank, &axis));
    aplan p = {.x = x->data, .y = y->data, .n = x->dims[axis], .inner = 1,
               .is_max = is_max, .last = attr_int(c->node, "select_last_index", 0) != 0};
    int64_t outer = 1;
    for (int i = 0; i < axis; i++) outer *= x->dims[i];
    for (int i = axis + 1; i < x->rank; i++) p.inner *= x->dims[i];
    if (y->numel == 0) return ONYX_OK;
    if (p.n == 0)
        return onyx_error(ONYX_ERR_RUNTIME, "axis %d has size 0: there is no extreme to index",
                          axis);
    p.nchunks = (p.inner + CHUNK - 1) / CHUNK;
    int64_t len = p.inner < CHUNK ? p.inner : CHUNK;
    parallel_for(outer * p.nchunks, GRAIN_WORK / (p.n * len) + 1, fn, &p);
    return ONYX_OK;
}

onyx_status cpu_argmax(const kernel_call *c) { return arg_run(c, true); }
onyx_status cpu_argmin(const kernel_call *c) { return arg_run(c, false); }

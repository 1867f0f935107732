/* The strided copy engine behind the data-movement kernels: it drops unit dims, merges dims that
 * are contiguous in both views, then copies whole rows (memcpy), strided rows, or 2-D tiles (the
 * transpose case), splitting the rows over the thread pool. */
#include "kernels_cpu/common/move.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/common/cpu_types.h"

typedef struct u128 {
    uint64_t lo, hi;
} u128;

enum { TILE = 32, TILE_GROUP = 2, GRAIN_ELEMS = 16384 };

typedef struct job {
    char *dst;
    const char *src;
    ptrdiff_t esize;
    int rank;
    int64_t dims[CPU_MOVE_MAX_RANK], ds[CPU_MOVE_MAX_RANK], ss[CPU_MOVE_MAX_RANK];
    int n_outer; /* axes walked by the unit loop (slowest first); the rest is one unit's work */
    int outer[CPU_MOVE_MAX_RANK];
    bool contiguous; /* the last axis is dense in both views */
    int tile_axis;   /* >= 0: 2-D tiles over (tile_axis, last), tile_axis dense in src */
    int64_t tile_blocks;
} job;

#define STRIDED_LOOP(T)                                                                            \
    do {                                                                                           \
        T *d_ = (T *)(void *)d;                                                                    \
        const T *s_ = (const T *)(const void *)s;                                                  \
        for (int64_t i = 0; i < n; i++) d_[i * dst_st] = s_[i * src_st];                           \
    } while (0)

static void copy_run(char *d, const char *s, ptrdiff_t esize, int64_t n, int64_t dst_st,
                     int64_t src_st) {
    switch (esize) {
#define CASE(size, T)                                                                              \
    case size: STRIDED_LOOP(T); break;
        CPU_FOR_BY_SIZE(CASE)
#undef CASE
    case 16: STRIDED_LOOP(u128); break;
    default:
        for (int64_t i = 0; i < n; i++)
            memcpy(d + i * dst_st * esize, s + i * src_st * esize, (size_t)esize);
    }
}

/* Offsets of outer index `idx` (row-major over the outer axes) and its per-axis counters. */
static void offsets_of(const job *j, int64_t idx, int64_t *cnt, int64_t *doff, int64_t *soff) {
    int64_t d = 0, s = 0;
    for (int k = j->n_outer - 1; k >= 0; k--) {
        int a = j->outer[k];
        int64_t i = idx % j->dims[a];
        idx /= j->dims[a];
        cnt[k] = i;
        d += i * j->ds[a];
        s += i * j->ss[a];
    }
    *doff = d;
    *soff = s;
}

static void advance(const job *j, int64_t *cnt, int64_t *doff, int64_t *soff) {
    for (int k = j->n_outer - 1; k >= 0; k--) {
        int a = j->outer[k];
        cnt[k]++;
        *doff += j->ds[a];
        *soff += j->ss[a];
        if (cnt[k] < j->dims[a]) return;
        *doff -= cnt[k] * j->ds[a];
        *soff -= cnt[k] * j->ss[a];
        cnt[k] = 0;
    }
}

/* One tile: na x nl elements, gathered through a small buffer so that each phase streams whole
 * rows (the big strides of both views would otherwise fight over the same cache sets). s and d
 * point at the tile's first element; along the tile axis src is dense and along the last axis
 * dst is dense. */
#define TILE_LOOPS(T, NA, NL)                                                                      \
    do {                                                                                           \
        for (int64_t l = 0; l < (NL); l++)                                                         \
            for (int64_t i = 0; i < (NA); i++) buf[l][i] = s_[i + l * ssl];                        \
        for (int64_t i = 0; i < (NA); i++)                                                         \
            for (int64_t l = 0; l < (NL); l++) d_[i * dsa + l] = buf[l][i];                        \
    } while (0)
#define TILE_COPY(T)                                                                               \
    do {                                                                                           \
        T buf[TILE][TILE];                                                                         \
        const T *s_ = (const T *)(const void *)s;                                                  \
        T *d_ = (T *)(void *)d;                                                                    \
        if (na == TILE && nl == TILE)                                                              \
            TILE_LOOPS(T, TILE, TILE);                                                             \
        else                                                                                       \
            TILE_LOOPS(T, na, nl);                                                                 \
    } while (0)

static void copy_tile(char *d, const char *s, ptrdiff_t esize, int64_t na, int64_t nl, int64_t dsa,
                      int64_t ssl) {
    switch (esize) {
#define CASE(size, T)                                                                              \
    case size: TILE_COPY(T); break;
        CPU_FOR_BY_SIZE(CASE)
#undef CASE
    case 16: TILE_COPY(u128); break;
    default:
        for (int64_t i = 0; i < na; i++)
            for (int64_t l = 0; l < nl; l++)
                memcpy(d + (i * dsa + l) * esize, s + (i + l * ssl) * esize, (size_t)esize);
    }
}

static void run_tiles(const job *j, int64_t begin, int64_t end) {
    int64_t cnt[CPU_MOVE_MAX_RANK], doff, soff;
    int last = j->rank - 1, a = j->tile_axis;
    int64_t len = j->dims[last], dsa = j->ds[a], ssl = j->ss[last];
    for (int64_t u = begin; u < end; u++) {
        /* a unit spans several tiles along the tile axis so that the rows a tile touches in
         * both views are reused by its neighbours while their pages are still mapped */
        int64_t a0 = (u % j->tile_blocks) * TILE * TILE_GROUP;
        int64_t a_end = a0 + TILE * TILE_GROUP < j->dims[a] ? a0 + TILE * TILE_GROUP : j->dims[a];
        offsets_of(j, u / j->tile_blocks, cnt, &doff, &soff);
        for (int64_t l0 = 0; l0 < len; l0 += TILE) {
            int64_t nl = l0 + TILE < len ? TILE : len - l0;
            for (int64_t i0 = a0; i0 < a_end; i0 += TILE) {
                int64_t na = i0 + TILE < a_end ? TILE : a_end - i0;
                copy_tile(j->dst + (doff + i0 * dsa + l0) * j->esize,
                          j->src + (soff + i0 + l0 * ssl) * j->esize, j->esize, na, nl, dsa, ssl);
            }
        }
    }
}

static void run_units(void *ctx, int64_t begin, int64_t end) {
    const job *j = ctx;
    if (j->tile_axis >= 0) {
        run_tiles(j, begin, end);
        return;
    }
    int64_t cnt[CPU_MOVE_MAX_RANK], doff, soff;
    int last = j->rank - 1;
    int64_t n = j->dims[last];
    offsets_of(j, begin, cnt, &doff, &soff);
    for (int64_t u = begin; u < end; u++) {
        char *d = j->dst + doff * j->esize;
        const char *s = j->src + soff * j->esize;
        if (j->contiguous)
            memcpy(d, s, (size_t)(n * j->esize));
        else
            copy_run(d, s, j->esize, n, j->ds[last], j->ss[last]);
        advance(j, cnt, &doff, &soff);
    }
}

void cpu_copy_strided(void *dst, const void *src, size_t esize, int rank, const int64_t *dims,
                      const int64_t *dst_strides, const int64_t *src_strides) {
    job j;
    memset(&j, 0, sizeof j);
    j.dst = dst;
    j.src = src;
    j.esize = (ptrdiff_t)esize;
    j.tile_axis = -1;
    int r = 0;
    for (int k = 0; k < rank; k++) {
        if (dims[k] == 0) return;
        if (dims[k] == 1) continue;
        j.dims[r] = dims[k];
        j.ds[r] = dst_strides[k];
        j.ss[r] = src_strides[k];
        r++;
    }
    if (r == 0) {
        memcpy(dst, src, esize);
        return;
    }
    /* Merge an axis into its outer neighbour when both views step over it densely. */
    int m = 0;
    for (int k = 1; k < r; k++) {
        if (j.ds[m] == j.ds[k] * j.dims[k] && j.ss[m] == j.ss[k] * j.dims[k]) {
            j.dims[m] *= j.dims[k];
            j.ds[m] = j.ds[k];
            j.ss[m] = j.ss[k];
        } else {
            m++;
            j.dims[m] = j.dims[k];
            j.ds[m] = j.ds[k];
            j.ss[m] = j.ss[k];
        }
    }
    j.rank = r = m + 1;
    int last = r - 1;
    j.contiguous = j.ds[last] == 1 && j.ss[last] == 1;
    if (!j.contiguous && j.ds[last] == 1 && j.dims[last] >= 8) {
        for (int a = last - 1; a >= 0; a--)
            if (j.ss[a] == 1 && j.dims[a] >= 8) {
                j.tile_axis = a;
                break;
            }
    }
    int64_t units = 1, per_unit = j.dims[last];
    for (int a = 0; a < last; a++) {
        if (a == j.tile_axis) continue;
        j.outer[j.n_outer++] = a;
        units *= j.dims[a];
    }
    if (j.tile_axis >= 0) {
        j.tile_blocks = (j.dims[j.tile_axis] + TILE * TILE_GROUP - 1) / (TILE * TILE_GROUP);
        units *= j.tile_blocks;
        per_unit *= TILE * TILE_GROUP;
    }
    int64_t grain = GRAIN_ELEMS / per_unit;
    parallel_for(units, grain < 1 ? 1 : grain, run_units, &j);
}

void cpu_strides(int rank, const int64_t *dims, int64_t *strides) {
    int64_t s = 1;
    for (int k = rank - 1; k >= 0; k--) {
        strides[k] = s;
        s *= dims[k];
    }
}

void cpu_transpose(void *dst, const void *src, size_t esize, int rank, const int64_t *in_dims,
                   const int64_t *perm) {
    int64_t in_st[ONYX_MAX_RANK], out_dims[ONYX_MAX_RANK], out_st[ONYX_MAX_RANK],
        src_st[ONYX_MAX_RANK];
    cpu_strides(rank, in_dims, in_st);
    for (int k = 0; k < rank; k++) {
        out_dims[k] = in_dims[perm[k]];
        src_st[k] = in_st[perm[k]];
    }
    cpu_strides(rank, out_dims, out_st);
    cpu_copy_strided(dst, src, esize, rank, out_dims, out_st, src_st);
}

void cpu_fill(void *dst, const void *value, size_t esize, int64_t n) {
    if (n <= 0) return;
    const unsigned char *v = value;
    bool uniform = true;
    for (size_t b = 1; b < esize; b++) uniform = uniform && v[b] == v[0];
    if (uniform) {
        memset(dst, v[0], (size_t)n * esize);
        return;
    }
    switch (esize) {
#define CASE(size, T)                                                                              \
    case size: {                                                                                   \
        T x, *d = dst;                                                                             \
        memcpy(&x, value, sizeof x);                                                               \
        for (int64_t i = 0; i < n; i++) d[i] = x;                                                  \
        break;                                                                                     \
    }
        CPU_FOR_BY_SIZE(CASE)
#undef CASE
    default:
        for (int64_t i = 0; i < n; i++) memcpy((char *)dst + (size_t)i * esize, value, esize);
    }
}

onyx_status cpu_scalar_from_double(onyx_dtype d, double v, void *out) {
    /* integers go through a saturated int64: an out-of-range float-to-int cast is undefined */
    int64_t i = v != v                        ? 0
                : v >= 9223372036854775807.0  ? INT64_MAX
                : v <= -9223372036854775808.0 ? INT64_MIN
                                              : (int64_t)v;
    switch (d) {
#define CASE(D, T, SRC)                                                                            \
    case D: {                                                                                      \
        T x = (T)SRC;                                                                              \
        memcpy(out, &x, sizeof x);                                                                 \
        return ONYX_OK;                                                                            \
    }
#define FCASE(D, T) CASE(D, T, v)
#define ICASE(D, T) CASE(D, T, i)
        CPU_FOR_FLOATS(FCASE)
        CPU_FOR_INTS(ICASE)
#undef FCASE
#undef ICASE
#undef CASE
    case ONYX_BOOL: *(uint8_t *)out = v != 0; return ONYX_OK;
    case ONYX_FLOAT16: {
        uint16_t h = float_to_fp16((float)v);
        memcpy(out, &h, sizeof h);
        return ONYX_OK;
    }
    case ONYX_BFLOAT16: {
        uint16_t h = float_to_bf16((float)v);
        memcpy(out, &h, sizeof h);
        return ONYX_OK;
    }
    default:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "cannot write a number as %s", onyx_dtype_name(d));
    }
}

size_t cpu_move_esize(const tensor *t) { return dtype_size(t->dtype); }

void cpu_move_begin(tensor *out) {
    if (out->dtype != ONYX_STRING || !out->data) return;
    char **s = out->data;
    for (int64_t i = 0; i < out->numel; i++) {
        if (out->owns) free(s[i]);
        s[i] = NULL;
    }
}

onyx_status cpu_move_end(tensor *out) {
    if (out->dtype != ONYX_STRING || !out->data) return ONYX_OK;
    char **s = out->data;
    for (int64_t i = 0; i < out->numel; i++) {
        const char *from = s[i] ? s[i] : "";
        size_t len = strlen(from);
        char *d = malloc(len + 1);
        if (!d) {
            /* The rest still borrows input strings: drop them so that releasing is safe. */
            for (int64_t k = i; k < out->numel; k++) s[k] = NULL;
            return onyx_oom("string tensor element");
        }
        memcpy(d, from, len + 1);
        s[i] = d;
    }
    return ONYX_OK;
}

onyx_status cpu_check_indices(const tensor *idx, int64_t dim, const char *what) {
    if (idx->dtype != ONYX_INT32 && idx->dtype != ONYX_INT64)
        return onyx_error(ONYX_ERR_SHAPE, "%s have type %s, expected int32 or int64", what,
                          onyx_dtype_name(idx->dtype));
    for (int64_t i = 0; i < idx->numel; i++) {
        int64_t v = cpu_index_at(idx, i);
        if (v < -dim || v >= dim)
            return onyx_error(ONYX_ERR_RUNTIME,
                              "%s: index %" PRId64 " (element %" PRId64
                              ") is out of range [%" PRId64 ", %" PRId64 "]",
                              what, v, i, -dim, dim - 1);
    }
    return ONYX_OK;
}

onyx_status cpu_check_tuples(const tensor *idx, int m, const int64_t *dims) {
    if (idx->dtype != ONYX_INT32 && idx->dtype != ONYX_INT64)
        return onyx_error(ONYX_ERR_SHAPE, "indices have type %s, expected int32 or int64",
                          onyx_dtype_name(idx->dtype));
    if (m == 0) return ONYX_OK;
    for (int64_t e = 0; e < idx->numel; e++) {
        int64_t v = cpu_index_at(idx, e), d = dims[e % m];
        if (v < -d || v >= d)
            return onyx_error(ONYX_ERR_RUNTIME,
                              "indices: index %" PRId64 " (element %" PRId64 ", axis %" PRId64
                              ") is out of range [%" PRId64 ", %" PRId64 "]",
                              v, e, e % m, -d, d - 1);
    }
    return ONYX_OK;
}

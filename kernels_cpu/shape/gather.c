/* CPU kernels that read elements picked by index or mask tensors: Gather, GatherElements,
 * GatherND, Compress, NonZero. Every index is checked before any element is read. */
#include <inttypes.h>
#include <string.h>

#include "core/parallel.h"
#include "ops/shape_common.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/move.h"

enum { GRAIN_ELEMS = 16384 };

static int64_t product(const int64_t *dims, int from, int to) {
    int64_t p = 1;
    for (int k = from; k < to; k++) p *= dims[k];
    return p;
}

static int64_t wrap_index(int64_t i, int64_t dim) { return i < 0 ? i + dim : i; }

/* ---------------------------------------------------------------- Gather */

typedef struct gather_job {
    const char *x;
    char *y;
    const tensor *idx;
    int64_t n_idx, dim, inner;
    size_t es;
} gather_job;

static void gather_rows(void *ctx, int64_t begin, int64_t end) {
    const gather_job *j = ctx;
    size_t row = (size_t)j->inner * j->es;
    for (int64_t r = begin; r < end; r++) {
        int64_t o = r / j->n_idx, k = r % j->n_idx;
        int64_t i = wrap_index(cpu_index_at(j->idx, k), j->dim);
        memcpy(j->y + (size_t)r * row, j->x + (size_t)(o * j->dim + i) * row, row);
    }
}

onyx_status cpu_gather_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *idx = kernel_input(c, 1);
    tensor *y = kernel_output(c, 0);
    int axis;
    TRY(ops_axis(attr_int(c->node, "axis", 0), x->rank, "axis", &axis));
    gather_job j = {x->data,          y->data,       idx,
                    idx->numel,       x->dims[axis], product(x->dims, axis + 1, x->rank),
                    cpu_move_esize(x)};
    TRY(cpu_check_indices(idx, j.dim, "indices"));
    if (y->numel == 0) return ONYX_OK;
    int64_t rows = product(x->dims, 0, axis) * j.n_idx;
    if (rows == 1 && y->data == j.x + (size_t)(wrap_index(cpu_index_at(idx, 0), j.dim) *
                                                j.inner) * j.es)
        return ONYX_OK; /* a view (KF_VIEW): the plan put Y over the one slice */
    cpu_move_begin(y);
    parallel_for(rows, GRAIN_ELEMS / j.inner + 1, gather_rows, &j);
    return cpu_move_end(y);
}

/* ---------------------------------------------------------------- GatherElements */

typedef struct elements_job {
    const char *x;
    char *y;
    const tensor *idx;
    int rank, axis;
    int64_t axis_dim, xst[ONYX_MAX_RANK], idims[ONYX_MAX_RANK];
    size_t es;
} elements_job;

/* One row = the last axis of the index tensor at one outer index. */
static void elements_rows(void *ctx, int64_t begin, int64_t end) {
    const elements_job *j = ctx;
    int last = j->rank - 1;
    int64_t len = j->idims[last];
    for (int64_t r = begin; r < end; r++) {
        int64_t rem = r, base = 0;
        for (int k = last - 1; k >= 0; k--) {
            int64_t i = rem % j->idims[k];
            rem /= j->idims[k];
            if (k != j->axis) base += i * j->xst[k];
        }
        for (int64_t l = 0; l < len; l++) {
            int64_t e = r * len + l;
            int64_t v = wrap_index(cpu_index_at(j->idx, e), j->axis_dim);
            int64_t off = base + v * j->xst[j->axis] + (j->axis == last ? 0 : l * j->xst[last]);
            memcpy(j->y + (size_t)e * j->es, j->x + (size_t)off * j->es, j->es);
        }
    }
}

onyx_status cpu_gather_elements_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *idx = kernel_input(c, 1);
    tensor *y = kernel_output(c, 0);
    int axis;
    TRY(ops_axis(attr_int(c->node, "axis", 0), x->rank, "axis", &axis));
    /* off the axis an index row reads data at its own position, so it must lie inside data */
    bool fits = idx->rank == x->rank;
    for (int k = 0; fits && k < x->rank; k++) fits = k == axis || idx->dims[k] <= x->dims[k];
    if (!fits) {
        char a[160], b[160];
        return onyx_error(ONYX_ERR_SHAPE, "indices of shape %s do not fit data of shape %s",
                          shape_str(idx->rank, idx->dims, a, sizeof a),
                          shape_str(x->rank, x->dims, b, sizeof b));
    }
    TRY(cpu_check_indices(idx, x->dims[axis], "indices"));
    if (y->numel == 0) return ONYX_OK;
    elements_job j = {.x = x->data,
                      .y = y->data,
                      .idx = idx,
                      .rank = x->rank,
                      .axis = axis,
                      .axis_dim = x->dims[axis],
                      .es = cpu_move_esize(x)};
    cpu_strides(x->rank, x->dims, j.xst);
    for (int k = 0; k < x->rank; k++) j.idims[k] = idx->dims[k];
    int64_t len = idx->dims[x->rank - 1];
    cpu_move_begin(y);
    parallel_for(idx->numel / len, GRAIN_ELEMS / len + 1, elements_rows, &j);
    return cpu_move_end(y);
}

/* ---------------------------------------------------------------- GatherND */

typedef struct nd_job {
    const char *x;
    char *y;
    const tensor *idx;
    int m;                       /* index tuple length */
    int64_t per_batch;           /* tuples per batch */
    int64_t batch_stride;        /* elements of x per batch */
    int64_t slice;               /* elements copied per tuple */
    int64_t dims[ONYX_MAX_RANK]; /* x dims indexed by the tuple */
    int64_t st[ONYX_MAX_RANK];   /* and their strides */
    size_t es;
} nd_job;

static void nd_rows(void *ctx, int64_t begin, int64_t end) {
    const nd_job *j = ctx;
    size_t bytes = (size_t)j->slice * j->es;
    for (int64_t t = begin; t < end; t++) {
        int64_t off = (t / j->per_batch) * j->batch_stride;
        for (int k = 0; k < j->m; k++)
            off += wrap_index(cpu_index_at(j->idx, t * j->m + k), j->dims[k]) * j->st[k];
        memcpy(j->y + (size_t)t * bytes, j->x + (size_t)off * j->es, bytes);
    }
}

onyx_status cpu_gather_nd_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *idx = kernel_input(c, 1);
    tensor *y = kernel_output(c, 0);
    int64_t bd = c->node->version >= 12 ? attr_int(c->node, "batch_dims", 0) : 0;
    int q = idx->rank;
    /* inference checks this only when both shapes are known before the run */
    if (q < 1 || bd < 0 || bd >= q || bd >= x->rank || idx->dims[q - 1] > x->rank - bd)
        return onyx_error(ONYX_ERR_SHAPE,
                          "indices of rank %d (tuples of %lld) and batch_dims %lld do not fit "
                          "data of rank %d",
                          q, (long long)(q > 0 ? idx->dims[q - 1] : 0), (long long)bd, x->rank);
    int b = (int)bd;
    for (int k = 0; k < b; k++)
        if (idx->dims[k] != x->dims[k])
            return onyx_error(ONYX_ERR_SHAPE, "batch dim %d is %lld in data but %lld in indices",
                              k, (long long)x->dims[k], (long long)idx->dims[k]);
    int m = (int)idx->dims[q - 1];
    nd_job j = {.x = x->data, .y = y->data, .idx = idx, .m = m, .es = cpu_move_esize(x)};
    int64_t xst[ONYX_MAX_RANK];
    cpu_strides(x->rank, x->dims, xst);
    for (int k = 0; k < m; k++) {
        j.dims[k] = x->dims[b + k];
        j.st[k] = xst[b + k];
    }
    TRY(cpu_check_tuples(idx, m, j.dims));
    j.per_batch = product(idx->dims, b, q - 1);
    j.batch_stride = product(x->dims, b, x->rank);
    j.slice = product(x->dims, b + m, x->rank);
    int64_t tuples = product(idx->dims, 0, q - 1);
    if (y->dtype != x->dtype || y->numel != tuples * j.slice)
        return onyx_error(ONYX_ERR_SHAPE, "output has %lld elements, expected %lld",
                          (long long)y->numel, (long long)(tuples * j.slice));
    if (y->numel == 0) return ONYX_OK;
    cpu_move_begin(y);
    parallel_for(tuples, GRAIN_ELEMS / j.slice + 1, nd_rows, &j);
    return cpu_move_end(y);
}

/* ---------------------------------------------------------------- Compress */

onyx_status cpu_compress_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *cond = kernel_input(c, 1);
    if (cond->dtype != ONYX_BOOL)
        return onyx_error(ONYX_ERR_SHAPE, "condition has type %s, expected bool",
                          onyx_dtype_name(cond->dtype));
    const uint8_t *keep = cond->data;
    bool flat = !node_attr(c->node, "axis");
    int axis = 0;
    int64_t outer = 1, dim = x->numel, inner = 1;
    if (!flat) {
        TRY(ops_axis(attr_int(c->node, "axis", 0), x->rank, "axis", &axis));
        outer = product(x->dims, 0, axis);
        dim = x->dims[axis];
        inner = product(x->dims, axis + 1, x->rank);
    }
    /* as numpy: the condition may be longer than the axis when the extra entries are false */
    int64_t n_cond = cond->numel < dim ? cond->numel : dim, count = 0;
    for (int64_t i = 0; i < cond->numel; i++) {
        if (!keep[i]) continue;
        if (i >= dim)
            return onyx_error(ONYX_ERR_RUNTIME,
                              "condition selects index %" PRId64 ", past the size %" PRId64, i,
                              dim);
        count++;
    }
    int64_t dims[ONYX_MAX_RANK];
    int rank = 1;
    dims[0] = count;
    if (!flat) {
        rank = x->rank;
        for (int k = 0; k < rank; k++) dims[k] = k == axis ? count : x->dims[k];
    }
    TRY(value_alloc_tensor(c->out[0], x->dtype, rank, dims));
    tensor *y = &c->out[0]->t;
    if (y->numel == 0) return ONYX_OK;
    size_t es = cpu_move_esize(x), row = (size_t)inner * es;
    const char *src = x->data;
    char *dst = y->data;
    cpu_move_begin(y);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < n_cond; i++)
            if (keep[i]) {
                memcpy(dst, src + (size_t)(o * dim + i) * row, row);
                dst += row;
            }
    return cpu_move_end(y);
}

/* ---------------------------------------------------------------- NonZero */

/* Whether element i is not zero: by value (-0.0 is zero, NaN is not), strings when not empty. */
static bool nonzero_at(const tensor *x, int64_t i) {
    switch (x->dtype) {
#define CASE(D, T)                                                                                 \
    case D: return ((const T *)x->data)[i] != 0;
        CPU_FOR_NUMERIC_BOOL(CASE)
#undef CASE
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: return (((const uint16_t *)x->data)[i] & 0x7fff) != 0;
    case ONYX_COMPLEX64:
        return ((const float *)x->data)[2 * i] != 0 || ((const float *)x->data)[2 * i + 1] != 0;
    case ONYX_COMPLEX128:
        return ((const double *)x->data)[2 * i] != 0 || ((const double *)x->data)[2 * i + 1] != 0;
    case ONYX_STRING: {
        const char *s = ((char *const *)x->data)[i];
        return s && s[0];
    }
    default: return false;
    }
}

onyx_status cpu_nonzero_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    int64_t count = 0;
    for (int64_t i = 0; i < x->numel; i++) count += nonzero_at(x, i);
    /* a scalar counts as a 1-element vector, as numpy does */
    int r = x->rank > 0 ? x->rank : 1;
    int64_t dims[2] = {r, count};
    TRY(value_alloc_tensor(c->out[0], ONYX_INT64, 2, dims));
    int64_t *y = c->out[0]->t.data, n = 0;
    for (int64_t i = 0; i < x->numel; i++) {
        if (!nonzero_at(x, i)) continue;
        int64_t rem = i;
        for (int k = x->rank - 1; k >= 0; k--) {
            y[k * count + n] = rem % x->dims[k];
            rem /= x->dims[k];
        }
        if (x->rank == 0) y[n] = 0;
        n++;
    }
    return ONYX_OK;
}

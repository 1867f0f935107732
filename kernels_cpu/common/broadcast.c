/* Numpy broadcasting iterator: stride planning, dim merging and chunked (parallel) iteration. */
#include "kernels_cpu/common/broadcast.h"

#include "core/parallel.h"
#include "geometry/broadcast.h"

onyx_status cpu_bcast_init(cpu_bcast_iter *it, int out_rank, const int64_t *out_dims,
                           size_t out_elem, int n_in, const int *in_rank,
                           const int64_t *const *in_dims, const size_t *in_elem) {
    if (n_in + 1 > CPU_BCAST_MAX_OPS || out_rank < 0 || out_rank > ONYX_MAX_RANK)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "broadcast over %d inputs of rank %d", n_in,
                          out_rank);
    int n_ops = n_in + 1;
    int64_t strides[CPU_BCAST_MAX_OPS][ONYX_MAX_RANK];
    int64_t numel = 1;
    for (int d = out_rank - 1; d >= 0; d--) {
        strides[0][d] = numel;
        numel *= out_dims[d];
    }
    for (int k = 0; k < n_in; k++) {
        geom_msg m;
        if (geom_broadcast_strides(in_rank[k], in_dims[k], out_rank, out_dims, strides[k + 1],
                                   &m) != ONYX_OK)
            return onyx_error(ONYX_ERR_SHAPE, "input %d: %s", k, m.text);
    }
    /* Drop size-1 dims, then merge neighbours that every operand walks contiguously. */
    it->n_ops = n_ops;
    it->numel = numel;
    it->elem_size[0] = out_elem;
    for (int k = 0; k < n_in; k++) it->elem_size[k + 1] = in_elem[k];
    int r = 0;
    for (int d = 0; d < out_rank; d++) {
        if (out_dims[d] == 1) continue;
        bool merge = r > 0;
        for (int k = 0; k < n_ops && merge; k++)
            merge = it->strides[k][r - 1] == strides[k][d] * out_dims[d];
        if (merge) {
            it->dims[r - 1] *= out_dims[d];
            for (int k = 0; k < n_ops; k++) it->strides[k][r - 1] = strides[k][d];
        } else {
            it->dims[r] = out_dims[d];
            for (int k = 0; k < n_ops; k++) it->strides[k][r] = strides[k][d];
            r++;
        }
    }
    if (r == 0) {
        it->dims[0] = 1;
        for (int k = 0; k < n_ops; k++) it->strides[k][0] = 1;
        r = 1;
    }
    it->rank = r;
    return ONYX_OK;
}

static size_t elem_size_of(onyx_dtype d) {
    return d == ONYX_STRING ? sizeof(char *) : dtype_size(d);
}

onyx_status cpu_bcast_init_tensors(cpu_bcast_iter *it, const tensor *out, int n_in,
                                   const tensor *const *in) {
    int ranks[CPU_BCAST_MAX_OPS];
    const int64_t *dims[CPU_BCAST_MAX_OPS];
    size_t sizes[CPU_BCAST_MAX_OPS];
    if (n_in + 1 > CPU_BCAST_MAX_OPS)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "broadcast over %d inputs", n_in);
    for (int k = 0; k < n_in; k++) {
        ranks[k] = in[k]->rank;
        dims[k] = in[k]->dims;
        sizes[k] = elem_size_of(in[k]->dtype);
    }
    return cpu_bcast_init(it, out->rank, out->dims, elem_size_of(out->dtype), n_in, ranks, dims,
                          sizes);
}

typedef struct run_ctx {
    const cpu_bcast_iter *it;
    char *base[CPU_BCAST_MAX_OPS];
    cpu_bcast_fn fn;
    void *ctx;
} run_ctx;

static void run_range(void *arg, int64_t begin, int64_t end) {
    const run_ctx *rc = arg;
    const cpu_bcast_iter *it = rc->it;
    int r = it->rank, n = it->n_ops;
    int64_t idx[ONYX_MAX_RANK], off[CPU_BCAST_MAX_OPS] = {0}, step[CPU_BCAST_MAX_OPS];
    int64_t rest = begin;
    for (int d = r - 1; d >= 0; d--) {
        idx[d] = rest % it->dims[d];
        rest /= it->dims[d];
        for (int k = 0; k < n; k++) off[k] += idx[d] * it->strides[k][d];
    }
    for (int k = 0; k < n; k++) step[k] = it->strides[k][r - 1];
    char *p[CPU_BCAST_MAX_OPS];
    int64_t inner_dim = it->dims[r - 1];
    for (int64_t pos = begin; pos < end;) {
        int64_t len = inner_dim - idx[r - 1];
        if (len > end - pos) len = end - pos;
        for (int k = 0; k < n; k++) p[k] = rc->base[k] + (size_t)off[k] * it->elem_size[k];
        rc->fn(rc->ctx, len, p, step);
        pos += len;
        idx[r - 1] += len;
        for (int k = 0; k < n; k++) off[k] += len * step[k];
        for (int d = r - 1; d > 0 && idx[d] == it->dims[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
            for (int k = 0; k < n; k++)
                off[k] += it->strides[k][d - 1] - it->dims[d] * it->strides[k][d];
        }
    }
}

/* Elements per chunk: big enough that thread hand-off is noise against the work. */
#define CPU_BCAST_GRAIN 32768

void cpu_bcast_run(const cpu_bcast_iter *it, void *out, const void *const *in, cpu_bcast_fn fn,
                   void *ctx, bool serial) {
    if (it->numel <= 0) return;
    run_ctx rc = {.it = it, .fn = fn, .ctx = ctx};
    rc.base[0] = out;
    for (int k = 1; k < it->n_ops; k++) rc.base[k] = (char *)(uintptr_t)in[k - 1];
    if (serial) run_range(&rc, 0, it->numel);
    else parallel_for(it->numel, CPU_BCAST_GRAIN, run_range, &rc);
}

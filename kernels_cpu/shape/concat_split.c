/* CPU kernels of Concat and Split: each input (output) is a block of every outer row of the
 * joined tensor, copied by the strided engine. A Concat along channels of tensors the fusion
 * pass keeps opaque (channels last, core/fuse.h; its state then non-NULL, cpu_opaque_prepare)
 * joins them pixel by pixel: its rows are the pixels. */
#include "ops/shape_common.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/move.h"
#include "kernels_cpu/common/cpu_types.h"
#include "core/parallel.h"

/* A channels-last Concat (of float tensors: the opaque layout's, core/fuse.h) in blocks of
 * PIXEL_BLOCK pixels, each input's channels copied into every pixel row of a block while its rows
 * stay in cache (one input at a time over all the pixels wrote each pixel row once per input, in
 * separate passes, and cost DenseNet's 62 concatenations a quarter more than plain planes). */
#define PIXEL_BLOCK 32

typedef struct {
    const kernel_call *c;
    float *y;
    int64_t row; /* channels of Y */
} pixels_job;

static void concat_pixels(void *ctx, int64_t b, int64_t e) {
    const pixels_job *j = ctx;
    for (int64_t blk = b; blk < e; blk++) {
        int64_t p0 = blk * PIXEL_BLOCK, p1 = p0 + PIXEL_BLOCK, off = 0;
        for (int i = 0; i < j->c->n_in; i++) {
            const tensor *x = kernel_input(j->c, i);
            const int64_t len = x->dims[1], pixels = x->numel / (len > 0 ? len : 1);
            const float *src = x->data;
            for (int64_t p = p0; p < p1 && p < pixels; p++) {
                const float *s = src + p * len;
                float *d = j->y + p * j->row + off;
                CPU_SIMD for (int64_t k = 0; k < len; k++) d[k] = s[k];
            }
            off += len;
        }
    }
}

/* Outer rows and the elements per unit of `axis` of a shape. */
static void split_shape(const tensor *t, int axis, int64_t *outer, int64_t *inner) {
    int64_t o = 1, in = 1;
    for (int k = 0; k < axis; k++) o *= t->dims[k];
    for (int k = axis + 1; k < t->rank; k++) in *= t->dims[k];
    *outer = o;
    *inner = in;
}

onyx_status cpu_concat_run(const kernel_call *c) {
    tensor *y = kernel_output(c, 0);
    int axis;
    TRY(ops_axis(attr_int(c->node, "axis", 1), y->rank, "axis", &axis));
    /* Inference may have fixed the output from some inputs while others were still unknown:
     * each input must match it before its rows are copied. */
    int64_t at = 0;
    for (int i = 0; i < c->n_in; i++) {
        const tensor *x = kernel_input(c, i);
        if (!x) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "input %d is missing", i);
        bool fits = x->dtype == y->dtype && x->rank == y->rank;
        for (int k = 0; fits && k < y->rank; k++) fits = k == axis || x->dims[k] == y->dims[k];
        if (!fits || x->dims[axis] > y->dims[axis] - at) {
            char a[160], b[160];
            return onyx_error(ONYX_ERR_SHAPE, "input %d (%s%s) does not fit the output %s%s", i,
                              onyx_dtype_name(x->dtype), shape_str(x->rank, x->dims, a, sizeof a),
                              onyx_dtype_name(y->dtype), shape_str(y->rank, y->dims, b, sizeof b));
        }
        at += x->dims[axis];
    }
    if (at != y->dims[axis])
        return onyx_error(ONYX_ERR_SHAPE, "inputs add up to %lld along axis %d, expected %lld",
                          (long long)at, axis, (long long)y->dims[axis]);
    int64_t outer, inner;
    split_shape(y, axis, &outer, &inner);
    if (c->state) { /* channels last: [N, spatial..., C], each pixel a row */
        if (axis != 1 || y->rank < 3 || y->dtype != ONYX_FLOAT)
            return onyx_error(ONYX_ERR_RUNTIME, "a channels-last Concat joins float channels "
                              "(axis 1) of tensors of rank 3+");
        pixels_job j = {c, y->data, y->dims[1]};
        parallel_for((outer * inner + PIXEL_BLOCK - 1) / PIXEL_BLOCK, 1, concat_pixels, &j);
        return ONYX_OK;
    }
    int64_t row = y->dims[axis] * inner, off = 0;
    size_t es = cpu_move_esize(y);
    cpu_move_begin(y);
    for (int i = 0; i < c->n_in; i++) {
        const tensor *x = kernel_input(c, i);
        int64_t len = x->dims[axis] * inner;
        int64_t dims[2] = {outer, len}, ds[2] = {row, 1}, ss[2] = {len, 1};
        char *to = (char *)y->data + off * (int64_t)es;
        /* else the plan put Y over input 0 (KF_INPLACE_PREFIX: a single outer row) */
        if (to != x->data)
            cpu_copy_strided(to, x->data, es, 2, dims, ds, ss);
        off += len;
    }
    return cpu_move_end(y);
}

onyx_status cpu_split_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    int axis;
    TRY(ops_axis(attr_int(c->node, "axis", 0), x->rank, "axis", &axis));
    void *mem;
    TRY(kernel_scratch(c, ((size_t)c->n_out + 1) * sizeof(int64_t), &mem));
    int64_t *sizes = mem;
    TRY(ops_split_sizes(c->node, c->n_out, x->dims[axis], kernel_input(c, 1), sizes));
    int64_t outer, inner;
    split_shape(x, axis, &outer, &inner);
    int64_t row = x->dims[axis] * inner, off = 0;
    size_t es = cpu_move_esize(x);
    for (int o = 0; o < c->n_out; o++) {
        tensor *y = kernel_output(c, o);
        int64_t len = sizes[o] * inner;
        if (y) {
            if (y->dtype != x->dtype || y->numel != outer * len)
                return onyx_error(ONYX_ERR_SHAPE, "output %d has %lld elements, expected %lld",
                                  o, (long long)y->numel, (long long)(outer * len));
            int64_t dims[2] = {outer, len}, ds[2] = {len, 1}, ss[2] = {row, 1};
            const char *from = (const char *)x->data + off * (int64_t)es;
            if (outer == 1 && y->data == from) { /* a view (KF_VIEW): Y is its part of X */
                off += len;
                continue;
            }
            cpu_move_begin(y);
            cpu_copy_strided(y->data, from, es, 2, dims, ds, ss);
            TRY(cpu_move_end(y));
        }
        off += len;
    }
    return ONYX_OK;
}

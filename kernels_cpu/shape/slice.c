/* CPU kernels of Slice (a strided view of the input, steps may be negative) and Tile (the input
 * read with stride 0 over each repeat), both one call of the strided copy engine. */
#include "ops/shape_common.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/move.h"

onyx_status cpu_slice_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    ops_slice s;
    TRY(ops_slice_resolve(c->node, x->rank, x->dims, kernel_input(c, 1), kernel_input(c, 2), kernel_input(c, 3), kernel_input(c, 4),
                          &s));
    if (y->numel == 0) return ONYX_OK;
    int64_t in_st[ONYX_MAX_RANK], out_st[ONYX_MAX_RANK], src_st[ONYX_MAX_RANK], off = 0;
    cpu_strides(x->rank, x->dims, in_st);
    cpu_strides(y->rank, y->dims, out_st);
    for (int k = 0; k < x->rank; k++) {
        if (s.len[k] != y->dims[k])
            return onyx_error(ONYX_ERR_SHAPE, "output dim %d is %lld, the slice gives %lld", k,
                              (long long)y->dims[k], (long long)s.len[k]);
        off += s.start[k] * in_st[k];
        /* a step larger than the axis takes one element: its product could overflow */
        src_st[k] = s.len[k] > 1 ? s.step[k] * in_st[k] : 0;
    }
    size_t es = cpu_move_esize(x);
    cpu_move_begin(y);
    cpu_copy_strided(y->data, (const char *)x->data + off * (int64_t)es, es, x->rank, y->dims,
                     out_st, src_st);
    return cpu_move_end(y);
}

onyx_status cpu_tile_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (y->numel == 0) return ONYX_OK;
    /* view each output axis as (repeat, dim): the repeat steps 0 through the input */
    int64_t in_st[ONYX_MAX_RANK], dims[CPU_MOVE_MAX_RANK], ds[CPU_MOVE_MAX_RANK],
        ss[CPU_MOVE_MAX_RANK];
    int r = x->rank;
    cpu_strides(r, x->dims, in_st);
    for (int k = 0; k < r; k++) {
        dims[2 * k] = y->dims[k] / x->dims[k];
        dims[2 * k + 1] = x->dims[k];
        ss[2 * k] = 0;
        ss[2 * k + 1] = in_st[k];
    }
    cpu_strides(2 * r, dims, ds);
    size_t es = cpu_move_esize(x);
    cpu_move_begin(y);
    cpu_copy_strided(y->data, x->data, es, 2 * r, dims, ds, ss);
    return cpu_move_end(y);
}

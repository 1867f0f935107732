/* CPU kernels of Slice and Tile, one call each of the strided copy engine: Slice reads its input
 * by the plan's bounds (core/op_params.h; steps may be negative; a slice that is one contiguous
 * run of its input may be a view of it, KF_VIEW), Tile with stride 0 over each repeat. */
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/move.h"

/* Whether the slice the plan handed is the one of X and Y (it is made for them: a check, not a
 * second derivation). */
static onyx_status slice_check(const geom_slice *s, const tensor *x, const tensor *y) {
    bool fits = s->rank == x->rank && y->rank == x->rank;
    for (int k = 0; k < x->rank && fits; k++)
        fits = x->dims[k] == s->in[k] && y->dims[k] == s->len[k];
    return fits ? ONYX_OK : onyx_error(ONYX_ERR_RUNTIME, "the plan's slice is for other dims");
}

onyx_status cpu_slice_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    const geom_slice *s;
    TRY(kernel_slice(c->params, &s));
    TRY(slice_check(s, x, y));
    if (y->numel == 0) return ONYX_OK;
    int64_t in_st[ONYX_MAX_RANK], out_st[ONYX_MAX_RANK], src_st[ONYX_MAX_RANK], off = 0;
    cpu_strides(x->rank, x->dims, in_st);
    cpu_strides(y->rank, y->dims, out_st);
    for (int k = 0; k < x->rank; k++) {
        off += s->start[k] * in_st[k];
        /* a step larger than the axis takes one element: its product could overflow */
        src_st[k] = s->len[k] > 1 ? s->step[k] * in_st[k] : 0;
    }
    size_t es = cpu_move_esize(x);
    const char *from = (const char *)x->data + off * (int64_t)es;
    if (y->data == from) return ONYX_OK; /* a view (KF_VIEW): the plan put Y over the run */
    cpu_move_begin(y);
    cpu_copy_strided(y->data, from, es, x->rank, y->dims, out_st, src_st);
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

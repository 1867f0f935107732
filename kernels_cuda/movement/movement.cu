// Data movement on CUDA: the aliasing reshapes (Reshape, Flatten, Squeeze, Unsqueeze, Identity),
// the ops that are one strided copy (Transpose, Concat, Split, Slice, Tile, Expand,
// DepthToSpace, SpaceToDepth), and the family's kernel table.
#include <string.h>

#include "geometry/broadcast.h"
#include "kernels_cuda/movement/movement.cuh"

namespace {

// ---------------------------------------------------------------- aliasing ops

// The output usually shares the input's buffer (KF_ALIAS_INPUT0): a copy only when it does not.
onyx_status alias_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (!x || !y) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: input or output missing",
                                    c->node->op_type);
    if (y->data == x->data || x->nbytes == 0) return ONYX_OK;
    if (y->nbytes != x->nbytes)
        return onyx_error(ONYX_ERR_SHAPE, "%s: cannot view %zu bytes as %zu bytes",
                          c->node->op_type, x->nbytes, y->nbytes);
    return cuda_status(cudaMemcpyAsync(y->data, x->data, x->nbytes, cudaMemcpyDeviceToDevice,
                                       cuda_stream(c)),
                       c->node->op_type);
}

// ---------------------------------------------------------------- Transpose

// The perm attribute as the host reads it (node_transpose_perm: absent, the axes reversed);
// false when it is no permutation of 0..rank-1.
bool transpose_perm(const graph_node *n, int rank, int64_t *perm) {
    if (node_transpose_perm(n, rank, perm) == ONYX_OK) return true;
    onyx_error_clear(); // supports declines; run says so itself
    return false;
}

bool transpose_supports(const kernel_prep *p) {
    const type_info *x = p->in_type[0];
    int64_t perm[ONYX_MAX_RANK];
    return mv_ranks_ok(p) && mv_size_ok(x->dtype) && transpose_perm(p->node, x->rank, perm);
}

// Output axis i walks input axis perm[i]: a copy of the input read with permuted strides.
onyx_status transposed_copy(const kernel_call *c, const tensor *x, tensor *y, int rank,
                            const int64_t *in_dims, const int64_t *perm, const char *what) {
    int64_t xst[MV_MAX_RANK], dims[MV_MAX_RANK], sst[MV_MAX_RANK], dst[MV_MAX_RANK];
    mv_strides(rank, in_dims, xst);
    for (int i = 0; i < rank; i++) {
        dims[i] = in_dims[perm[i]];
        sst[i] = xst[perm[i]];
    }
    mv_strides(rank, dims, dst);
    if (mv_product(dims, 0, rank) != y->numel)
        return onyx_error(ONYX_ERR_SHAPE, "%s: output has %lld elements, expected %lld", what,
                          (long long)y->numel, (long long)mv_product(dims, 0, rank));
    return mv_copy(c, y->data, x->data, dtype_size(x->dtype), rank, dims, dst, sst, what);
}

onyx_status transpose_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    int64_t perm[ONYX_MAX_RANK];
    if (!transpose_perm(c->node, x->rank, perm))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "Transpose: perm is no permutation of the axes");
    if (y->data == x->data && x->numel > 0) return ONYX_OK; /* a view: only dims of 1 move */
    return transposed_copy(c, x, y, x->rank, x->dims, perm, "Transpose");
}

// ---------------------------------------------------------------- DepthToSpace, SpaceToDepth

// [N, C, H, W] as a 6-D view and the permutation whose dense result is the output, as the node's
// schema resolved it for the plan (kernel_call.params, core/op_params.h over
// geometry/depth_space.h); DepthToSpace and SpaceToDepth differ only in those.
bool depth_space_supports(const kernel_prep *p) {
    const type_info *x = p->in_type[0];
    return x->rank == 4 && p->out_type[0].rank == 4 && mv_size_ok(x->dtype);
}

onyx_status depth_space_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    const geom_blocks *b;
    TRY(kernel_blocks(c->params, &b));
    bool fits = x->rank == 4;
    for (int k = 0; k < 4 && fits; k++) fits = x->dims[k] == b->in[k];
    if (!fits)
        return onyx_error(ONYX_ERR_RUNTIME, "%s: the plan's blocks are for other dims",
                          c->node->op_type);
    return transposed_copy(c, x, y, 6, b->view, b->perm, c->node->op_type);
}

// ---------------------------------------------------------------- Concat, Split

bool concat_supports(const kernel_prep *p) {
    const type_info *y = &p->out_type[0];
    int axis;
    if (!mv_ranks_ok(p) || !mv_size_ok(y->dtype) || p->n_in < 1 ||
        !mv_axis(attr_int(p->node, "axis", 1), y->rank, &axis))
        return false;
    int64_t at = 0;
    for (int i = 0; i < p->n_in; i++) {
        const type_info *x = p->in_type[i];
        if (!x || x->dtype != y->dtype || x->rank != y->rank) return false;
        for (int k = 0; k < y->rank; k++)
            if (k != axis && x->dims[k] != y->dims[k]) return false;
        at += x->dims[axis];
    }
    return at == y->dims[axis];
}

// Each input is a block of every outer row of the output: one copy per input.
onyx_status concat_run(const kernel_call *c) {
    tensor *y = kernel_output(c, 0);
    int axis;
    if (!mv_axis(attr_int(c->node, "axis", 1), y->rank, &axis))
        return onyx_error(ONYX_ERR_SHAPE, "Concat: axis out of range for rank %d", y->rank);
    int64_t at = 0;
    for (int i = 0; i < c->n_in; i++) {
        const tensor *x = kernel_input(c, i);
        if (!x) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "Concat: input %d is missing", i);
        bool fits = x->dtype == y->dtype && x->rank == y->rank;
        for (int k = 0; fits && k < y->rank; k++) fits = k == axis || x->dims[k] == y->dims[k];
        if (!fits || x->dims[axis] > y->dims[axis] - at)
            return onyx_error(ONYX_ERR_SHAPE, "Concat: input %d does not fit the output", i);
        at += x->dims[axis];
    }
    if (at != y->dims[axis])
        return onyx_error(ONYX_ERR_SHAPE, "Concat: inputs add up to %lld along axis %d, "
                          "expected %lld", (long long)at, axis, (long long)y->dims[axis]);
    if (y->numel == 0) return ONYX_OK;
    int64_t outer = mv_product(y->dims, 0, axis), inner = mv_product(y->dims, axis + 1, y->rank);
    int64_t row = y->dims[axis] * inner, off = 0;
    size_t es = dtype_size(y->dtype);
    for (int i = 0; i < c->n_in; i++) {
        const tensor *x = kernel_input(c, i);
        int64_t len = x->dims[axis] * inner;
        int64_t dims[2] = {outer, len}, ds[2] = {row, 1}, ss[2] = {len, 1};
        TRY(mv_copy(c, (char *)y->data + off * (int64_t)es, x->data, es, 2, dims, ds, ss,
                    "Concat"));
        off += len;
    }
    return ONYX_OK;
}

bool split_supports(const kernel_prep *p) {
    const type_info *x = p->in_type[0];
    int axis;
    if (!mv_ranks_ok(p) || !mv_size_ok(x->dtype) || p->n_out < 1 ||
        !mv_axis(attr_int(p->node, "axis", 0), x->rank, &axis))
        return false;
    int64_t at = 0;
    for (int o = 0; o < p->n_out; o++) {
        if (p->node->outputs[o] < 0) return false; /* its size would have to be derived */
        const type_info *y = &p->out_type[o];
        if (y->dtype != x->dtype || y->rank != x->rank) return false;
        for (int k = 0; k < x->rank; k++)
            if (k != axis && x->dims[k] != y->dims[k]) return false;
        at += y->dims[axis];
    }
    return at == x->dims[axis];
}

// The part sizes are the outputs' own dims along the axis (shapes are all set before the run).
onyx_status split_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    int axis;
    if (!mv_axis(attr_int(c->node, "axis", 0), x->rank, &axis))
        return onyx_error(ONYX_ERR_SHAPE, "Split: axis out of range for rank %d", x->rank);
    int64_t outer = mv_product(x->dims, 0, axis), inner = mv_product(x->dims, axis + 1, x->rank);
    int64_t row = x->dims[axis] * inner, off = 0;
    size_t es = dtype_size(x->dtype);
    for (int o = 0; o < c->n_out; o++) {
        tensor *y = kernel_output(c, o);
        if (!y) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "Split: output %d is missing", o);
        int64_t len = y->rank == x->rank ? y->dims[axis] * inner : -1;
        if (y->dtype != x->dtype || len < 0 || y->numel != outer * len || off + len > row)
            return onyx_error(ONYX_ERR_SHAPE, "Split: output %d does not fit the input", o);
        if (outer == 1 && y->data == (const char *)x->data + off * (int64_t)es) { /* a view */
            off += len;
            continue;
        }
        int64_t dims[2] = {outer, len}, ds[2] = {len, 1}, ss[2] = {row, 1};
        TRY(mv_copy(c, y->data, (const char *)x->data + off * (int64_t)es, es, 2, dims, ds, ss,
                    "Split"));
        off += len;
    }
    return ONYX_OK;
}

// ---------------------------------------------------------------- Slice

bool slice_supports(const kernel_prep *p) {
    return mv_ranks_ok(p) && mv_size_ok(p->in_type[0]->dtype);
}

// The bounds as the node's schema resolved them for the plan (kernel_call.params,
// core/op_params.h over geometry/slice.h); inputs 1..4 stay on the host for that inference,
// which a run whose bounds are not constant does again.
onyx_status slice_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    const geom_slice *sl;
    TRY(kernel_slice(c->params, &sl));
    const int64_t *start = sl->start, *step = sl->step, *len = sl->len;
    bool fits = sl->rank == x->rank && y->rank == x->rank;
    for (int k = 0; k < x->rank && fits; k++)
        fits = x->dims[k] == sl->in[k] && y->dims[k] == len[k];
    if (!fits) return onyx_error(ONYX_ERR_RUNTIME, "Slice: the plan's slice is for other dims");
    if (y->numel == 0) return ONYX_OK;
    int64_t in_st[ONYX_MAX_RANK], out_st[ONYX_MAX_RANK], src_st[ONYX_MAX_RANK], off = 0;
    mv_strides(x->rank, x->dims, in_st);
    mv_strides(y->rank, y->dims, out_st);
    for (int k = 0; k < x->rank; k++) {
        off += start[k] * in_st[k];
        src_st[k] = len[k] > 1 ? step[k] * in_st[k] : 0;
    }
    size_t es = dtype_size(x->dtype);
    const char *from = (const char *)x->data + off * (int64_t)es;
    if (y->data == from) return ONYX_OK; // a view (KF_VIEW, core/exec_view.c): Y is that run
    return mv_copy(c, y->data, from, es, x->rank, y->dims, out_st, src_st, "Slice");
}

// ---------------------------------------------------------------- Tile, Expand

bool tile_supports(const kernel_prep *p) {
    const type_info *x = p->in_type[0], *y = &p->out_type[0];
    if (!mv_ranks_ok(p) || !mv_size_ok(x->dtype) || x->rank != y->rank) return false;
    for (int k = 0; k < x->rank; k++)
        if (x->dims[k] == 0 ? y->dims[k] != 0 : y->dims[k] % x->dims[k] != 0) return false;
    return true;
}

// Each output axis viewed as (repeat, dim): the repeat steps 0 through the input.
onyx_status tile_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (y->numel == 0) return ONYX_OK;
    int r = x->rank;
    if (y->rank != r) return onyx_error(ONYX_ERR_SHAPE, "Tile: output rank differs from input");
    int64_t in_st[CUDA_MAX_RANK], dims[MV_MAX_RANK], ds[MV_MAX_RANK], ss[MV_MAX_RANK];
    mv_strides(r, x->dims, in_st);
    for (int k = 0; k < r; k++) {
        if (x->dims[k] == 0 || y->dims[k] % x->dims[k] != 0)
            return onyx_error(ONYX_ERR_SHAPE, "Tile: output dim %d is no multiple of the input's",
                              k);
        dims[2 * k] = y->dims[k] / x->dims[k];
        dims[2 * k + 1] = x->dims[k];
        ss[2 * k] = 0;
        ss[2 * k + 1] = in_st[k];
    }
    mv_strides(2 * r, dims, ds);
    return mv_copy(c, y->data, x->data, dtype_size(x->dtype), 2 * r, dims, ds, ss, "Tile");
}

// Source strides of x broadcast to y's dims (geometry/broadcast.h); false when x does not
// broadcast to y.
bool bcast_strides(int xr, const int64_t *xd, int yr, const int64_t *yd, int64_t *ss) {
    return geom_broadcast_strides(xr, xd, yr, yd, ss, NULL) == ONYX_OK;
}

bool expand_supports(const kernel_prep *p) {
    const type_info *x = p->in_type[0], *y = &p->out_type[0];
    int64_t ss[CUDA_MAX_RANK];
    return mv_ranks_ok(p) && mv_size_ok(x->dtype) && y->dtype == x->dtype &&
           bcast_strides(x->rank, x->dims, y->rank, y->dims, ss);
}

onyx_status expand_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    int64_t ss[CUDA_MAX_RANK], ds[CUDA_MAX_RANK];
    if (y->rank > CUDA_MAX_RANK || !bcast_strides(x->rank, x->dims, y->rank, y->dims, ss))
        return onyx_error(ONYX_ERR_SHAPE, "Expand: the input does not broadcast to the output");
    if (y->numel == 0) return ONYX_OK;
    mv_strides(y->rank, y->dims, ds);
    return mv_copy(c, y->data, x->data, dtype_size(x->dtype), y->rank, y->dims, ds, ss, "Expand");
}

// ---------------------------------------------------------------- the table

#define IN(i) (1u << (i))

const kernel entries[] = {
    // domain, op, versions, device, dtypes, flags, prepare, run, release, fork, unfork,
    // supports, host_inputs
    {"", "Reshape", 1, 25, DEVICE_CUDA, MV_DT_ALIAS, KF_ALIAS_INPUT0, NULL, alias_run, NULL, NULL,
     NULL, NULL, IN(1)},
    {"", "Flatten", 1, 25, DEVICE_CUDA, MV_DT_ALIAS, KF_ALIAS_INPUT0, NULL, alias_run, NULL, NULL,
     NULL, NULL, 0},
    {"", "Squeeze", 1, 25, DEVICE_CUDA, MV_DT_ALIAS, KF_ALIAS_INPUT0, NULL, alias_run, NULL, NULL,
     NULL, NULL, IN(1)},
    {"", "Unsqueeze", 1, 25, DEVICE_CUDA, MV_DT_ALIAS, KF_ALIAS_INPUT0, NULL, alias_run, NULL,
     NULL, NULL, NULL, IN(1)},
    {"", "Identity", 1, 25, DEVICE_CUDA, MV_DT_ALIAS, KF_ALIAS_INPUT0, NULL, alias_run, NULL,
     NULL, NULL, NULL, 0},
    {"", "Transpose", 1, 25, DEVICE_CUDA, MV_DT_MOVE, KF_VIEW, NULL, transpose_run, NULL, NULL,
     NULL, transpose_supports, 0},
    {"", "Concat", 1, 13, DEVICE_CUDA, MV_DT_MOVE, 0, NULL, concat_run, NULL, NULL, NULL,
     concat_supports, 0},
    {"", "Split", 1, 18, DEVICE_CUDA, MV_DT_MOVE, KF_VIEW, NULL, split_run, NULL, NULL, NULL,
     split_supports, IN(1)},
    {"", "Slice", 1, 13, DEVICE_CUDA, MV_DT_MOVE, KF_VIEW, NULL, slice_run, NULL, NULL, NULL,
     slice_supports, IN(1) | IN(2) | IN(3) | IN(4)},
    {"", "Tile", 1, 13, DEVICE_CUDA, MV_DT_MOVE, 0, NULL, tile_run, NULL, NULL, NULL,
     tile_supports, IN(1) | IN(2)},
    {"", "Expand", 8, 13, DEVICE_CUDA, MV_DT_MOVE, 0, NULL, expand_run, NULL, NULL, NULL,
     expand_supports, IN(1)},
    {"", "DepthToSpace", 1, 28, DEVICE_CUDA, MV_DT_MOVE, 0, NULL, depth_space_run, NULL, NULL,
     NULL, depth_space_supports, 0},
    {"", "SpaceToDepth", 1, 28, DEVICE_CUDA, MV_DT_MOVE, 0, NULL, depth_space_run, NULL, NULL,
     NULL, depth_space_supports, 0},
    {"", "Gather", 1, 13, DEVICE_CUDA, MV_DT_MOVE, KF_VIEW, NULL, mv_gather_run, NULL, NULL, NULL,
     mv_gather_supports, 0},
    {"", "GatherElements", 11, 13, DEVICE_CUDA, MV_DT_MOVE, 0, NULL, mv_gather_elements_run, NULL,
     NULL, NULL, mv_gather_elements_supports, 0},
    {"", "GatherND", 11, 13, DEVICE_CUDA, MV_DT_MOVE, 0, NULL, mv_gather_nd_run, NULL, NULL, NULL,
     mv_gather_nd_supports, 0},
    {"", "ScatterElements", 11, 18, DEVICE_CUDA, MV_DT_MOVE, 0, NULL, mv_scatter_elements_run,
     NULL, NULL, NULL, mv_scatter_elements_supports, 0},
    {"", "Scatter", 9, 11, DEVICE_CUDA, MV_DT_MOVE, 0, NULL, mv_scatter_elements_run, NULL, NULL,
     NULL, mv_scatter_elements_supports, 0},
    {"", "ScatterND", 11, 18, DEVICE_CUDA, MV_DT_MOVE, 0, NULL, mv_scatter_nd_run, NULL, NULL,
     NULL, mv_scatter_nd_supports, 0},
    {"", "Pad", 1, 25, DEVICE_CUDA, MV_DT_MOVE, 0, NULL, mv_pad_run, NULL, NULL, NULL,
     mv_pad_supports, IN(1) | IN(2) | IN(3)},
    {"", "Trilu", 14, 14, DEVICE_CUDA, MV_DT_MOVE, 0, NULL, mv_trilu_run, NULL, NULL, NULL,
     mv_trilu_supports, IN(1)},
    {"", "Resize", 10, 19, DEVICE_CUDA, DT_FLOATS, 0, mv_resize_prepare, mv_resize_run,
     mv_resize_release, NULL, NULL, mv_resize_supports, IN(1) | IN(2) | IN(3)},
};

#undef IN

} // namespace

extern "C" const kernel *cuda_family_movement(size_t *count) {
    *count = sizeof entries / sizeof entries[0];
    return entries;
}

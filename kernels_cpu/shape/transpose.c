/* CPU kernels of Transpose and of DepthToSpace / SpaceToDepth, which are transposes of a 6-D
 * view (the plan's, core/op_params.h); all go through the strided copy engine (tiled when the
 * innermost axes swap). A Transpose between an opaque tensor (channels last, core/fuse.h) and the
 * plain one of the same bytes moves nothing. */
#include <string.h>

#include "core/fuse_chain.h"
#include "geometry/perm.h"
#include "ops/shape_common.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/move.h"
#include "kernels_cpu/common/opaque.h"

static const char relabel_marker = 0;

/* kernel.takes_chain of Transpose, the rule its prepare follows: a chain of layouts alone, with
 * X opaque and a perm that puts its channels last, or Y opaque and one that puts them first. */
bool cpu_transpose_takes_chain(const kernel_prep *p) {
    const fuse_chain *f = p->fused;
    if (!f) return true;
    if (!cpu_chain_layout_only(f)) return false;
    if (!f->opaque_in0 && !f->opaque_out0) return true;
    int64_t perm[ONYX_MAX_RANK];
    int r = p->in_type[0] ? p->in_type[0]->rank : -1;
    return f->opaque_in0 != f->opaque_out0 && r >= 3 && node_transpose_perm_ok(p->node, r, perm) &&
           geom_perm_moves_channels(perm, r, f->opaque_in0);
}

/* A non-NULL state where the fusion pass made X opaque and the perm puts its channels last, or
 * Y opaque and the perm puts them first: Y's bytes are then X's. */
onyx_status cpu_transpose_prepare(const kernel_prep *p, void **state) {
    *state = NULL;
    if (!cpu_transpose_takes_chain(p))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "an opaque-layout Transpose takes no chain but "
                          "its layouts, and must put the channels of an opaque input last, or of "
                          "a plain input first");
    const fuse_chain *f = p->fused;
    if (f && (f->opaque_in0 || f->opaque_out0)) *state = (void *)&relabel_marker;
    return ONYX_OK;
}

void cpu_transpose_release(void *state) { (void)state; /* the marker owns nothing */ }

onyx_status cpu_transpose_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (c->state) { /* the same bytes: a view, or one copy */
        if (y->data != x->data) memcpy(y->data, x->data, x->nbytes);
        return ONYX_OK;
    }
    int64_t perm[ONYX_MAX_RANK];
    TRY(node_transpose_perm(c->node, x->rank, perm));
    if (y->data == x->data && x->numel > 0) /* a view (KF_VIEW): the perm moves only dims of 1 */
        return ONYX_OK;
    cpu_move_begin(y);
    cpu_transpose(y->data, x->data, cpu_move_esize(x), x->rank, x->dims, perm);
    return cpu_move_end(y);
}

/* DepthToSpace and SpaceToDepth alike: X read as the plan's 6-D view, permuted. */
onyx_status cpu_depth_space_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    const geom_blocks *b;
    TRY(kernel_blocks(c->params, &b));
    bool fits = x->rank == 4 && y->rank == 4;
    for (int k = 0; k < 4 && fits; k++) fits = x->dims[k] == b->in[k] && y->dims[k] == b->out[k];
    if (!fits)
        return onyx_error(ONYX_ERR_RUNTIME, "the plan's depth/space blocks are for other dims");
    cpu_move_begin(y);
    cpu_transpose(y->data, x->data, cpu_move_esize(x), 6, b->view, b->perm);
    return cpu_move_end(y);
}

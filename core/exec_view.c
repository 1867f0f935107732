/* Outputs that are views: a Transpose that only moves dims of 1, a Gather of one constant index
 * and a Split, along an axis after dims of 1, and a Slice that keeps whole inner axes (its bounds
 * as its schema resolved them for the plan, geom_slice_contiguous) give outputs that are one
 * contiguous run of their input's bytes. The memory planner lets such an output point into its
 * input instead of copying (KF_VIEW kernels leave an output alone when it already is that run),
 * on any device: a view is an offset in the device's arena. */
#include "core/exec_view.h"

#include <string.h>

#include "geometry/axes.h"
#include "geometry/perm.h"
#include "geometry/slice.h"

static bool is_op(const graph_node *n, const char *op) {
    return !*n->domain && !strcmp(n->op_type, op);
}

static bool ones_before(const type_info *t, int axis) {
    for (int k = 0; k < axis; k++)
        if (t->dims[k] != 1) return false;
    return true;
}

static bool normal_axis(int64_t axis, int rank, int *out) {
    return geom_axis(axis, rank, "axis", out, NULL) == ONYX_OK;
}

static bool elements(const type_info *t, int from, int64_t *out) {
    int64_t n = 1;
    for (int k = from; k < t->rank; k++) {
        if (t->dims[k] < 0 || (t->dims[k] > 0 && n > INT64_MAX / t->dims[k])) return false;
        n *= t->dims[k];
    }
    *out = n;
    return true;
}

/* A Transpose whose perm keeps the dims other than 1 in their order moves no byte. */
static bool transpose_keeps_order(const graph_node *node, const type_info *in) {
    int64_t perm[ONYX_MAX_RANK];
    if (!node_transpose_perm_ok(node, in->rank, perm)) return false;
    int64_t last = -1;
    for (int k = 0; k < in->rank; k++) {
        if (in->dims[perm[k]] == 1) continue;
        if (perm[k] < last) return false;
        last = perm[k];
    }
    return true;
}

/* Gather's one constant index along an axis after dims of 1: the element offset of its slice. */
static bool gather_slice(const plan *p, const graph_node *node, const type_info *in,
                         int64_t *at) {
    int axis;
    if (node->n_inputs != 2 || node->inputs[1] < 0 ||
        !normal_axis(attr_int(node, "axis", 0), in->rank, &axis) || !ones_before(in, axis))
        return false;
    const plan_value *iv = &p->vals[node->inputs[1]];
    if (iv->device != DEVICE_CPU) iv = &p->vals[iv->source]; /* a device's copy: the host's */
    const tensor *idx = iv->where == ST_CONST && iv->device == DEVICE_CPU ? iv->constant : NULL;
    if (!idx || idx->numel != 1 || (idx->dtype != ONYX_INT64 && idx->dtype != ONYX_INT32))
        return false;
    int64_t i = idx->dtype == ONYX_INT64 ? *(const int64_t *)idx->data
                                         : *(const int32_t *)idx->data;
    int64_t dim = in->dims[axis], inner;
    if (i < 0) i += dim;
    if (i < 0 || i >= dim || !elements(in, axis + 1, &inner)) return false; /* the kernel says */
    *at = i * inner;
    return true;
}

/* Split's output o along an axis after dims of 1: the element offset where it starts (the
 * parts before it summed within the input's `total` elements). */
static bool split_part(const plan *p, const graph_node *node, int o, const type_info *in,
                       int64_t total, int64_t *at) {
    int axis;
    if (!normal_axis(attr_int(node, "axis", 0), in->rank, &axis) || !ones_before(in, axis))
        return false;
    int64_t sum = 0;
    for (int j = 0; j < o; j++) {
        int64_t n;
        if (node->outputs[j] < 0 || !type_is_static(&p->vals[node->outputs[j]].type) ||
            !elements(&p->vals[node->outputs[j]].type, 0, &n) || n > total - sum)
            return false;
        sum += n;
    }
    *at = sum;
    return true;
}

/* A Transpose between an opaque tensor (channels last) and the plain one of the same bytes, as
 * the fusion pass makes them (core/fuse.c, LAY_TO_LAST / LAY_FROM_LAST). */
static bool transpose_relabels(const graph_node *node, const plan_value *in,
                               const plan_value *out) {
    int64_t perm[ONYX_MAX_RANK];
    int r = in->type.rank;
    if (in->channels_last == out->channels_last || !is_op(node, "Transpose") || r < 3)
        return false;
    if (!node_transpose_perm_ok(node, r, perm)) return false;
    return geom_perm_moves_channels(perm, r, in->channels_last);
}

bool plan_view_offset(const plan *p, const graph_node *node, const op_params *params, int o,
                      size_t *offset) {
    if (node->n_inputs < 1 || node->inputs[0] < 0 || node->outputs[o] < 0) return false;
    const plan_value *in = &p->vals[node->inputs[0]], *out = &p->vals[node->outputs[o]];
    size_t esize;
    if (o == 0 && type_is_static(&in->type) && in->device == out->device &&
        transpose_relabels(node, in, out)) {
        *offset = 0;
        return true;
    }
    if (!type_is_static(&in->type) || !type_is_static(&out->type) ||
        in->type.dtype != out->type.dtype || in->type.dtype == ONYX_STRING || in->channels_last ||
        out->channels_last || in->device != out->device ||
        dtype_packed_bits(in->type.dtype) || /* whole bytes (2 float6s take 2 bytes, not 1.5) */
        !dtype_storage_size(in->type.dtype, 1, &esize))
        return false;
    int64_t at, in_n, out_n;
    if (!elements(&in->type, 0, &in_n) || !elements(&out->type, 0, &out_n)) return false;
    if (is_op(node, "Transpose") && o == 0) {
        if (!transpose_keeps_order(node, &in->type)) return false;
        at = 0;
    } else if (is_op(node, "Gather") && o == 0) {
        if (!gather_slice(p, node, &in->type, &at)) return false;
    } else if (is_op(node, "Split")) {
        if (!split_part(p, node, o, &in->type, in_n, &at)) return false;
    } else if (is_op(node, "Slice") && o == 0) {
        const geom_slice *s = op_params_slice(params);
        if (!s || !geom_slice_contiguous(s, &at)) return false;
    } else {
        return false;
    }
    if (out_n > in_n - at) return false; /* types that do not agree: the kernel says so */
    *offset = (size_t)at * esize;
    return true;
}

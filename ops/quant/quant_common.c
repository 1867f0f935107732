/* Scale/zero-point granularity shared by QuantizeLinear and DequantizeLinear. */
#include "ops/quant/quant_common.h"

onyx_status quant_layout_of(int xrank, const int64_t *xdims, int srank, const int64_t *sdims,
                            int64_t axis, int64_t block_size, const char *what,
                            quant_layout *out) {
    quant_layout l = {.outer = 1, .D = 1, .inner = 1};
    int64_t sn, xn;
    /* declared shapes may hold any dims: products are checked */
    if (!shape_numel(srank, sdims, &sn) || !shape_numel(xrank, xdims, &xn))
        return onyx_error(ONYX_ERR_SHAPE, "x or %s has too many elements", what);
    if (block_size < 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "block_size is %lld, expected >= 0",
                          (long long)block_size);
    if (sn == 1 && (!block_size || srank <= 1)) {
        l.per_tensor = true;
        l.inner = xn;
        *out = l;
        return ONYX_OK;
    }
    if (axis < -xrank || axis >= xrank)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "axis %lld is out of range for rank %d",
                          (long long)axis, xrank);
    int ax = (int)(axis < 0 ? axis + xrank : axis);
    /* (separately they may overflow where x has a zero dim elsewhere) */
    if (!shape_numel(ax, xdims, &l.outer) ||
        !shape_numel(xrank - ax - 1, xdims + ax + 1, &l.inner))
        return onyx_error(ONYX_ERR_SHAPE, "x has too many elements");
    l.D = xdims[ax];
    if (!block_size) {
        if (srank != 1 || sdims[0] != l.D)
            return onyx_error(ONYX_ERR_SHAPE, "%s has %d dims and %lld elements; expected a "
                              "scalar or a 1-D tensor of %lld (x's axis %d)", what, srank,
                              (long long)sn, (long long)l.D, ax);
        *out = l;
        return ONYX_OK;
    }
    l.block = block_size;
    bool ok = srank == xrank;
    for (int d = 0; ok && d < xrank; d++)
        ok = sdims[d] == (d == ax ? quant_blocks(xdims[d], block_size) : xdims[d]);
    if (!ok)
        return onyx_error(ONYX_ERR_SHAPE, "%s does not fit blocked quantization: expected x's "
                          "shape with axis %d of ceil(%lld / %lld)", what, ax,
                          (long long)l.D, (long long)block_size);
    *out = l;
    return ONYX_OK;
}

static bool known(const type_info *t) {
    if (!t || t->rank < 0) return false;
    for (int d = 0; d < t->rank; d++)
        if (t->dims[d] < 0) return false;
    return true;
}

/* -1 when the count overflows */
static int64_t numel(const type_info *t) {
    int64_t n;
    return shape_numel(t->rank, t->dims, &n) ? n : -1;
}

onyx_status quant_infer_check(infer_ctx *c, int64_t axis, int64_t block_size) {
    const type_info *x = c->in[0], *s = c->in[1];
    const type_info *z = c->n_in > 2 ? c->in[2] : NULL;
    /* a scalar scale may come with a [1] zero point and vice versa */
    if (z && s->rank >= 0 && z->rank >= 0 && !(known(s) && known(z) && numel(s) == 1 &&
                                              numel(z) == 1)) {
        bool same = z->rank == s->rank;
        for (int d = 0; same && d < s->rank; d++)
            same = s->dims[d] < 0 || z->dims[d] < 0 || s->dims[d] == z->dims[d];
        if (!same)
            return onyx_error(ONYX_ERR_SHAPE, "zero point (input 2) and scale (input 1) have "
                              "different shapes");
    }
    if (!known(x) || !known(s)) return ONYX_OK;
    quant_layout l;
    return quant_layout_of(x->rank, x->dims, s->rank, s->dims, axis, block_size,
                           "scale (input 1)", &l);
}

/* Pad's geometry (geometry/pads.h). */
#include "geometry/pads.h"

#include "geometry/axes.h"

onyx_status geom_pads_place(const int64_t *pads, size_t n_pads, const int64_t *axes,
                            size_t n_axes, int rank, int64_t *begin, int64_t *end, geom_msg *msg) {
    if (rank < 0 || rank > GEOM_MAX_RANK)
        return geom_fail(msg, ONYX_ERR_SHAPE, "rank %d, expected 0..%d", rank, GEOM_MAX_RANK);
    int iax[GEOM_MAX_RANK];
    if (!axes) {
        n_axes = (size_t)rank;
        for (int k = 0; k < rank; k++) iax[k] = k;
    }
    if (n_pads != 2 * n_axes)
        return geom_fail(msg, ONYX_ERR_INVALID_MODEL, "pads has %zu values, expected %zu (2 per "
                         "axis)", n_pads, 2 * n_axes);
    if (axes) {
        onyx_status st = geom_axes(axes, n_axes, rank, "axes", iax, msg);
        if (st != ONYX_OK) return st;
    }
    for (int k = 0; k < rank; k++) begin[k] = end[k] = 0;
    for (size_t i = 0; i < n_axes; i++) {
        begin[iax[i]] = pads[i];
        end[iax[i]] = pads[i + n_axes];
    }
    return ONYX_OK;
}

onyx_status geom_pad_dim(int64_t dim, int64_t begin, int64_t end, int64_t *out, geom_msg *msg) {
    /* pads come from the model: keep the sum in range before adding */
    if (begin > INT64_MAX / 4 || end > INT64_MAX / 4)
        return geom_fail(msg, ONYX_ERR_SHAPE, "pads %lld and %lld are too large",
                         (long long)begin, (long long)end);
    if (begin < -dim || end < -dim || dim + begin + end < 0)
        return geom_fail(msg, ONYX_ERR_SHAPE, "pads %lld and %lld on a dim of %lld give a "
                         "negative size", (long long)begin, (long long)end, (long long)dim);
    *out = dim + begin + end;
    return ONYX_OK;
}

void geom_pad_interior(int64_t dim, int64_t begin, int64_t end, int64_t *at, int64_t *crop,
                       int64_t *kept) {
    int64_t crop_lo = begin < 0 ? -begin : 0, crop_hi = end < 0 ? -end : 0;
    *at = begin > 0 ? begin : 0;
    *crop = crop_lo;
    *kept = dim - crop_lo - crop_hi;
}

bool geom_pads_known(const geom_pads *p) {
    for (int k = 0; k < p->rank; k++)
        if (p->in[k] < 0) return false;
    return true;
}

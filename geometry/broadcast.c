/* Numpy broadcasting of shapes (geometry/broadcast.h). */
#include "geometry/broadcast.h"

bool geom_broadcast_dim(int64_t a, int64_t b, int64_t *out) {
    if (a == 1) *out = b;
    else if (b == 1 || b == a) *out = a;
    else if (a < 0) *out = b; /* an unknown a must be 1 or b: b either way */
    else if (b < 0) *out = a;
    else return false;
    return true;
}

onyx_status geom_broadcast_shapes(int ra, const int64_t *a, int rb, const int64_t *b, int *rank,
                                  int64_t *dims, geom_msg *msg) {
    int r = ra > rb ? ra : rb;
    if (ra < 0 || rb < 0 || r > GEOM_MAX_RANK)
        return geom_fail(msg, ONYX_ERR_SHAPE, "ranks %d and %d: expected 0..%d", ra, rb,
                         GEOM_MAX_RANK);
    int64_t out[GEOM_MAX_RANK];
    for (int k = 0; k < r; k++) {
        int ia = k - (r - ra), ib = k - (r - rb);
        int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        if (!geom_broadcast_dim(da, db, &out[k])) {
            char sa[160], sb[160];
            return geom_fail(msg, ONYX_ERR_SHAPE,
                             "shapes %s and %s do not broadcast (dim %d: %lld vs %lld)",
                             geom_shape_str(ra, a, sa, sizeof sa),
                             geom_shape_str(rb, b, sb, sizeof sb), k, (long long)da,
                             (long long)db);
        }
    }
    for (int k = 0; k < r; k++) dims[k] = out[k];
    *rank = r;
    return ONYX_OK;
}

onyx_status geom_broadcast_strides(int in_rank, const int64_t *in_dims, int out_rank,
                                   const int64_t *out_dims, int64_t *strides, geom_msg *msg) {
    char si[160], so[160];
    if (in_rank < 0 || in_rank > out_rank)
        return geom_fail(msg, ONYX_ERR_SHAPE, "shape %s has a higher rank than %s",
                         geom_shape_str(in_rank, in_dims, si, sizeof si),
                         geom_shape_str(out_rank, out_dims, so, sizeof so));
    int64_t s = 1;
    for (int d = out_rank - 1; d >= 0; d--) {
        int id = d - (out_rank - in_rank);
        int64_t dim = id >= 0 ? in_dims[id] : 1;
        if (dim != out_dims[d] && dim != 1)
            return geom_fail(msg, ONYX_ERR_SHAPE, "shape %s does not broadcast to %s",
                             geom_shape_str(in_rank, in_dims, si, sizeof si),
                             geom_shape_str(out_rank, out_dims, so, sizeof so));
        strides[d] = dim == 1 ? 0 : s;
        s *= dim;
    }
    return ONYX_OK;
}
